#pragma once
#include "engine/graph/tensor_data.h"

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace lathe::graph {

class Graph;
using GraphPtr = std::shared_ptr<Graph>;

// A typed node attribute, as in ONNX: one of ten kinds.
using AttributeValue =
    std::variant<std::int64_t, float, std::string, TensorData, GraphPtr, std::vector<std::int64_t>,
                 std::vector<float>, std::vector<std::string>, std::vector<TensorData>,
                 std::vector<GraphPtr>>;

enum class AttrKind { Int, Float, String, Tensor, Graph, Ints, Floats, Strings, Tensors, Graphs };

struct Attribute {
  AttributeValue value;

  AttrKind kind() const { return static_cast<AttrKind>(value.index()); }
  template <typename T>
  bool is() const {
    return std::holds_alternative<T>(value);
  }
  template <typename T>
  const T& as() const {
    return std::get<T>(value);
  }
  // The subgraphs this attribute holds (kind Graph or Graphs); empty for other kinds.
  std::vector<const Graph*> graphs() const;
};

// On If, Loop and Scan: the names of the enclosing graphs' values that the subgraphs read.
// The node takes those values as extra inputs after its ONNX inputs, in this order.
inline constexpr const char* kCapturesAttribute = "captures";

const char* attrKindName(AttrKind kind);
// Structural equality; subgraphs compare by their printed form.
bool operator==(const Attribute& a, const Attribute& b);

} // namespace lathe::graph
