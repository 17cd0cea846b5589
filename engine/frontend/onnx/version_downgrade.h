#pragma once
// Models from current exporters (opsets 18 to 21, IR 9 and 10) are newer than Debian's
// ONNX library (opset 17, IR 8), and Lathe's rules implement each op's opset-17 meaning.
// Each node is brought down to its opset-17 form where that keeps its meaning (an axes
// input that is a constant becomes the attribute it was; an attribute at its default is
// dropped; Gelu becomes the opset-17 ops it is made of) and refused by op, version and
// reason otherwise. The library's checker and shape inference then see an opset-17 model.

#include <cstdint>
#include <onnx/onnx_pb.h>
#include <string>

namespace lathe::frontend {

// Newest default-domain opset that can be brought down to 17.
constexpr std::int64_t kNewestKnownOpset = 21;

// Ops added after opset 17 that opset-17 ops express (Gelu, Mish).
bool expressedByOpset17Ops(const std::string& op);

// Rewrites every default-domain node of `model` (subgraphs included) from `sourceOpset`
// (18..21) to its opset-17 form, and sets the model's opset to 17 and IR version to 8.
// Throws NodeRefusal (version_upgrade.h) for a node that cannot be expressed at opset 17.
void downgradeNodesToOpset17(onnx::ModelProto& model, std::int64_t sourceOpset);

} // namespace lathe::frontend
