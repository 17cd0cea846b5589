#include "engine/loop_ir/ir.h"

#include "engine/loop_ir/ir_equality.h"
#include "engine/support/checked_int.h"
#include "engine/support/diagnostics.h"

#include <algorithm>

namespace lathe::loop {

namespace {

std::string typeName(const Expr& e) {
  return e.defined() ? e.type().toString() : "<undefined>";
}

void checkDefined(const Expr& e, const char* what, const char* node) {
  LATHE_CHECK(e.defined(), std::string(node) + ": " + what + " is undefined");
}

void checkDefined(const Stmt& s, const char* what, const char* node) {
  LATHE_CHECK(s.defined(), std::string(node) + ": " + what + " is undefined");
}

void checkIndex(const Expr& e, const char* what, const char* node) {
  checkDefined(e, what, node);
  LATHE_CHECK(e.type().element() == indexType(), std::string(node) + ": " + what + " must be " +
                                                     indexType().toString() + ", not " +
                                                     typeName(e));
}

void checkScalarIndex(const Expr& e, const char* what, const char* node) {
  checkIndex(e, what, node);
  LATHE_CHECK(e.type().isScalar(), std::string(node) + ": " + what + " must be a scalar");
}

void checkBinder(const Expr& var, const char* node) {
  LATHE_CHECK(var.as<Var>() != nullptr,
              std::string(node) + ": the bound variable must be a Var, not " +
                  (var.defined() ? exprKindName(var.kind()) : "undefined"));
}

// Nodes are only created here, so every node is checked and owned by a handle.
template <typename Node>
Node* newNode() {
  return new Node();
}

} // namespace

const char* exprKindName(ExprKind kind) {
  switch (kind) {
#define LATHE_LOOP_NAME(name)                                                                      \
  case ExprKind::name:                                                                             \
    return #name;
    LATHE_LOOP_EXPR_NODES(LATHE_LOOP_NAME)
#undef LATHE_LOOP_NAME
  }
  return "?";
}

const char* stmtKindName(StmtKind kind) {
  switch (kind) {
#define LATHE_LOOP_NAME(name)                                                                      \
  case StmtKind::name:                                                                             \
    return #name;
    LATHE_LOOP_STMT_NODES(LATHE_LOOP_NAME)
#undef LATHE_LOOP_NAME
  }
  return "?";
}

// Buffers and kernels --------------------------------------------------------------------------

namespace {

std::vector<Expr> rowMajorStrides(const std::string& name, const std::vector<Expr>& shape) {
  std::vector<Expr> strides(shape.size());
  Expr stride = IntImm::make(indexType(), 1);
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    // Constant shapes get constant strides without needing the simplifier; their product
    // (the element count, at the end) must be an int64, as every index into them is.
    const IntImm* s = stride.as<IntImm>();
    const IntImm* d = shape[i].as<IntImm>();
    if (s && d) {
      const std::optional<std::int64_t> product = checkedMul(s->value, d->value);
      if (!product)
        throw Error(ErrorKind::Unsupported,
                    "buffer '" + name + "' has more elements than an int64 index counts");
      stride = IntImm::make(indexType(), *product);
    } else if (s && s->value == 1) {
      stride = shape[i];
    } else {
      stride = Mul::make(shape[i], stride);
    }
  }
  return strides;
}

} // namespace

Buffer Buffer::make(std::string name, Type elementType, std::vector<Expr> shape,
                    std::vector<Expr> strides) {
  LATHE_CHECK(!name.empty(), "Buffer: the name is empty");
  LATHE_CHECK(elementType.valid() && elementType.isScalar(),
              "Buffer '" + name + "': the element type must be a scalar, not " +
                  elementType.toString());
  for (const Expr& e : shape)
    checkScalarIndex(e, "a shape extent", "Buffer");
  if (strides.empty())
    strides = rowMajorStrides(name, shape);
  LATHE_CHECK(strides.size() == shape.size(),
              "Buffer '" + name + "': " + std::to_string(strides.size()) + " strides for rank " +
                  std::to_string(shape.size()));
  for (const Expr& e : strides)
    checkScalarIndex(e, "a stride", "Buffer");
  Buffer buffer;
  buffer.node_ = std::make_shared<const BufferNode>(
      BufferNode{std::move(name), elementType, std::move(shape), std::move(strides)});
  return buffer;
}

