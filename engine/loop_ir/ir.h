#pragma once
// The loop IR: the level between the graph IR and code generation.
//
// Small immutable nodes built only through their make() factories, which check types
// (LATHE_CHECK, so a bad make() throws lathe::Error of kind Internal). Expr and Stmt are
// ref-counted handles to const nodes; a node's `kind` allows switch dispatch, and
// IRVisitor/IRMutator (ir_visitor.h, ir_mutator.h) recurse over every child by default.
//
// Conventions every pass and the code generator rely on:
// - Names identify. Vars and Buffers are matched by name; a kernel uses each name for one
//   variable (or buffer) only. A Let/LetStmt/For binds its variable in its body.
// - Indices are flat element indices (not bytes) into a buffer's storage, of indexType()
//   (i64): Load/Store address = base + index * elementType.bytes(). Buffer shape and strides
//   are metadata for passes and printing; lowering has already applied them.
// - Vectors: a vector expression of N lanes has type T xN. Immediates are scalar; vectors of
//   a value are Broadcast(v, N), affine index vectors are Ramp(base, stride, N). A Load/Store
//   whose index is a Ramp with stride 1 is a contiguous vector access; any other vector index
//   is a gather/scatter.

#include "engine/loop_ir/type.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lathe::loop {

// Node kinds are listed once; dispatch switches (visitor, mutator, printer) expand these.
#define LATHE_LOOP_EXPR_NODES(X)                                                                   \
  X(IntImm)                                                                                        \
  X(FloatImm)                                                                                      \
  X(Var)                                                                                           \
  X(Add)                                                                                           \
  X(Sub)                                                                                           \
  X(Mul)                                                                                           \
  X(Div)                                                                                           \
  X(Mod)                                                                                           \
  X(FloorDiv)                                                                                      \
  X(FloorMod)                                                                                      \
  X(Min)                                                                                           \
  X(Max)                                                                                           \
  X(EQ)                                                                                            \
  X(NE)                                                                                            \
  X(LT)                                                                                            \
  X(LE)                                                                                            \
  X(GT)                                                                                            \
  X(GE)                                                                                            \
  X(And)                                                                                           \
  X(Or)                                                                                            \
  X(Not)                                                                                           \
  X(Select)                                                                                        \
  X(Cast)                                                                                          \
  X(Load)                                                                                          \
  X(Ramp)                                                                                          \
  X(Broadcast)                                                                                     \
  X(Call)                                                                                          \
  X(Let)

#define LATHE_LOOP_STMT_NODES(X)                                                                   \
  X(For)                                                                                           \
  X(Store)                                                                                         \
  X(Allocate)                                                                                      \
  X(Block)                                                                                         \
  X(IfThenElse)                                                                                    \
  X(LetStmt)                                                                                       \
  X(Evaluate)                                                                                      \
  X(Barrier)

enum class ExprKind : std::uint8_t {
#define LATHE_LOOP_ENUM(name) name,
  LATHE_LOOP_EXPR_NODES(LATHE_LOOP_ENUM)
};
enum class StmtKind : std::uint8_t { LATHE_LOOP_STMT_NODES(LATHE_LOOP_ENUM) };
#undef LATHE_LOOP_ENUM

const char* exprKindName(ExprKind kind);
const char* stmtKindName(StmtKind kind);

// The 17 binary expression kinds (Add .. Or) share one node layout, BinaryExprNode.
constexpr bool isBinaryKind(ExprKind kind) {
  return kind >= ExprKind::Add && kind <= ExprKind::Or;
}
constexpr bool isComparisonKind(ExprKind kind) {
  return kind >= ExprKind::EQ && kind <= ExprKind::GE;
}

namespace detail {

// Intrusive reference count, so that a visitor holding `const Add*` can hand the same node
// back as an Expr (the mutator's "unchanged" result) without a second control block.
class RefCounted {
public:
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;
  virtual ~RefCounted() = default;

