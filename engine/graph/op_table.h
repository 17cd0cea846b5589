#pragma once
// The op table (ops.def), read by the importer, verifier, passes, CLI and GUI.

#include <span>
#include <string_view>

namespace lathe::graph {

// Fixed op categories; the GUI gives each one colour everywhere.
enum class OpCategory {
  Convolution,
  MatMul,
  Elementwise,
  Normalization,
  Reduction,
  DataMovement,
  ControlFlow
};

// How an op takes part in fusion.
enum class FusionRole {
  Anchor,      // heavy op that starts a fused kernel (Conv, Gemm, MatMul)
  Elementwise, // may join an anchor's epilogue
  Opaque,      // always its own kernel
};

struct OpInfo {
  std::string_view name;
  OpCategory category;
  FusionRole fusion;
  int minInputs, maxInputs; // max -1 = variadic
  int minOutputs, maxOutputs;
  std::string_view summary;
};

// nullptr for ops Lathe does not know.
const OpInfo* findOp(std::string_view name);
// Ops of a domain: the default ONNX domain (empty) or Lathe's own ops (kLatheDomain), which
// only Lathe's passes create (e.g. lathe::ConvNCHWc from the layout pass).
const OpInfo* findOp(std::string_view domain, std::string_view name);
inline constexpr std::string_view kLatheDomain = "lathe";
std::span<const OpInfo> allOps();

// A schema attribute (opset 17) that no rule of Lathe's reads (op_attributes.def).
enum class AttributeUse {
  Inert,       // cannot change an inference result: any value is accepted
  Unsupported, // a value other than the schema's default is refused
};
struct UnreadAttribute {
  std::string_view op, attribute;
  AttributeUse use;
  std::string_view reason;
};
// nullptr when Lathe's rules read the attribute (or the op has no such attribute).
const UnreadAttribute* findUnreadAttribute(std::string_view op, std::string_view attribute);
std::string_view categoryName(OpCategory category); // "convolution", "data movement", ...

} // namespace lathe::graph