bool Buffer::hasDefaultStrides() const {
  std::vector<Expr> expected = rowMajorStrides(name(), shape());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (!equal(expected[i], strides()[i]))
      return false;
  }
  return true;
}

Expr Buffer::flatIndex(const std::vector<Expr>& indices) const {
  LATHE_CHECK(static_cast<int>(indices.size()) == rank(),
              "Buffer '" + name() + "': " + std::to_string(indices.size()) + " indices for rank " +
                  std::to_string(rank()));
  int lanes = 1;
  for (const Expr& index : indices) {
    checkIndex(index, "an index", "Buffer::flatIndex");
    lanes = std::max(lanes, index.type().lanes());
  }
  auto widen = [&](const Expr& e) {
    return e.type().lanes() == lanes || lanes == 1 ? e : Broadcast::make(e, lanes);
  };
  Expr sum;
  for (std::size_t i = 0; i < indices.size(); ++i) {
    const IntImm* stride = strides()[i].as<IntImm>();
    if (stride && stride->value == 0)
      continue;
    Expr term = widen(indices[i]);
    if (!(stride && stride->value == 1))
      term = Mul::make(term, widen(strides()[i]));
    sum = sum.defined() ? Add::make(sum, term) : term;
  }
  return sum.defined() ? sum : widen(IntImm::make(indexType(), 0));
}

std::vector<Buffer> Kernel::parameters() const {
  std::vector<Buffer> all = inputs;
  all.insert(all.end(), outputs.begin(), outputs.end());
  return all;
}

// Expressions --------------------------------------------------------------------------------

Expr IntImm::make(Type type, std::int64_t value) {
  LATHE_CHECK(type.valid() && type.isScalar() && !type.isFloat(),
              "IntImm: the type must be a scalar Int, UInt or Bool, not " + type.toString());
  const int bits = type.bits();
  bool fits = true;
  if (type.isBool())
    fits = value == 0 || value == 1;
  else if (type.isInt() && bits < 64)
    fits = value >= -(std::int64_t(1) << (bits - 1)) && value < (std::int64_t(1) << (bits - 1));
  else if (type.isUInt() && bits < 64)
    fits = value >= 0 && value < (std::int64_t(1) << bits);
  LATHE_CHECK(fits, "IntImm: " + std::to_string(value) + " does not fit in " + type.toString());
  IntImm* node = newNode<IntImm>();
  node->type = type;
  node->value = value;
  return node;
}

Expr FloatImm::make(Type type, double value) {
  LATHE_CHECK(type.valid() && type.isScalar() && type.isFloat(),
              "FloatImm: the type must be a scalar Float, not " + type.toString());
  FloatImm* node = newNode<FloatImm>();
  node->type = type;
  node->value = type.bits() == 32 ? static_cast<double>(static_cast<float>(value)) : value;
  return node;
}

Expr Var::make(Type type, std::string name) {
  LATHE_CHECK(type.valid(), "Var '" + name + "': invalid type");
  LATHE_CHECK(!name.empty(), "Var: the name is empty");
  Var* node = newNode<Var>();
  node->type = type;
  node->name = std::move(name);
  return node;
}