  void retain() const { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release() const {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1)
      delete this;
  }

private:
  mutable std::atomic<int> refs_{0};
};

template <typename Node>
class Handle {
public:
  Handle() = default;
  // Implicit so that `return op;` works in a mutator; the node must come from make().
  Handle(const Node* node) : node_(node) {
    if (node_)
      node_->retain();
  }
  // Deleted so that a literal 0 (a null pointer constant) does not silently become an
  // undefined Expr; use Expr() for that.
  Handle(std::nullptr_t) = delete;
  Handle(const Handle& other) : Handle(other.node_) {}
  Handle(Handle&& other) noexcept : node_(std::exchange(other.node_, nullptr)) {}
  Handle& operator=(Handle other) noexcept {
    std::swap(node_, other.node_);
    return *this;
  }
  ~Handle() {
    if (node_)
      node_->release();
  }

  bool defined() const { return node_ != nullptr; }
  const Node* get() const { return node_; }
  const Node* operator->() const { return node_; }
  // Pointer identity; use equal() (ir_equality.h) for structural equality.
  bool sameAs(const Handle& other) const { return node_ == other.node_; }

private:
  const Node* node_ = nullptr;
};

} // namespace detail

struct ExprNode : detail::RefCounted {
  const ExprKind kind;
  Type type;

protected:
  explicit ExprNode(ExprKind k) : kind(k) {}
};

struct StmtNode : detail::RefCounted {
  const StmtKind kind;

protected:
  explicit StmtNode(StmtKind k) : kind(k) {}
};

class Expr : public detail::Handle<ExprNode> {
public:
  using Handle::Handle;

  ExprKind kind() const { return get()->kind; }
  Type type() const { return get()->type; }
  // The node as T (e.g. `e.as<Add>()`), or nullptr when it is another kind.
  template <typename T>
  const T* as() const {
    return defined() && get()->kind == T::kKind ? static_cast<const T*>(get()) : nullptr;
  }
};

class Stmt : public detail::Handle<StmtNode> {
public:
  using Handle::Handle;

  StmtKind kind() const { return get()->kind; }
  template <typename T>
  const T* as() const {
    return defined() && get()->kind == T::kKind ? static_cast<const T*>(get()) : nullptr;
  }
};

// ---------------------------------------------------------------------------------------------
// Buffers and kernels

struct BufferNode {
  std::string name;
  Type elementType; // scalar
  std::vector<Expr> shape;
  std::vector<Expr> strides; // in elements, one per dimension
};

// A named region of memory: a kernel parameter or an Allocate. Shared and immutable.
class Buffer {
public:
  Buffer() = default;
  // Shape and strides are index-typed; empty strides mean row-major (last dimension 1).
  static Buffer make(std::string name, Type elementType, std::vector<Expr> shape,
                     std::vector<Expr> strides = {});

  bool defined() const { return node_ != nullptr; }
  const std::string& name() const { return node_->name; }
  Type elementType() const { return node_->elementType; }
  const std::vector<Expr>& shape() const { return node_->shape; }
  const std::vector<Expr>& strides() const { return node_->strides; }
  int rank() const { return static_cast<int>(node_->shape.size()); }
  bool sameAs(const Buffer& other) const { return node_ == other.node_; }
  // True when the strides are the row-major ones computed from the shape.
  bool hasDefaultStrides() const;
  // sum(indices[i] * strides[i]): the flat index of one element (or of a vector, when the
  // indices are Ramps/Broadcasts of one lane count).
  Expr flatIndex(const std::vector<Expr>& indices) const;

private:
  std::shared_ptr<const BufferNode> node_;
};

// A lowered function: one fused kernel of the graph.
struct Kernel {
  std::string name; // also the name of the generated function
  std::vector<Buffer> inputs;
  std::vector<Buffer> outputs;
  Stmt body;
  std::vector<std::string> sourceNodes; // provenance: the ONNX nodes this kernel came from
  // How the default lowering computes it (tiles, parallel tasks, where the epilogue runs),
  // one line per choice; for people reading the kernel, not for passes. May be empty.
  std::string strategy = {};
  // The schedule steps (text form, one per line) that turn this loop nest into the default
  // fast kernel. The driver replays them unless a schedule or a tuning record replaces
  // them. Empty: the nest as lowered is the default.
  std::string defaultTrace = {};
  // Other whole traces of the same nest that the lowering's own rules rank next (other tiles,
  // another task order): where the tuner's search starts besides the default trace.
  std::vector<std::string> traceVariants = {};

