#pragma once
// Every attribute is honoured or refused: after conversion, each attribute of a
// default-domain node must be one the op's schema defines at the model's opset, and one
// that Lathe's rules read (engine/graph/op_attributes.def lists the few they do not: an
// inert one is accepted, another only at its schema default).

#include <cstdint>
#include <onnx/onnx_pb.h>

namespace lathe::frontend {

// Throws NodeRefusal (version_upgrade.h) for the first attribute that is not honoured.
// Needs the ONNX library's schema registry, so it runs where the library's steps run.
void checkAttributesHonoured(const onnx::ModelProto& model, std::int64_t opset);

} // namespace lathe::frontend