template <ExprKind K>
Expr BinaryOp<K>::make(Expr a, Expr b) {
  const char* node = exprKindName(K);
  checkDefined(a, "the left operand", node);
  checkDefined(b, "the right operand", node);
  LATHE_CHECK(a.type() == b.type(),
              std::string(node) + ": operand types differ: " + typeName(a) + " vs " + typeName(b));
  const Type t = a.type();
  Type result = t;
  if constexpr (K == ExprKind::And || K == ExprKind::Or) {
    LATHE_CHECK(t.isBool(), std::string(node) + ": operands must be bool, not " + t.toString());
  } else if constexpr (K == ExprKind::EQ || K == ExprKind::NE) {
    result = boolean(t.lanes());
  } else if constexpr (isComparisonKind(K)) {
    LATHE_CHECK(!t.isBool(), std::string(node) + ": bool operands cannot be ordered");
    result = boolean(t.lanes());
  } else if constexpr (K == ExprKind::FloorDiv || K == ExprKind::FloorMod) {
    LATHE_CHECK(t.isIntOrUInt(),
                std::string(node) + ": operands must be integers, not " + t.toString());
  } else {
    LATHE_CHECK(!t.isBool(), std::string(node) + ": operands must be numbers, not bool");
  }
  BinaryOp<K>* n = newNode<BinaryOp<K>>();
  n->type = result;
  n->a = std::move(a);
  n->b = std::move(b);
  return n;
}

template struct BinaryOp<ExprKind::Add>;
template struct BinaryOp<ExprKind::Sub>;
template struct BinaryOp<ExprKind::Mul>;
template struct BinaryOp<ExprKind::Div>;
template struct BinaryOp<ExprKind::Mod>;
template struct BinaryOp<ExprKind::FloorDiv>;
template struct BinaryOp<ExprKind::FloorMod>;
template struct BinaryOp<ExprKind::Min>;
template struct BinaryOp<ExprKind::Max>;
template struct BinaryOp<ExprKind::EQ>;
template struct BinaryOp<ExprKind::NE>;
template struct BinaryOp<ExprKind::LT>;
template struct BinaryOp<ExprKind::LE>;
template struct BinaryOp<ExprKind::GT>;
template struct BinaryOp<ExprKind::GE>;
template struct BinaryOp<ExprKind::And>;
template struct BinaryOp<ExprKind::Or>;

Expr makeBinary(ExprKind kind, Expr a, Expr b) {
  switch (kind) {
#define LATHE_LOOP_MAKE_BINARY(name)                                                               \
  case ExprKind::name:                                                                             \
    return name::make(std::move(a), std::move(b));
    LATHE_LOOP_MAKE_BINARY(Add)
    LATHE_LOOP_MAKE_BINARY(Sub)
    LATHE_LOOP_MAKE_BINARY(Mul)
    LATHE_LOOP_MAKE_BINARY(Div)
    LATHE_LOOP_MAKE_BINARY(Mod)
    LATHE_LOOP_MAKE_BINARY(FloorDiv)
    LATHE_LOOP_MAKE_BINARY(FloorMod)
    LATHE_LOOP_MAKE_BINARY(Min)
    LATHE_LOOP_MAKE_BINARY(Max)
    LATHE_LOOP_MAKE_BINARY(EQ)
    LATHE_LOOP_MAKE_BINARY(NE)
    LATHE_LOOP_MAKE_BINARY(LT)
    LATHE_LOOP_MAKE_BINARY(LE)
    LATHE_LOOP_MAKE_BINARY(GT)
    LATHE_LOOP_MAKE_BINARY(GE)
    LATHE_LOOP_MAKE_BINARY(And)
    LATHE_LOOP_MAKE_BINARY(Or)
#undef LATHE_LOOP_MAKE_BINARY
  default:
    break;
  }
  LATHE_CHECK(false, std::string("makeBinary: ") + exprKindName(kind) + " is not binary");
  return {};
}

Expr Not::make(Expr a) {
  checkDefined(a, "the operand", "Not");
  LATHE_CHECK(a.type().isBool(), "Not: the operand must be bool, not " + typeName(a));
  Not* node = newNode<Not>();
  node->type = a.type();
  node->a = std::move(a);
  return node;
}

