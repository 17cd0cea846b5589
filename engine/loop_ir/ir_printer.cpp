#include "engine/loop_ir/ir_printer.h"

#include "engine/loop_ir/ir_visitor.h"

#include <charconv>
#include <cmath>
#include <sstream>

namespace lathe::loop {

namespace {

// Binding strength, loosest first; an operand weaker than its context gets parentheses.
enum Precedence : int {
  kTop = 0,
  kOr = 1,
  kAnd = 2,
  kCompare = 3,
  kAdditive = 4,
  kMultiplicative = 5,
  kUnary = 6, // !x and negative numbers
  kAtom = 7,
};

int precedence(const Expr& e) {
  switch (e.kind()) {
  case ExprKind::Or:
    return kOr;
  case ExprKind::And:
    return kAnd;
  case ExprKind::EQ:
  case ExprKind::NE:
  case ExprKind::LT:
  case ExprKind::LE:
  case ExprKind::GT:
  case ExprKind::GE:
    return kCompare;
  case ExprKind::Add:
  case ExprKind::Sub:
    return kAdditive;
  case ExprKind::Mul:
  case ExprKind::Div:
  case ExprKind::Mod:
    return kMultiplicative;
  case ExprKind::Not:
    return kUnary;
  case ExprKind::IntImm: {
    const IntImm* imm = e.as<IntImm>();
    return imm->type == indexType() && imm->value < 0 ? kUnary : kAtom;
  }
  case ExprKind::FloatImm: {
    const FloatImm* imm = e.as<FloatImm>();
    const bool bare = imm->type.bits() != 16 && std::isfinite(imm->value);
    return bare && std::signbit(imm->value) ? kUnary : kAtom;
  }
  default:
    return kAtom;
  }
}

// Shortest round-trip text that still reads as a float ("1.0", not "1").
template <typename F>
std::string shortestFloat(F value) {
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof(buf), value);
  std::string text(buf, result.ptr);
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return text;
}

std::string formatFloat(const FloatImm* imm) {
  const double v = imm->value;
  if (!std::isfinite(v)) {
    const char* word = std::isnan(v) ? "nan" : (v < 0 ? "-inf" : "inf");
    return imm->type.toString() + "(" + word + ")";
  }
  if (imm->type.bits() == 32)
    return shortestFloat(static_cast<float>(v)) + "f";
  if (imm->type.bits() == 64)
    return shortestFloat(v);
  return imm->type.toString() + "(" + shortestFloat(v) + ")";
}

std::string formatInt(const IntImm* imm) {
  if (imm->type.isBool())
    return imm->value ? "true" : "false";
  const std::string digits =
      imm->type.isUInt() ? std::to_string(imm->unsignedValue()) : std::to_string(imm->value);
  if (imm->type == indexType())
    return digits;
  return imm->type.toString() + "(" + digits + ")";
}

const char* binaryToken(ExprKind kind) {
  switch (kind) {
  case ExprKind::Add:
    return " + ";
  case ExprKind::Sub:
    return " - ";
  case ExprKind::Mul:
    return "*";
  case ExprKind::Div:
    return "/";
  case ExprKind::Mod:
    return "%";
  case ExprKind::EQ:
    return " == ";
  case ExprKind::NE:
    return " != ";
  case ExprKind::LT:
    return " < ";
  case ExprKind::LE:
    return " <= ";
  case ExprKind::GT:
    return " > ";
  case ExprKind::GE:
    return " >= ";
  case ExprKind::And:
    return " && ";
  case ExprKind::Or:
    return " || ";
  default:
    return nullptr; // printed as a function: min, max, floordiv, floormod
  }
}

const char* binaryFunction(ExprKind kind) {
  switch (kind) {
  case ExprKind::Min:
    return "min";
  case ExprKind::Max:
    return "max";
  case ExprKind::FloorDiv:
    return "floordiv";
  case ExprKind::FloorMod:
    return "floormod";
  default:
    return "?";
  }
}

class Printer : public IRVisitor {
public:
  explicit Printer(std::ostream& os, StmtLines* lines = nullptr) : os_(os), lines_(lines) {}

  void print(const Expr& e, int context = kTop) {
    if (!e.defined()) {
      os_ << "<undefined>";
      return;
    }
    const bool parens = precedence(e) < context;
    if (parens)
      os_ << '(';
    visit(e);
    if (parens)
      os_ << ')';
  }

  void printStmt(const Stmt& s) {
    if (lines_ && s.defined())
      lines_->emplace(s.get(), lineNumber_ + 1); // the next line() starts it
    if (!s.defined()) {
      line() << "<undefined>\n";
      return;
    }
    visit(s);
  }

  void printBufferType(const Buffer& buffer) {
    os_ << buffer.elementType() << '[';
    printList(buffer.shape(), ",");
    os_ << ']';
    if (!buffer.hasDefaultStrides()) {
      os_ << " strides [";
      printList(buffer.strides(), ",");
      os_ << ']';
    }
  }

  void printKernel(const Kernel& kernel) {
    os_ << "kernel " << kernel.name << '(';
    printParameters(kernel.inputs);
    os_ << ") -> (";
    printParameters(kernel.outputs);
    os_ << ") {";
    for (std::size_t i = 0; i < kernel.sourceNodes.size(); ++i)
      os_ << (i == 0 ? "  # from: " : ", ") << kernel.sourceNodes[i];
    os_ << '\n';
    lineNumber_ = 1; // the header
    indented(kernel.body);
    os_ << "}\n";
  }

protected:
  void visitIntImm(const IntImm* op) override { os_ << formatInt(op); }
  void visitFloatImm(const FloatImm* op) override { os_ << formatFloat(op); }
  void visitVar(const Var* op) override { os_ << op->name; }