  // The calling convention's parameter order: inputs, then outputs.
  std::vector<Buffer> parameters() const;
};

// ---------------------------------------------------------------------------------------------
// Expressions

// An integer or boolean constant (always scalar; Broadcast makes vectors).
struct IntImm final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::IntImm;
  // Int: the value; UInt: the bit pattern (u64 values above INT64_MAX are negative here);
  // Bool: 0 or 1.
  std::int64_t value = 0;

  std::uint64_t unsignedValue() const { return static_cast<std::uint64_t>(value); }
  // The value must be representable in the type (no silent wrapping).
  static Expr make(Type type, std::int64_t value);
  IntImm() : ExprNode(kKind) {}
};

// A floating-point constant (scalar). f32 values are rounded to float on construction, so
// `value` is exactly what the generated code sees. f16 values are kept as given.
struct FloatImm final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::FloatImm;
  double value = 0;

  static Expr make(Type type, double value);
  FloatImm() : ExprNode(kKind) {}
};

// A variable: a loop variable or a Let/LetStmt binding, matched by name.
struct Var final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Var;
  std::string name;

  static Expr make(Type type, std::string name);
  Var() : ExprNode(kKind) {}
};

struct BinaryExprNode : ExprNode {
  Expr a, b;

protected:
  using ExprNode::ExprNode;
};

// Operands have exactly the same type (no implicit conversion).
template <ExprKind K>
struct BinaryOp final : BinaryExprNode {
  static constexpr ExprKind kKind = K;

  static Expr make(Expr a, Expr b);
  BinaryOp() : BinaryExprNode(K) {}
};

// Arithmetic on Int/UInt/Float (not Bool); the result has the operand type.
// Int overflow is undefined (code may assume it never happens), UInt wraps.
using Add = BinaryOp<ExprKind::Add>;
using Sub = BinaryOp<ExprKind::Sub>;
using Mul = BinaryOp<ExprKind::Mul>;
// Int: truncates toward zero (C, ONNX Div); UInt: unsigned; Float: IEEE division.
// Integer division by zero is undefined.
using Div = BinaryOp<ExprKind::Div>;
// Int: the remainder of Div (sign of the dividend, C %); Float: fmod.
using Mod = BinaryOp<ExprKind::Mod>;
// Int/UInt only: rounds toward minus infinity; FloorMod has the sign of the divisor
// (Python). For index math over split loops, where the identities are exact.
using FloorDiv = BinaryOp<ExprKind::FloorDiv>;
using FloorMod = BinaryOp<ExprKind::FloorMod>;
// Int/UInt/Float. For floats the result is unspecified when an operand is NaN, and either
// zero may come back for min(-0.0, +0.0) (the code generator picks the fastest instruction).
using Min = BinaryOp<ExprKind::Min>;
using Max = BinaryOp<ExprKind::Max>;
// Comparisons: the result is Bool with the operand lane count. EQ/NE accept Bool operands.
// Floats compare like C: false with a NaN operand, except NE, which is true.
using EQ = BinaryOp<ExprKind::EQ>;
using NE = BinaryOp<ExprKind::NE>;
using LT = BinaryOp<ExprKind::LT>;
using LE = BinaryOp<ExprKind::LE>;
using GT = BinaryOp<ExprKind::GT>;
using GE = BinaryOp<ExprKind::GE>;
// Logical operations on Bool (scalars or vectors).
using And = BinaryOp<ExprKind::And>;
using Or = BinaryOp<ExprKind::Or>;

// make() of the binary node of a kind chosen at run time (Add .. Or).
Expr makeBinary(ExprKind kind, Expr a, Expr b);