Expr Select::make(Expr condition, Expr trueValue, Expr falseValue) {
  checkDefined(condition, "the condition", "Select");
  checkDefined(trueValue, "the true value", "Select");
  checkDefined(falseValue, "the false value", "Select");
  LATHE_CHECK(trueValue.type() == falseValue.type(),
              "Select: value types differ: " + typeName(trueValue) + " vs " + typeName(falseValue));
  const Type c = condition.type();
  LATHE_CHECK(c.isBool() && (c.isScalar() || c.lanes() == trueValue.type().lanes()),
              "Select: the condition must be bool or bool with the value lanes, not " +
                  c.toString() + " for " + typeName(trueValue));
  Select* node = newNode<Select>();
  node->type = trueValue.type();
  node->condition = std::move(condition);
  node->trueValue = std::move(trueValue);
  node->falseValue = std::move(falseValue);
  return node;
}

Expr Cast::make(Type type, Expr value) {
  checkDefined(value, "the value", "Cast");
  LATHE_CHECK(type.valid() && type.lanes() == value.type().lanes(),
              "Cast: cannot cast " + typeName(value) + " to " + type.toString() +
                  " (lane counts must match)");
  Cast* node = newNode<Cast>();
  node->type = type;
  node->value = std::move(value);
  return node;
}

Expr Load::make(Buffer buffer, Expr index) {
  LATHE_CHECK(buffer.defined(), "Load: the buffer is undefined");
  checkIndex(index, "the index", "Load");
  Load* node = newNode<Load>();
  node->type = buffer.elementType().withLanes(index.type().lanes());
  node->buffer = std::move(buffer);
  node->index = std::move(index);
  return node;
}

Expr Ramp::make(Expr base, Expr stride, int lanes) {
  checkDefined(base, "the base", "Ramp");
  checkDefined(stride, "the stride", "Ramp");
  LATHE_CHECK(base.type() == stride.type() && base.type().isScalar() && !base.type().isBool(),
              "Ramp: base and stride must be numeric scalars of one type, not " + typeName(base) +
                  " and " + typeName(stride));
  LATHE_CHECK(lanes > 1, "Ramp: lanes must be > 1, not " + std::to_string(lanes));
  Ramp* node = newNode<Ramp>();
  node->type = base.type().withLanes(lanes);
  node->base = std::move(base);
  node->stride = std::move(stride);
  node->lanes = lanes;
  return node;
}

Expr Broadcast::make(Expr value, int lanes) {
  checkDefined(value, "the value", "Broadcast");
  LATHE_CHECK(value.type().isScalar(),
              "Broadcast: the value must be a scalar, not " + typeName(value));
  LATHE_CHECK(lanes > 1, "Broadcast: lanes must be > 1, not " + std::to_string(lanes));
  Broadcast* node = newNode<Broadcast>();
  node->type = value.type().withLanes(lanes);
  node->value = std::move(value);
  node->lanes = lanes;
  return node;
}

const char* intrinsicName(Intrinsic op) {
  switch (op) {
  case Intrinsic::Exp:
    return "exp";
  case Intrinsic::Exp2:
    return "exp2";
  case Intrinsic::Log:
    return "log";
  case Intrinsic::Log2:
    return "log2";
  case Intrinsic::Tanh:
    return "tanh";
  case Intrinsic::Erf:
    return "erf";
  case Intrinsic::Sqrt:
    return "sqrt";
  case Intrinsic::Rsqrt:
    return "rsqrt";
  case Intrinsic::Pow:
    return "pow";
  case Intrinsic::Abs:
    return "abs";
  case Intrinsic::Floor:
    return "floor";
  case Intrinsic::Ceil:
    return "ceil";
  case Intrinsic::Round:
    return "round";
  case Intrinsic::Trunc:
    return "trunc";
  case Intrinsic::Sigmoid:
    return "sigmoid";
  case Intrinsic::Sin:
    return "sin";
  case Intrinsic::Cos:
    return "cos";
  case Intrinsic::Fma:
    return "fma";
  case Intrinsic::Extern:
    return "extern";
  }
  return "?";
}

int intrinsicArity(Intrinsic op) {
  switch (op) {
  case Intrinsic::Pow:
    return 2;
  case Intrinsic::Fma:
    return 3;
  case Intrinsic::Extern:
    return -1;
  default:
    return 1;
  }
}

