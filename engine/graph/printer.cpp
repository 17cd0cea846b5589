#include "engine/graph/printer.h"

#include "engine/support/diagnostics.h"

#include <charconv>
#include <cstring>
#include <sstream>

namespace lathe::graph {
namespace {

bool isBareChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '$';
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c >= 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

template <typename F>
std::string formatFloat(F value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  std::string s(buf, end);
  if (s == "inf" || s == "-inf" || s == "nan" || s == "-nan")
    return s == "-nan" ? "nan" : s;
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0"; // keep floats distinguishable from ints
  return s;
}

std::string formatElement(const TensorData& t, std::int64_t i) {
  switch (t.dtype()) {
  case DType::F32:
    return formatFloat(t.values<float>()[i]);
  case DType::F64:
    return formatFloat(t.values<double>()[i]);
  case DType::F16:
  case DType::BF16: {
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%04x", unsigned(t.values<std::uint16_t>()[i]));
    return buf;
  }
  case DType::Bool:
    return t.values<std::uint8_t>()[i] ? "true" : "false";
  case DType::U64:
    return std::to_string(t.values<std::uint64_t>()[i]);
  default:
    return std::to_string(t.elementAsInt(i));
  }
}

std::string dimsText(const std::vector<std::int64_t>& dims) {
  std::string s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i)
    s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

class Printer {
public:
  explicit Printer(const PrintOptions& options) : options_(options) {}

  std::string tensorBody(const TensorData& t) {
    if (t.isElided() || (options_.inlineElements >= 0 && t.numElements() > options_.inlineElements))
      return "elided";
    std::string s = "[";
    for (std::int64_t i = 0; i < t.numElements(); ++i)
      s += (i ? ", " : "") + formatElement(t, i);
    return s + "]";
  }

  std::string tensor(const TensorData& t) {
    return "tensor<" + std::string(dtypeName(t.dtype())) + dimsText(t.dims()) + "> " +
           tensorBody(t);
  }

  std::string type(const TensorType& t) {
    std::string out(dtypeName(t.dtype));
    if (!t.shape)
      return t.dtype == DType::Undefined ? out : out + "[*]";
    out += '[';
    for (std::size_t i = 0; i < t.shape->size(); ++i) {
      const Dim& d = (*t.shape)[i];
      out += i ? "," : "";
      if (!d.isSymbolic())
        out += toString(d);
      else // a symbol that looks like a number or '?' must be quoted to read back
        out += (d.symbol[0] >= '0' && d.symbol[0] <= '9') || d.symbol == "?" ? quote(d.symbol)
                                                                             : printName(d.symbol);
    }
    return out + ']';
  }

  std::string attribute(const Attribute& a, int indent) {
    auto list = [&](const auto& items, const char* emptyName, auto&& fmt) {
      if (items.empty())
        return std::string(emptyName) + "[]";
      std::string s = "[";
      for (std::size_t i = 0; i < items.size(); ++i)
        s += (i ? ", " : "") + fmt(items[i]);
      return s + "]";
    };
    switch (a.kind()) {
    case AttrKind::Int:
      return std::to_string(a.as<std::int64_t>());
    case AttrKind::Float:
      return formatFloat(a.as<float>());
    case AttrKind::String:
      return quote(a.as<std::string>());
    case AttrKind::Tensor:
      return tensor(a.as<TensorData>());
    case AttrKind::Graph:
      return graphBlock(*a.as<GraphPtr>(), indent);
    case AttrKind::Ints:
      return list(a.as<std::vector<std::int64_t>>(), "ints",
                  [](std::int64_t v) { return std::to_string(v); });
    case AttrKind::Floats:
      return list(a.as<std::vector<float>>(), "floats", [](float v) { return formatFloat(v); });
    case AttrKind::Strings:
      return list(a.as<std::vector<std::string>>(), "strings",
                  [](const std::string& v) { return quote(v); });
    case AttrKind::Tensors:
      return list(a.as<std::vector<TensorData>>(), "tensors",
                  [&](const TensorData& t) { return tensor(t); });
    case AttrKind::Graphs:
      return list(a.as<std::vector<GraphPtr>>(), "graphs",
                  [&](const GraphPtr& g) { return graphBlock(*g, indent); });
    }
    return "?";
  }