struct Not final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Not;
  Expr a;

  static Expr make(Expr a);
  Not() : ExprNode(kKind) {}
};

// condition ? trueValue : falseValue, lane-wise. The condition is Bool with the value lane
// count, or a scalar Bool choosing whole vectors.
struct Select final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Select;
  Expr condition, trueValue, falseValue;

  static Expr make(Expr condition, Expr trueValue, Expr falseValue);
  Select() : ExprNode(kKind) {}
};

// Conversion to another element type with the same lane count, like LLVM's casts:
// int->int wraps or extends (sign-extends from Int, zero-extends from UInt); int->float
// rounds to nearest; float->int truncates toward zero (undefined when out of range);
// x->Bool is x != 0; Bool->x is 0 or 1.
struct Cast final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Cast;
  Expr value;

  static Expr make(Type type, Expr value);
  Cast() : ExprNode(kKind) {}
};

// buffer[index]: the type is the buffer's element type with the index lane count.
struct Load final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Load;
  Buffer buffer;
  Expr index; // indexType(), scalar or vector

  static Expr make(Buffer buffer, Expr index);
  Load() : ExprNode(kKind) {}
};

// The vector <base, base + stride, ..., base + (lanes-1)*stride>; base and stride are
// scalars of one numeric type.
struct Ramp final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Ramp;
  Expr base, stride;
  int lanes = 0;

  static Expr make(Expr base, Expr stride, int lanes);
  Ramp() : ExprNode(kKind) {}
};

// A scalar value repeated in every lane.
struct Broadcast final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Broadcast;
  Expr value;
  int lanes = 0;

  static Expr make(Expr value, int lanes);
  Broadcast() : ExprNode(kKind) {}
};

// Math functions, lane-wise. All take Float arguments of one type and return that type,
// except Abs, which also takes Int. Round rounds half to even (ONNX Round, llvm.roundeven);
// Rsqrt is 1/sqrt(x), Sigmoid 1/(1+exp(-x)), Fma(a, b, c) a*b+c with one rounding.
// Extern calls a pure function by name (no side effects; the simplifier may drop or
// duplicate it); its type is given explicitly.
enum class Intrinsic : std::uint8_t {
  Exp,
  Exp2,
  Log,
  Log2,
  Tanh,
  Erf,
  Sqrt,
  Rsqrt,
  Pow,
  Abs,
  Floor,
  Ceil,
  Round,
  Trunc,
  Sigmoid,
  Sin,
  Cos,
  Fma,
  Extern,
};

const char* intrinsicName(Intrinsic op); // "exp", "rsqrt", ...; "extern" for Extern
int intrinsicArity(Intrinsic op);        // -1 for Extern (any)

struct Call final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Call;
  Intrinsic op = Intrinsic::Extern;
  std::string name; // Extern only; empty otherwise
  std::vector<Expr> args;

  static Expr make(Intrinsic op, std::vector<Expr> args);
  static Expr makeExtern(Type type, std::string name, std::vector<Expr> args);
  Call() : ExprNode(kKind) {}
};

// `let var = value in body`; var is a Var of the value's type, bound in body only.
struct Let final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Let;
  Expr var;
  Expr value, body;

  const std::string& name() const;
  static Expr make(Expr var, Expr value, Expr body);
  Let() : ExprNode(kKind) {}
};

// ---------------------------------------------------------------------------------------------
// Statements