  void visitBinary(const BinaryExprNode* op) override {
    const char* token = binaryToken(op->kind);
    if (!token) {
      os_ << binaryFunction(op->kind) << '(';
      print(op->a);
      os_ << ", ";
      print(op->b);
      os_ << ')';
      return;
    }
    const int p = precedence(Expr(op));
    // Left-associative: the left operand may bind equally; comparisons do not chain.
    print(op->a, isComparisonKind(op->kind) ? p + 1 : p);
    os_ << token;
    print(op->b, p + 1);
  }

  void visitNot(const Not* op) override {
    os_ << '!';
    print(op->a, kUnary);
  }

  void visitSelect(const Select* op) override {
    os_ << "select(";
    print(op->condition);
    os_ << ", ";
    print(op->trueValue);
    os_ << ", ";
    print(op->falseValue);
    os_ << ')';
  }

  void visitCast(const Cast* op) override {
    os_ << op->type << '(';
    print(op->value);
    os_ << ')';
  }

  void visitLoad(const Load* op) override {
    os_ << op->buffer.name() << '[';
    print(op->index);
    os_ << ']';
  }

  void visitRamp(const Ramp* op) override {
    os_ << "ramp(";
    print(op->base);
    os_ << ", ";
    print(op->stride);
    os_ << ", " << op->lanes << ')';
  }

  void visitBroadcast(const Broadcast* op) override {
    os_ << "broadcast(";
    print(op->value);
    os_ << ", " << op->lanes << ')';
  }

  void visitCall(const Call* op) override {
    if (op->op == Intrinsic::Extern)
      os_ << '@' << op->name << '<' << op->type << '>';
    else
      os_ << intrinsicName(op->op);
    os_ << '(';
    printList(op->args, ", ");
    os_ << ')';
  }

  void visitLet(const Let* op) override {
    os_ << "(let " << op->name() << " = ";
    print(op->value);
    os_ << " in ";
    print(op->body);
    os_ << ')';
  }

  void visitFor(const For* op) override {
    std::ostream& out = line();
    if (op->forKind != ForKind::Serial)
      out << forKindName(op->forKind) << ' ';
    out << "for (" << op->name() << ", ";
    print(op->min);
    os_ << ", ";
    print(op->extent);
    os_ << ") {\n";
    indented(op->body);
    line() << "}\n";
  }

  void visitStore(const Store* op) override {
    line() << op->buffer.name() << '[';
    print(op->index);
    os_ << "] = ";
    print(op->value);
    os_ << '\n';
  }

  void visitAllocate(const Allocate* op) override {
    line() << "allocate " << op->buffer.name() << ": ";
    printBufferType(op->buffer);
    os_ << " on " << memoryScopeName(op->scope) << " {\n";
    indented(op->body);
    line() << "}\n";
  }

  void visitBlock(const Block* op) override {
    for (const Stmt& s : op->stmts)
      printStmt(s);
  }

  void visitIfThenElse(const IfThenElse* op) override {
    line() << "if (";
    print(op->condition);
    os_ << ") {\n";
    indented(op->thenCase);
    // An else case that is itself an if prints as an `else if` chain.
    Stmt rest = op->elseCase;
    while (const IfThenElse* next = rest.as<IfThenElse>()) {
      line() << "} else if (";
      print(next->condition);
      os_ << ") {\n";
      indented(next->thenCase);
      rest = next->elseCase;
    }
    if (rest.defined()) {
      line() << "} else {\n";
      indented(rest);
    }
    line() << "}\n";
  }

  void visitLetStmt(const LetStmt* op) override {
    line() << "let " << op->name() << " = ";
    print(op->value);
    os_ << '\n';
    printStmt(op->body);
  }

  void visitEvaluate(const Evaluate* op) override {
    line() << "evaluate(";
    print(op->value);
    os_ << ")\n";
  }

  void visitBarrier(const Barrier*) override { line() << "barrier\n"; }

private:
  std::ostream& line() {
    ++lineNumber_; // every line but the kernel's header and closing brace starts here
    for (int i = 0; i < indent_; ++i)
      os_ << "  ";
    return os_;
  }

  void indented(const Stmt& s) {
    ++indent_;
    printStmt(s);
    --indent_;
  }

  void printList(const std::vector<Expr>& exprs, const char* separator) {
    for (std::size_t i = 0; i < exprs.size(); ++i) {
      if (i > 0)
        os_ << separator;
      print(exprs[i]);
    }
  }

  void printParameters(const std::vector<Buffer>& buffers) {
    for (std::size_t i = 0; i < buffers.size(); ++i) {
      os_ << (i > 0 ? ", %" : "%") << buffers[i].name() << ": ";
      printBufferType(buffers[i]);
    }
  }

  std::ostream& os_;
  int indent_ = 0;
  StmtLines* lines_ = nullptr;
  int lineNumber_ = 0; // lines started so far
};

} // namespace

std::string toString(const Expr& e) {
  std::ostringstream os;
  os << e;
  return os.str();
}

std::string toString(const Stmt& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

std::string toString(const Kernel& kernel) {
  std::ostringstream os;
  os << kernel;
  return os.str();
}

std::string toString(const Kernel& kernel, StmtLines* lines) {
  std::ostringstream os;
  Printer(os, lines).printKernel(kernel);
  return os.str();
}

std::string toString(const Buffer& buffer) {
  std::ostringstream os;
  Printer(os).printBufferType(buffer);
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Expr& e) {
  Printer(os).print(e);
  return os;
}

std::ostream& operator<<(std::ostream& os, const Stmt& s) {
  Printer(os).printStmt(s);
  return os;
}

std::ostream& operator<<(std::ostream& os, const Kernel& kernel) {
  Printer(os).printKernel(kernel);
  return os;
}

} // namespace lathe::loop
