#include "engine/graph/attribute.h"

#include "engine/graph/printer.h"

namespace lathe::graph {

const char* attrKindName(AttrKind kind) {
  static const char* names[] = {"int",  "float",  "string",  "tensor",  "graph",
                                "ints", "floats", "strings", "tensors", "graphs"};
  return names[static_cast<int>(kind)];
}

bool operator==(const Attribute& a, const Attribute& b) {
  if (a.kind() != b.kind())
    return false;
  switch (a.kind()) {
  case AttrKind::Tensor:
    return a.as<TensorData>().sameContents(b.as<TensorData>());
  case AttrKind::Tensors: {
    const auto& x = a.as<std::vector<TensorData>>();
    const auto& y = b.as<std::vector<TensorData>>();
    if (x.size() != y.size())
      return false;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (!x[i].sameContents(y[i]))
        return false;
    return true;
  }
  case AttrKind::Float: // bitwise, so that NaN attributes compare equal to themselves
  case AttrKind::Floats:
  case AttrKind::Graph:
  case AttrKind::Graphs:
    return printAttribute(a, {-1}) == printAttribute(b, {-1});
  case AttrKind::Int:
    return a.as<std::int64_t>() == b.as<std::int64_t>();
  case AttrKind::String:
    return a.as<std::string>() == b.as<std::string>();
  case AttrKind::Ints:
    return a.as<std::vector<std::int64_t>>() == b.as<std::vector<std::int64_t>>();
  case AttrKind::Strings:
    return a.as<std::vector<std::string>>() == b.as<std::vector<std::string>>();
  }
  return false;
}

std::vector<const Graph*> Attribute::graphs() const {
  if (const auto* g = std::get_if<GraphPtr>(&value))
    return {g->get()};
  std::vector<const Graph*> out;
  if (const auto* gs = std::get_if<std::vector<GraphPtr>>(&value))
    for (const GraphPtr& g : *gs)
      out.push_back(g.get());
  return out;
}

} // namespace lathe::graph
