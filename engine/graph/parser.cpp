#include "engine/graph/parser.h"

#include "engine/support/diagnostics.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace lathe::graph {
namespace {

enum class Tok { Word, String, Punct, End };

struct Token {
  Tok kind = Tok::End;
  std::string text; // word, unescaped string, or the punctuation character
  int line = 0, column = 0;
};

bool isWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '$';
}

class Lexer {
public:
  Lexer(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  [[noreturn]] void fail(int line, int column, const std::string& message) const {
    throw Error(ErrorKind::Invalid,
                "line " + std::to_string(line) + ", column " + std::to_string(column) + ": " +
                    message,
                {source_, {}, {}});
  }

  Token next() {
    skipSpaceAndComments();
    Token t;
    t.line = line_;
    t.column = static_cast<int>(pos_ - lineStart_) + 1;
    if (pos_ >= text_.size())
      return t;
    const char c = text_[pos_];
    if (c == '"') {
      t.kind = Tok::String;
      t.text = readString(t);
      return t;
    }
    const bool negativeNumber =
        c == '-' && pos_ + 1 < text_.size() && (isWordChar(text_[pos_ + 1]));
    if (isWordChar(c) || negativeNumber) {
      t.kind = Tok::Word;
      std::size_t start = pos_++;
      while (pos_ < text_.size()) {
        const char d = text_[pos_];
        const bool exponentSign = (d == '+' || d == '-') &&
                                  (text_[pos_ - 1] == 'e' || text_[pos_ - 1] == 'E') &&
                                  looksNumeric(text_.substr(start, pos_ - start));
        if (!isWordChar(d) && !exponentSign)
          break;
        ++pos_;
      }
      t.text = std::string(text_.substr(start, pos_ - start));
      return t;
    }
    t.kind = Tok::Punct;
    t.text = std::string(1, c);
    ++pos_;
    return t;
  }

private:
  static bool looksNumeric(std::string_view s) {
    if (!s.empty() && s[0] == '-')
      s.remove_prefix(1);
    return !s.empty() && s[0] >= '0' && s[0] <= '9' && s.substr(0, 2) != "0x";
  }

  void skipSpaceAndComments() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '\n') {
        ++line_;
        lineStart_ = ++pos_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n')
          ++pos_;
      } else {
        break;
      }
    }
  }

  std::string readString(const Token& t) {
    std::string out;
    ++pos_; // opening quote
    while (true) {
      if (pos_ >= text_.size() || text_[pos_] == '\n')
        fail(t.line, t.column, "unterminated string");
      char c = text_[pos_++];
      if (c == '"')
        return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size())
        fail(t.line, t.column, "unterminated string");
      c = text_[pos_++];
      if (c == 'n') {
        out += '\n';
      } else if (c == 'x') {
        if (pos_ + 2 > text_.size())
          fail(t.line, t.column, "bad \\x escape");
        unsigned v = 0;
        auto [p, ec] = std::from_chars(text_.data() + pos_, text_.data() + pos_ + 2, v, 16);
        if (ec != std::errc() || p != text_.data() + pos_ + 2)
          fail(t.line, t.column, "bad \\x escape");
        out += static_cast<char>(v);
        pos_ += 2;
      } else {
        out += c;
      }
    }
  }

  std::string_view text_;
  const std::string& source_;
  std::size_t pos_ = 0, lineStart_ = 0;
  int line_ = 1;
};

class Parser {
public:
  Parser(std::string_view text, const std::string& source,
         const ElidedConstantSource* elided = nullptr)
      : lex_(text, source), elided_(elided) {
    advance();
  }

  std::unique_ptr<Graph> parseTop() {
    auto g = std::make_unique<Graph>();
    expectWord("graph");
    expectPunct("@");
    g->name = name();
    expectWord("opset");
    g->opsetVersion = integer();
    parseBlock(*g);
    if (tok_.kind != Tok::End)
      fail("unexpected text after the graph");
    return g;
  }

private:
  [[noreturn]] void fail(const std::string& message) const {
    lex_.fail(tok_.line, tok_.column,
              message +
                  (tok_.kind == Tok::End ? " (at end of input)" : " (at '" + tok_.text + "')"));
  }
  void advance() { tok_ = lex_.next(); }
  bool isPunct(const char* p) const { return tok_.kind == Tok::Punct && tok_.text == p; }
  bool isWord(const char* w) const { return tok_.kind == Tok::Word && tok_.text == w; }
  void expectPunct(const char* p) {
    if (!isPunct(p))
      fail(std::string("expected '") + p + "'");
    advance();
  }
  void expectWord(const char* w) {
    if (!isWord(w))
      fail(std::string("expected '") + w + "'");
    advance();
  }
  bool acceptPunct(const char* p) {
    if (!isPunct(p))
      return false;
    advance();
    return true;
  }