Expr Call::make(Intrinsic op, std::vector<Expr> args) {
  const std::string name = intrinsicName(op);
  LATHE_CHECK(op != Intrinsic::Extern, "Call: use Call::makeExtern for extern calls");
  LATHE_CHECK(static_cast<int>(args.size()) == intrinsicArity(op),
              "Call " + name + ": expects " + std::to_string(intrinsicArity(op)) +
                  " arguments, got " + std::to_string(args.size()));
  for (const Expr& arg : args) {
    checkDefined(arg, "an argument", "Call");
    LATHE_CHECK(arg.type() == args[0].type(), "Call " + name + ": argument types differ: " +
                                                  typeName(args[0]) + " vs " + typeName(arg));
  }
  const Type t = args[0].type();
  LATHE_CHECK(t.isFloat() || (op == Intrinsic::Abs && t.isIntOrUInt()),
              "Call " + name + ": unsupported argument type " + t.toString());
  Call* node = newNode<Call>();
  node->type = t;
  node->op = op;
  node->args = std::move(args);
  return node;
}

Expr Call::makeExtern(Type type, std::string name, std::vector<Expr> args) {
  LATHE_CHECK(!name.empty(), "Call: an extern call needs a name");
  LATHE_CHECK(type.valid(), "Call " + name + ": invalid result type");
  for (const Expr& arg : args)
    checkDefined(arg, "an argument", "Call");
  Call* node = newNode<Call>();
  node->type = type;
  node->op = Intrinsic::Extern;
  node->name = std::move(name);
  node->args = std::move(args);
  return node;
}

const std::string& Let::name() const {
  return var.as<Var>()->name;
}

Expr Let::make(Expr var, Expr value, Expr body) {
  checkBinder(var, "Let");
  checkDefined(value, "the value", "Let");
  checkDefined(body, "the body", "Let");
  LATHE_CHECK(var.type() == value.type(), "Let " + var.as<Var>()->name + ": variable type " +
                                              typeName(var) + " differs from value type " +
                                              typeName(value));
  Let* node = newNode<Let>();
  node->type = body.type();
  node->var = std::move(var);
  node->value = std::move(value);
  node->body = std::move(body);
  return node;
}

// Statements --------------------------------------------------------------------------------

const char* forKindName(ForKind kind) {
  switch (kind) {
  case ForKind::Serial:
    return "serial";
  case ForKind::Parallel:
    return "parallel";
  case ForKind::Vectorized:
    return "vectorized";
  case ForKind::Unrolled:
    return "unrolled";
  case ForKind::GpuBlockX:
    return "blockIdx.x";
  case ForKind::GpuBlockY:
    return "blockIdx.y";
  case ForKind::GpuBlockZ:
    return "blockIdx.z";
  case ForKind::GpuThreadX:
    return "threadIdx.x";
  case ForKind::GpuThreadY:
    return "threadIdx.y";
  case ForKind::GpuThreadZ:
    return "threadIdx.z";
  }
  return "?";
}

bool isGpuBound(ForKind kind) {
  return kind >= ForKind::GpuBlockX;
}
bool isGpuBlock(ForKind kind) {
  return kind >= ForKind::GpuBlockX && kind <= ForKind::GpuBlockZ;
}
int gpuAxis(ForKind kind) {
  return isGpuBlock(kind) ? static_cast<int>(kind) - static_cast<int>(ForKind::GpuBlockX)
                          : static_cast<int>(kind) - static_cast<int>(ForKind::GpuThreadX);
}

std::optional<ForKind> gpuBindingNamed(const std::string& name) {
  for (ForKind k : {ForKind::GpuBlockX, ForKind::GpuBlockY, ForKind::GpuBlockZ, ForKind::GpuThreadX,
                    ForKind::GpuThreadY, ForKind::GpuThreadZ})
    if (name == forKindName(k))
      return k;
  return std::nullopt;
}

const std::string& For::name() const {
  return var.as<Var>()->name;
}

