#pragma once
// Helpers every op lowering uses: typed buffers for node operands, index arithmetic,
// numpy broadcasting and default loop nests.

#include "engine/graph/graph.h"
#include "engine/loop_ir/ir.h"
#include "engine/loop_ir/ir_operators.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace lathe::lowering {

using loop::Expr;
using loop::Stmt;

loop::Type loopType(graph::DType dtype);

// A tensor as a kernel sees it: its buffer and static shape.
struct TensorRef {
  loop::Buffer buffer;
  std::vector<std::int64_t> shape;
  graph::DType dtype = graph::DType::F32;

  std::size_t rank() const { return shape.size(); }
  Expr load(const std::vector<Expr>& index) const;              // element at a full index
  Stmt store(const std::vector<Expr>& index, Expr value) const; // write one element
  Expr loadFlat(Expr flatIndex) const;
  Stmt storeFlat(Expr flatIndex, Expr value) const;
  std::int64_t numElements() const;
};

// Row-major flat index of `index` in `shape`.
Expr flatIndex(const std::vector<std::int64_t>& shape, const std::vector<Expr>& index);
// The index into an operand of shape `operand` that numpy broadcasting reads for output
// index `outIndex` (operand dims are aligned right; size-1 dims read index 0).
std::vector<Expr> broadcastIndex(const std::vector<std::int64_t>& operand,
                                 const std::vector<Expr>& outIndex);

// Static dims of a value; throws Unsupported naming the node when they are not known.
std::vector<std::int64_t> staticShape(const graph::Value& value, const graph::Node& node);

// Integer or float constant of a value's element type.
Expr constantOf(graph::DType dtype, double value);

// Let-bound values for a pointwise expression, so each is computed once. Names carry the
// node's output name: several nodes fused into one kernel never clash.
class LetBindings {
public:
  LetBindings(const graph::Node& node, const std::string& what);
  Expr bind(const std::string& name, Expr value); // returns the bound variable
  Expr wrap(Expr body) const;                     // the body inside every binding

private:
  std::string prefix_;
  std::vector<std::pair<Expr, Expr>> lets_;
};

// For default traces: the name of a loop variable made by KernelBuilder::freshVar, and loop
// names as a step's argument list ("i.o, j.o, i.i").
const std::string& loopName(const Expr& var);
std::string loopList(const std::vector<std::string>& names);

// Builds one kernel: parameter buffers, fresh loop variables, loop nests.
class KernelBuilder {
public:
  KernelBuilder(std::string kernelName, std::vector<std::string> sourceNodes);

  // The buffer for a graph value read or written by the kernel (created on first use;
  // parameters keep the order of first use: all reads first, then writes, is up to the
  // caller through the order it asks for them).
  TensorRef input(const graph::Value& value, const graph::Node& node);
  TensorRef output(const graph::Value& value, const graph::Node& node);
  // In a fused group the anchor's own result is never stored: output(from) then yields
  // the buffer of `to`, the group's result (same shape and element type).
  void redirectOutput(const graph::Value& from, const graph::Value& to, const graph::Node& node);
  // A scratch buffer allocated inside the kernel (wrap the using statement with allocate()).
  TensorRef scratch(const std::string& name, graph::DType dtype, std::vector<std::int64_t> shape);
  Stmt allocate(const TensorRef& scratch, Stmt body, bool onHeap = false) const;

  Expr freshVar(const std::string& hint); // an i64 loop variable with a unique name

  // The target's vector register width in bits (0: unknown; schedules leave vectorization
  // to LLVM), for schedules that keep tiles of results in registers.
  void setVectorBits(int bits) { vectorBits_ = bits; }
  int vectorBits() const { return vectorBits_; }
  // A GPU target (LoweringOptions::gpu): the anchor ops build plain nests.
  void setGpu(bool gpu) { gpu_ = gpu; }
  bool gpu() const { return gpu_; }

  // The shapes of the tensors the fused epilogue reads besides the anchor's value.
  void setEpilogueOperands(std::vector<std::vector<std::int64_t>> shapes) {
    epilogueOperands_ = std::move(shapes);
  }
  // True when every epilogue operand, broadcast to `outShape`, is either whole or of extent 1
  // along all of the dims from `from` on: then a run of consecutive positions of those dims,
  // flattened, reads a run of consecutive elements (or one), and the epilogue may be given
  // the flattened position as the last index with zeros before it.
  bool epilogueFlattens(const std::vector<std::int64_t>& outShape, std::size_t from) const;

  // for i0 in [0,shape0) ... body(indices). The outermost loop with more than one
  // iteration is parallel when the nest has at least `parallelThreshold` iterations: a
  // parallel(...) step of the default trace unless the nest is inside a parallel loop of
  // the kernel (finish() decides), else marked parallel in the nest.
  Stmt loopNest(const std::vector<std::int64_t>& shape,
                const std::function<Stmt(const std::vector<Expr>&)>& body,
                const std::string& hint = "i", std::int64_t parallelThreshold = 32768);
  Stmt serialLoop(const Expr& var, std::int64_t extent, Stmt body) const;
  // for var in [0,extent): body, spread over the threads by a parallel(var) step of the
  // default trace when `parallel` (finish() marks it in the nest instead when it ends up
  // inside a parallel loop of the kernel).
  Stmt taskLoop(const Expr& var, std::int64_t extent, Stmt body, bool parallel);

  // One line of loop::Kernel::strategy: how this lowering chose to compute the kernel.
  void describe(const std::string& line) { strategy_ += line + "\n"; }
  // One step of loop::Kernel::defaultTrace ("split(i, 4)"), replayed on the nest built.
  void defaultStep(const std::string& step) { defaultTrace_ += step + "\n"; }
  // One of loop::Kernel::traceVariants: a whole trace the tuner may try instead.
  void traceVariant(std::string trace) { traceVariants_.push_back(std::move(trace)); }

  const std::vector<graph::Value*>& inputValues() const { return inputValues_; }
  const std::vector<graph::Value*>& outputValues() const { return outputValues_; }
  loop::Kernel finish(Stmt body);

private:
  TensorRef makeRef(const std::string& name, graph::DType dtype, std::vector<std::int64_t> shape);

  std::string name_;
  std::vector<std::string> sourceNodes_;
  std::vector<graph::Value*> inputValues_, outputValues_;
  std::vector<TensorRef> inputs_, outputs_;
  std::map<std::string, TensorRef> byValue_;
  std::map<std::string, const graph::Value*> redirects_;
  std::map<std::string, int> varCounts_;
  int vectorBits_ = 0;
  bool gpu_ = false;
  std::vector<std::vector<std::int64_t>> epilogueOperands_;
  std::string strategy_;
  std::string defaultTrace_;
  std::vector<std::string> traceVariants_;
  std::vector<std::string> parallelCandidates_; // parallel loops of loopNest()
};

} // namespace lathe::lowering