  std::string name() {
    if (tok_.kind != Tok::Word && tok_.kind != Tok::String)
      fail("expected a name");
    std::string n = tok_.text;
    advance();
    return n;
  }

  std::int64_t integer() {
    if (tok_.kind != Tok::Word)
      fail("expected an integer");
    std::int64_t v = 0;
    const std::string& s = tok_.text;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size())
      fail("expected an integer");
    advance();
    return v;
  }

  static bool isFloatText(const std::string& s) {
    return s == "inf" || s == "-inf" || s == "nan" ||
           (s.find_first_of(".eE") != std::string::npos && s.substr(0, 2) != "0x");
  }

  double floating() {
    if (tok_.kind != Tok::Word)
      fail("expected a number");
    const std::string s = tok_.text;
    double v = 0;
    if (s == "inf") {
      v = std::numeric_limits<double>::infinity();
    } else if (s == "-inf") {
      v = -std::numeric_limits<double>::infinity();
    } else if (s == "nan") {
      v = std::numeric_limits<double>::quiet_NaN();
    } else {
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec != std::errc() || p != s.data() + s.size())
        fail("expected a number");
    }
    advance();
    return v;
  }

  float floatValue() {
    // Parse as float directly so the shortest round-trip text gives the same bits.
    if (tok_.kind == Tok::Word && tok_.text != "inf" && tok_.text != "-inf" && tok_.text != "nan") {
      float v = 0;
      const std::string& s = tok_.text;
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec == std::errc() && p == s.data() + s.size()) {
        advance();
        return v;
      }
    }
    return static_cast<float>(floating());
  }

  Value* valueRef(Graph& g) {
    if (isWord("_")) {
      advance();
      return nullptr;
    }
    expectPunct("%");
    const std::string n = name();
    Value* v = g.findValue(n);
    if (!v)
      fail("use of undefined value %" + n);
    return v;
  }

  TensorType type() {
    TensorType t;
    if (acceptPunct("?")) {
      if (!isPunct("["))
        return t; // nothing known
    } else {
      if (tok_.kind != Tok::Word)
        fail("expected an element type");
      auto dt = parseDType(tok_.text);
      if (!dt)
        fail("unknown element type");
      advance();
      t.dtype = *dt;
    }
    if (!isPunct("["))
      fail("expected '[' after the element type");
    advance();
    if (acceptPunct("*")) {
      expectPunct("]");
      return t;
    }
    t.shape.emplace();
    while (!isPunct("]")) {
      if (!t.shape->empty())
        expectPunct(",");
      if (acceptPunct("?")) {
        t.shape->push_back(Dim::unknown());
      } else if (tok_.kind == Tok::Word && tok_.text[0] >= '0' && tok_.text[0] <= '9') {
        t.shape->push_back(Dim::known(integer()));
      } else {
        t.shape->push_back(Dim::symbolic(name()));
      }
    }
    advance();
    return t;
  }

  // `[v, v, ...]` or `elided` for a tensor of the given type.
  TensorData tensorBody(DType dtype, std::vector<std::int64_t> dims) {
    if (isWord("elided")) {
      advance();
      return TensorData::elided(dtype, std::move(dims));
    }
    std::int64_t count = 1;
    for (std::int64_t d : dims)
      if (d < 0 || __builtin_mul_overflow(count, d, &count))
        fail("the tensor's shape is negative or too large");
    // The buffer grows with the values read: a huge declared shape costs nothing until the
    // text runs out of values (found by fuzzing: 2e15 elements were allocated up front).
    const std::size_t esize = dtypeSize(dtype);
    auto bytes = std::make_shared<std::string>();
    char element[16];
    expectPunct("[");
    for (std::int64_t i = 0; i < count; ++i) {
      if (i)
        expectPunct(",");
      writeElement(dtype, element);
      bytes->append(element, esize);
    }
    expectPunct("]");
    return TensorData(dtype, std::move(dims), std::move(bytes));
  }

  void writeElement(DType dtype, char* dst) {
    auto store = [dst](auto v) { std::memcpy(dst, &v, sizeof v); };
    switch (dtype) {
    case DType::F32:
      store(floatValue());
      return;
    case DType::F64:
      store(floating());
      return;
    case DType::F16:
    case DType::BF16: {
      unsigned v = 0;
      const std::string& s = tok_.text;
      if (s.size() < 3 || s.substr(0, 2) != "0x" ||
          std::from_chars(s.data() + 2, s.data() + s.size(), v, 16).ec != std::errc() || v > 0xffff)
        fail("expected a 16-bit hex value like 0x3c00");
      advance();
      store(static_cast<std::uint16_t>(v));
      return;
    }
    case DType::Bool:
      if (isWord("true") || isWord("false")) {
        store(static_cast<std::uint8_t>(tok_.text == "true"));
        advance();
        return;
      }
      fail("expected true or false");
    case DType::U64: {
      std::uint64_t v = 0;
      const std::string& s = tok_.text;
      if (std::from_chars(s.data(), s.data() + s.size(), v).ec != std::errc())
        fail("expected an unsigned integer");
      advance();
      store(v);
      return;
    }
    case DType::I8:
      store(static_cast<std::int8_t>(integer()));
      return;
    case DType::I16:
      store(static_cast<std::int16_t>(integer()));
      return;
    case DType::I32:
      store(static_cast<std::int32_t>(integer()));
      return;
    case DType::I64:
      store(integer());
      return;
    case DType::U8:
      store(static_cast<std::uint8_t>(integer()));
      return;
    case DType::U16:
      store(static_cast<std::uint16_t>(integer()));
      return;
    case DType::U32:
      store(static_cast<std::uint32_t>(integer()));
      return;
    case DType::Undefined:
      break;
    }
    fail("constant of undefined element type");
  }

  TensorData tensorAttr() {
    expectWord("tensor");
    expectPunct("<");
    TensorType t = type();
    expectPunct(">");
    if (!t.isStatic())
      fail("tensor attributes need a static shape");
    return tensorBody(t.dtype, t.staticDims());
  }

  GraphPtr subgraph() {
    expectWord("graph");
    expectPunct("@");
    auto g = std::make_shared<Graph>();
    g->name = name();
    parseBlock(*g);
    return g;
  }

  Attribute attribute() {
    if (tok_.kind == Tok::String) {
      std::string s = tok_.text;
      advance();
      return {s};
    }
    if (isWord("tensor"))
      return {tensorAttr()};
    if (isWord("graph"))
      return {subgraph()};
    for (const char* empty : {"ints", "floats", "strings", "tensors", "graphs"}) {
      if (!isWord(empty))
        continue;
      advance();
      expectPunct("[");
      expectPunct("]");
      const std::string e = empty;
      if (e == "ints")
        return {std::vector<std::int64_t>{}};
      if (e == "floats")
        return {std::vector<float>{}};
      if (e == "strings")
        return {std::vector<std::string>{}};
      if (e == "tensors")
        return {std::vector<TensorData>{}};
      return {std::vector<GraphPtr>{}};
    }
    if (acceptPunct("["))
      return listAttribute();
    if (tok_.kind == Tok::Word)
      return isFloatText(tok_.text) ? Attribute{floatValue()} : Attribute{integer()};
    fail("expected an attribute value");
  }

  Attribute listAttribute() {
    // The first element decides the list's kind.
    if (tok_.kind == Tok::String) {
      std::vector<std::string> items;
      do {
        if (tok_.kind != Tok::String)
          fail("expected a string");
        items.push_back(tok_.text);
        advance();
      } while (acceptPunct(","));
      expectPunct("]");
      return {items};
    }
    if (isWord("tensor")) {
      std::vector<TensorData> items;
      do
        items.push_back(tensorAttr());
      while (acceptPunct(","));
      expectPunct("]");
      return {items};
    }
    if (isWord("graph")) {
      std::vector<GraphPtr> items;
      do
        items.push_back(subgraph());
      while (acceptPunct(","));
      expectPunct("]");
      return {items};
    }
    if (tok_.kind == Tok::Word && isFloatText(tok_.text)) {
      std::vector<float> items;
      do
        items.push_back(floatValue());
      while (acceptPunct(","));
      expectPunct("]");
      return {items};
    }
    std::vector<std::int64_t> items;
    do
      items.push_back(integer());
    while (acceptPunct(","));
    expectPunct("]");
    return {items};
  }

  void nodeLine(Graph& g, int group) {
    struct Out {
      std::string name;
      TensorType type;
    };
    std::vector<Out> outs;
    do {
      if (isWord("_")) {
        advance();
        outs.push_back({});
        continue;
      }
      expectPunct("%");
      Out o{name(), {}};
      expectPunct(":");
      o.type = type();
      if (g.findValue(o.name))
        fail("value %" + o.name + " is defined twice");
      outs.push_back(std::move(o));
    } while (acceptPunct(","));
    expectPunct("=");
    std::string domain, op = name();
    if (acceptPunct(":")) {
      expectPunct(":");
      domain = op;
      op = name();
    }
    expectPunct("(");
    std::vector<Value*> ins;
    while (!isPunct(")")) {
      if (!ins.empty())
        expectPunct(",");
      ins.push_back(valueRef(g));
    }
    advance();
    std::map<std::string, Attribute> attrs;
    if (acceptPunct("{")) {
      while (!isPunct("}")) {
        if (!attrs.empty())
          expectPunct(",");
        std::string key = name();
        expectPunct("=");
        if (attrs.count(key))
          fail("attribute '" + key + "' given twice");
        attrs.emplace(key, attribute());
      }
      advance();
    }
    std::vector<std::string> names;
    for (const Out& o : outs)
      names.push_back(o.name);
    Node* n = g.addNode(op, std::move(ins), names, domain);
    n->attributes = std::move(attrs);
    n->group = group;
    for (std::size_t i = 0; i < outs.size(); ++i)
      if (n->outputs()[i])
        n->outputs()[i]->type = outs[i].type;
    if (acceptPunct("@"))
      n->name = name();
  }

  void checkNew(Graph& g, const std::string& n) {
    if (g.findValue(n))
      fail("value %" + n + " is defined twice");
  }

  void parseBlock(Graph& g) {
    expectPunct("{");
    while (!acceptPunct("}")) {
      if (tok_.kind == Tok::End)
        fail("missing '}'");
      if (isWord("input") || isWord("capture")) {
        const bool capture = isWord("capture");
        advance();
        expectPunct("%");
        std::string n = name();
        checkNew(g, n);
        expectPunct(":");
        TensorType t = type();
        capture ? g.addCapture(n, t) : g.addInput(n, t);
      } else if (isWord("const")) {
        advance();
        expectPunct("%");
        std::string n = name();
        checkNew(g, n);
        expectPunct(":");
        TensorType t = type();
        if (!t.isStatic())
          fail("constants need a static shape");
        expectPunct("=");
        TensorData data = tensorBody(t.dtype, t.staticDims());
        if (data.isElided() && elided_ && *elided_)
          if (std::optional<TensorData> full = (*elided_)(n, t.dtype, t.staticDims()))
            data = std::move(*full);
        g.addConstant(n, std::move(data));
      } else if (isWord("output")) {
        advance();
        Value* v = valueRef(g);
        if (!v)
          fail("a graph output cannot be '_'");
        g.outputs.push_back(v);
      } else if (isWord("group")) {
        advance();
        expectPunct("@");
        FusedGroup grp;
        grp.name = name();
        if (tok_.kind != Tok::String)
          fail("expected the group's pattern string");
        grp.pattern = tok_.text;
        advance();
        const int id = g.addGroup(grp);
        expectPunct("{");
        while (!acceptPunct("}")) {
          if (tok_.kind == Tok::End)
            fail("missing '}' of group");
          nodeLine(g, id);
        }
      } else {
        nodeLine(g, -1);
      }
    }
  }

  Lexer lex_;
  Token tok_;
  const ElidedConstantSource* elided_;
};

} // namespace

std::unique_ptr<Graph> parseGraph(std::string_view text, const std::string& sourceName) {
  return Parser(text, sourceName).parseTop();
}

std::unique_ptr<Graph> parseGraph(std::string_view text, const std::string& sourceName,
                                  const ElidedConstantSource& source) {
  return Parser(text, sourceName, &source).parseTop();
}

} // namespace lathe::graph