Stmt For::make(Expr var, Expr min, Expr extent, ForKind forKind, Stmt body) {
  checkBinder(var, "For");
  checkScalarIndex(var, "the loop variable", "For");
  checkScalarIndex(min, "the minimum", "For");
  checkScalarIndex(extent, "the extent", "For");
  checkDefined(body, "the body", "For");
  For* node = newNode<For>();
  node->var = std::move(var);
  node->min = std::move(min);
  node->extent = std::move(extent);
  node->forKind = forKind;
  node->body = std::move(body);
  return node;
}

Stmt Store::make(Buffer buffer, Expr index, Expr value) {
  LATHE_CHECK(buffer.defined(), "Store: the buffer is undefined");
  checkIndex(index, "the index", "Store");
  checkDefined(value, "the value", "Store");
  const Type expected = buffer.elementType().withLanes(index.type().lanes());
  LATHE_CHECK(value.type() == expected, "Store to '" + buffer.name() + "': the value is " +
                                            typeName(value) + ", expected " + expected.toString());
  Store* node = newNode<Store>();
  node->buffer = std::move(buffer);
  node->index = std::move(index);
  node->value = std::move(value);
  return node;
}

const char* memoryScopeName(MemoryScope scope) {
  switch (scope) {
  case MemoryScope::Stack:
    return "stack";
  case MemoryScope::Heap:
    return "heap";
  case MemoryScope::Shared:
    return "shared";
  }
  return "?";
}

Stmt Allocate::make(Buffer buffer, MemoryScope scope, Stmt body) {
  LATHE_CHECK(buffer.defined(), "Allocate: the buffer is undefined");
  checkDefined(body, "the body", "Allocate");
  Allocate* node = newNode<Allocate>();
  node->buffer = std::move(buffer);
  node->scope = scope;
  node->body = std::move(body);
  return node;
}

Stmt Block::make(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  flat.reserve(stmts.size());
  for (Stmt& s : stmts) {
    checkDefined(s, "a statement", "Block");
    if (const Block* inner = s.as<Block>())
      flat.insert(flat.end(), inner->stmts.begin(), inner->stmts.end());
    else
      flat.push_back(std::move(s));
  }
  if (flat.empty())
    return noOp();
  if (flat.size() == 1)
    return flat.front();
  Block* node = newNode<Block>();
  node->stmts = std::move(flat);
  return node;
}

Stmt IfThenElse::make(Expr condition, Stmt thenCase, Stmt elseCase) {
  checkDefined(condition, "the condition", "IfThenElse");
  LATHE_CHECK(condition.type() == boolean(),
              "IfThenElse: the condition must be a scalar bool, not " + typeName(condition));
  checkDefined(thenCase, "the then case", "IfThenElse");
  IfThenElse* node = newNode<IfThenElse>();
  node->condition = std::move(condition);
  node->thenCase = std::move(thenCase);
  node->elseCase = std::move(elseCase);
  return node;
}

const std::string& LetStmt::name() const {
  return var.as<Var>()->name;
}

Stmt LetStmt::make(Expr var, Expr value, Stmt body) {
  checkBinder(var, "LetStmt");
  checkDefined(value, "the value", "LetStmt");
  checkDefined(body, "the body", "LetStmt");
  LATHE_CHECK(var.type() == value.type(), "LetStmt " + var.as<Var>()->name + ": variable type " +
                                              typeName(var) + " differs from value type " +
                                              typeName(value));
  LetStmt* node = newNode<LetStmt>();
  node->var = std::move(var);
  node->value = std::move(value);
  node->body = std::move(body);
  return node;
}

Stmt Evaluate::make(Expr value) {
  checkDefined(value, "the value", "Evaluate");
  Evaluate* node = newNode<Evaluate>();
  node->value = std::move(value);
  return node;
}

Stmt Barrier::make() {
  return newNode<Barrier>();
}

Stmt noOp() {
  return Evaluate::make(IntImm::make(indexType(), 0));
}

bool isNoOp(const Stmt& stmt) {
  if (!stmt.defined())
    return true;
  const Evaluate* e = stmt.as<Evaluate>();
  return e && (e->value.as<IntImm>() || e->value.as<FloatImm>());
}

} // namespace lathe::loop