  std::string valueRef(const Value* v) { return v ? "%" + printName(v->name()) : "_"; }

  std::string node(const Node& n, int indent) {
    std::string s;
    for (std::size_t i = 0; i < n.outputs().size(); ++i) {
      const Value* out = n.outputs()[i];
      s += i ? ", " : "";
      s += out ? valueRef(out) + ": " + type(out->type) : "_";
    }
    s += " = ";
    if (!n.domain().empty())
      s += printName(n.domain()) + "::";
    s += printName(n.opType()) + "(";
    for (std::size_t i = 0; i < n.inputs.size(); ++i)
      s += (i ? ", " : "") + valueRef(n.inputs[i]);
    s += ")";
    if (!n.attributes.empty()) {
      s += " {";
      bool first = true;
      for (const auto& [key, attr] : n.attributes) {
        s += (first ? "" : ", ") + printName(key) + " = " + attribute(attr, indent);
        first = false;
      }
      s += "}";
    }
    if (!n.name.empty())
      s += " @" + printName(n.name);
    return s;
  }

  // The graph's body lines, each indented by `indent` spaces.
  void body(const Graph& g, int indent, std::ostringstream& out) {
    const std::string pad(indent, ' ');
    for (const Value* in : g.inputs)
      out << pad << "input " << valueRef(in) << ": " << type(in->type) << "\n";
    for (const auto& v : g.values()) {
      if (v->kind() == ValueKind::Capture)
        out << pad << "capture " << valueRef(v.get()) << ": " << type(v->type) << "\n";
    }
    for (const auto& v : g.values()) {
      if (!v->isConstant())
        continue;
      const TensorData& t = v->constant();
      out << pad << "const " << valueRef(v.get()) << ": " << type(v->type) << " = "
          << tensorBody(t);
      if (tensorBody(t) == "elided")
        out << "  # " << t.numElements() * static_cast<std::int64_t>(dtypeSize(t.dtype()))
            << " bytes";
      out << "\n";
    }
    int openGroup = -1;
    for (const auto& n : g.nodes()) {
      if (n->group != openGroup) {
        if (openGroup >= 0)
          out << pad << "}\n";
        openGroup = n->group;
        if (openGroup >= 0) {
          const FusedGroup& grp = g.groups().at(openGroup);
          out << pad << "group @" << printName(grp.name) << " " << quote(grp.pattern) << " {\n";
        }
      }
      const std::string nodePad(indent + (openGroup >= 0 ? 2 : 0), ' ');
      out << nodePad << node(*n, indent + (openGroup >= 0 ? 2 : 0)) << "\n";
    }
    if (openGroup >= 0)
      out << pad << "}\n";
    for (const Value* o : g.outputs)
      out << pad << "output " << valueRef(o) << "\n";
  }

  std::string graphBlock(const Graph& g, int indent) {
    std::ostringstream out;
    out << "graph @" << printName(g.name) << " {\n";
    body(g, indent + 2, out);
    out << std::string(indent, ' ') << "}";
    return out.str();
  }

  std::string topLevel(const Graph& g) {
    std::ostringstream out;
    out << "graph @" << printName(g.name) << " opset " << g.opsetVersion << " {\n";
    body(g, 2, out);
    out << "}\n";
    return out.str();
  }

private:
  const PrintOptions& options_;
};

} // namespace

std::string printName(const std::string& name) {
  if (name.empty())
    return "\"\"";
  for (char c : name)
    if (!isBareChar(c))
      return quote(name);
  return name;
}

std::string printGraph(const Graph& graph, const PrintOptions& options) {
  return Printer(options).topLevel(graph);
}

std::string printNode(const Node& node, const PrintOptions& options) {
  return Printer(options).node(node, 0);
}

std::string printAttribute(const Attribute& attr, const PrintOptions& options) {
  return Printer(options).attribute(attr, 0);
}

} // namespace lathe::graph