// Serial/Parallel run the body for var = min .. min+extent-1 (none when extent <= 0).
// Vectorized and Unrolled are requests that the loop passes carry out (into Ramps, or into
// copies of the body); a code generator that meets one may emit it as a serial loop.
// The Gpu kinds are loops bound to a CUDA grid axis (schedule primitive `bind`): the loop
// does not iterate; each block (Block*) or thread of a block (Thread*) runs the body once,
// its variable being min + blockIdx/threadIdx on that axis. Only GPU code has them.
// Statements inside the loops bound to blocks but outside those bound to threads run in
// every thread of the block (stack buffers there are per thread); several loops bound to
// the same thread axis, one after another (a barrier between them), are how the threads
// of a block take turns at shared memory.
enum class ForKind : std::uint8_t {
  Serial,
  Parallel,
  Vectorized,
  Unrolled,
  GpuBlockX,
  GpuBlockY,
  GpuBlockZ,
  GpuThreadX,
  GpuThreadY,
  GpuThreadZ,
};
// "serial", "parallel", "vectorized", "unrolled", "blockIdx.x" ... "threadIdx.z"
const char* forKindName(ForKind kind);
bool isGpuBound(ForKind kind);
bool isGpuBlock(ForKind kind); // blockIdx.x/y/z
int gpuAxis(ForKind kind);     // 0, 1, 2 for x, y, z of a bound kind
// The kind `name` ("blockIdx.x" ... "threadIdx.z") binds to, if it is one.
std::optional<ForKind> gpuBindingNamed(const std::string& name);

struct For final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::For;
  Expr var; // a Var of indexType(), bound in body
  Expr min, extent;
  ForKind forKind = ForKind::Serial;
  Stmt body;

  const std::string& name() const;
  static Stmt make(Expr var, Expr min, Expr extent, ForKind forKind, Stmt body);
  For() : StmtNode(kKind) {}
};

// buffer[index] = value; the value has the buffer element type with the index lane count.
struct Store final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Store;
  Buffer buffer;
  Expr index, value;

  static Stmt make(Buffer buffer, Expr index, Expr value);
  Store() : StmtNode(kKind) {}
};

// Stack: small and of constant size after simplification (an alloca); Heap: any size.
// Shared: GPU shared memory, one buffer per block that all its threads see, of constant
// size, inside the loops bound to blocks (only GPU code has it).
enum class MemoryScope : std::uint8_t { Stack, Heap, Shared };
const char* memoryScopeName(MemoryScope scope); // "stack", "heap", "shared"

// A temporary buffer, live (uninitialised) in body only.
struct Allocate final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Allocate;
  Buffer buffer;
  MemoryScope scope = MemoryScope::Stack;
  Stmt body;

  static Stmt make(Buffer buffer, MemoryScope scope, Stmt body);
  Allocate() : StmtNode(kKind) {}
};

// Statements run in order. make() flattens nested Blocks, returns a single statement as is
// and an empty list as noOp(), so a Block always has two or more non-Block statements.
struct Block final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Block;
  std::vector<Stmt> stmts;

  static Stmt make(std::vector<Stmt> stmts);
  static Stmt make(Stmt first, Stmt second) { return make(std::vector<Stmt>{first, second}); }
  Block() : StmtNode(kKind) {}
};

struct IfThenElse final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::IfThenElse;
  Expr condition; // scalar Bool
  Stmt thenCase;
  Stmt elseCase; // may be undefined

  static Stmt make(Expr condition, Stmt thenCase, Stmt elseCase = {});
  IfThenElse() : StmtNode(kKind) {}
};

struct LetStmt final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::LetStmt;
  Expr var;
  Expr value;
  Stmt body;

  const std::string& name() const;
  static Stmt make(Expr var, Expr value, Stmt body);
  LetStmt() : StmtNode(kKind) {}
};

// Evaluates an expression for its side effects (an extern call); Evaluate of a constant is
// the no-op statement.
struct Evaluate final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Evaluate;
  Expr value;

  static Stmt make(Expr value);
  Evaluate() : StmtNode(kKind) {}
};

// A GPU block barrier (__syncthreads): every thread of the block waits here until all have
// arrived, and what they wrote to shared memory before it is seen after it. Every thread
// of the block must reach it (not under a condition that differs between threads). Only
// GPU code has it; run serially (withSerialGpuLoops) it is dropped, the loops bound to
// threads then running one after another.
struct Barrier final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Barrier;

  static Stmt make();
  Barrier() : StmtNode(kKind) {}
};

// The canonical empty statement, `evaluate(0)`.
Stmt noOp();
// True for an undefined Stmt or Evaluate of an immediate.
bool isNoOp(const Stmt& stmt);

} // namespace lathe::loop
