#include "engine/lowering/lower_graph.h"

#include "engine/graph/op_table.h"
#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/simplify.h"
#include "engine/loop_ir/substitute.h"
#include "engine/lowering/op_rules.h"
#include "engine/lowering/window_helpers.h"
#include "engine/support/diagnostics.h"

#include <cctype>
#include <unordered_map>
#include <unordered_set>

namespace lathe::lowering {

std::int64_t TensorSlot::byteSize() const {
  std::int64_t n = static_cast<std::int64_t>(graph::dtypeSize(dtype));
  for (std::int64_t d : shape)
    n *= d;
  return n;
}

namespace {

using graph::Node;
using graph::Value;

// Operands of the first node of a kernel come from the kernel's input buffers.
class BufferReader : public OperandReader {
public:
  BufferReader(const Node& node, KernelBuilder& kb) : node_(node), kb_(kb) {}
  Expr read(std::size_t input, const std::vector<Expr>& index) override {
    return buffer(input).load(index);
  }
  Expr readFlat(std::size_t input, const Expr& flat) override {
    return buffer(input).loadFlat(flat);
  }

private:
  TensorRef buffer(std::size_t input) {
    const Value* v = node_.input(input);
    LATHE_CHECK(v, "read of an absent operand of " + node_.describe());
    return kb_.input(*v, node_);
  }
  const Node& node_;
  KernelBuilder& kb_;
};

// Inside a fused chain, the previous op's result is an expression, not a buffer: fusion
// guarantees it has the output's shape, so it is read at the output index itself.
class ChainReader : public OperandReader {
public:
  ChainReader(const Node& node, KernelBuilder& kb, const Value* chained, Expr value)
      : buffers_(node, kb), node_(node), chained_(chained), value_(std::move(value)) {}
  Expr read(std::size_t input, const std::vector<Expr>& index) override {
    return node_.input(input) == chained_ ? value_ : buffers_.read(input, index);
  }
  Expr readFlat(std::size_t input, const Expr& flat) override {
    return node_.input(input) == chained_ ? value_ : buffers_.readFlat(input, flat);
  }

private:
  BufferReader buffers_;
  const Node& node_;
  const Value* chained_;
  Expr value_;
};

PointwiseRule pointwiseRule(const Node& node) {
  const auto& table = rules().pointwise;
  auto it = node.domain().empty() ? table.find(node.opType()) : table.end();
  return it == table.end() ? nullptr : it->second;
}

KernelRule kernelRule(const Node& node) {
  // Lathe's own ops are registered as "lathe::Op".
  const auto& table = rules().kernels;
  auto it = node.domain().empty() ? table.find(node.opType())
            : node.domain() == graph::kLatheDomain
                ? table.find(node.domain() + "::" + node.opType())
                : table.end();
  return it == table.end() ? nullptr : it->second;
}

std::string kernelName(const Node& node, std::size_t index) {
  std::string name = "k" + std::to_string(index) + "_";
  for (char c : node.opType())
    name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

class Lowerer {
public:
  Lowerer(const graph::Graph& g, const LoweringOptions& options) : g_(g), options_(options) {}

  LoweredModel run() {
    for (const auto& [value, uses] : g_.computeUses())
      if (!uses.empty())
        uses_.insert(value);
    for (const Value* v : g_.inputs)
      slotOf(*v, SlotKind::Input);
    // Nodes are consecutive within a group; each unit becomes one kernel.
    std::vector<const Node*> unit;
    auto flush = [&] {
      if (!unit.empty())
        lowerUnit(unit);
      unit.clear();
    };
    for (const auto& n : g_.nodes()) {
      if (!unit.empty() && (n->group < 0 || n->group != unit.front()->group))
        flush();
      unit.push_back(n.get());
      if (n->group < 0)
        flush();
    }
    flush();
    for (const Value* v : g_.outputs) {
      const int slot = slotOf(*v, SlotKind::Intermediate);
      if (model_.slots[slot].kind == SlotKind::Intermediate)
        model_.slots[slot].kind = SlotKind::Output;
      model_.outputs.push_back(slot);
    }
    for (const Value* v : g_.inputs)
      model_.inputs.push_back(slots_.at(v));
    return std::move(model_);
  }

private:
  int slotOf(const Value& v, SlotKind kind, bool mayBeDynamic = false) {
    if (auto it = slots_.find(&v); it != slots_.end())
      return it->second;
    TensorSlot s;
    s.name = v.name();
    s.kind = v.isConstant() ? SlotKind::Constant : kind;
    s.dtype = v.type.dtype;
    if (!v.type.isStatic()) {
      if (!mayBeDynamic || !v.type.shape)
        throw Error(ErrorKind::Unsupported,
                    "value '" + v.name() + "' has shape " + graph::toString(v.type) +
                        "; code generation needs static shapes (fix them with --input-shapes)");
      s.dynamicShape = true;
      for (const graph::Dim& d : *v.type.shape)
        s.shape.push_back(d.isKnown() ? d.value : -1);
    } else {
      s.shape = v.type.staticDims();
    }
    if (v.isConstant())
      s.constant = v.constant();
    model_.slots.push_back(std::move(s));
    return slots_[&v] = static_cast<int>(model_.slots.size()) - 1;
  }

  // If, Loop and Scan: a host call. Their outputs may have run-time shapes (a Loop's scan
  // outputs) only when nothing but the model's outputs reads them.
  void lowerControlFlow(const Node& node) {
    KernelCall call;
    for (const Value* v : node.inputs)
      if (v)
        call.args.push_back(slotOf(*v, SlotKind::Intermediate));
    for (const Value* v : node.outputs())
      if (v) {
        const bool onlyOutput = g_.isGraphOutput(v) && uses_.count(v) == 0;
        if (!v->type.isStatic() && !onlyOutput)
          unsupportedNode(node, "output '" + v->name() + "' has shape " + graph::toString(v->type) +
                                    " (known only at run time) and other nodes read it");
        call.args.push_back(slotOf(*v, SlotKind::Intermediate, onlyOutput));
      }
    call.nodes = {node.name};
    call.hostNode = &node;
    model_.calls.push_back(std::move(call));
  }

  static bool isControlFlow(const Node& node) {
    return node.domain().empty() &&
           (node.opType() == "If" || node.opType() == "Loop" || node.opType() == "Scan");
  }

  // bf16 values are kept as their bits (u16): only Cast and ops that move elements without
  // looking at them may touch them, or arithmetic would run on the bits.
  static void checkBf16(const Node& node) {
    static const std::unordered_set<std::string> allowed = {
        "Cast",      "CastLike",  "Identity", "Reshape", "Flatten", "Squeeze",
        "Unsqueeze", "Transpose", "Concat",   "Split",   "Slice",   "Expand"};
    auto isBf16 = [](const Value* v) { return v && v->type.dtype == graph::DType::BF16; };
    bool touches = false;
    for (const Value* v : node.inputs)
      touches = touches || isBf16(v);
    for (const Value* v : node.outputs())
      touches = touches || isBf16(v);
    if (touches && !allowed.count(node.opType()))
      unsupportedNode(node,
                      "bf16 values only support Cast and data movement, not " + node.opType());
  }

  void lowerUnit(const std::vector<const Node*>& nodes) {
    const Node& head = *nodes.front();
    for (const Node* n : nodes)
      checkBf16(*n);
    if (nodes.size() == 1 && isControlFlow(head)) {
      try {
        lowerControlFlow(head);
      } catch (const Error& e) {
        throw e.within({{}, head.name, head.opType()});
      }
      return;
    }
    const Node& last = *nodes.back();
    std::vector<std::string> names;
    for (const Node* n : nodes)
      names.push_back(n->name);
    const std::string name =
        head.group >= 0 ? g_.groups()[head.group].name : kernelName(head, model_.calls.size());
    KernelBuilder kb(name, names);
    kb.setVectorBits(options_.vectorBits);
    kb.setGpu(options_.gpu);
    std::vector<std::vector<std::int64_t>> epilogueOperands;
    for (std::size_t k = 1; k < nodes.size(); ++k)
      for (const Value* v : nodes[k]->inputs)
        if (v && v != nodes[k - 1]->output(0))
          epilogueOperands.push_back(v->type.isStatic() ? v->type.staticDims()
                                                        : std::vector<std::int64_t>{-1});
    kb.setEpilogueOperands(std::move(epilogueOperands));
    Stmt body;
    try {
      // The epilogue: the nodes after the head, applied in order to the head's value.
      Epilogue epilogue = [&](Expr value, const std::vector<Expr>& outIndex) {
        return applyChain(nodes, kb, std::move(value), outIndex);
      };
      if (KernelRule rule = kernelRule(head)) {
        if (nodes.size() > 1) // the anchor writes straight into the group's result
          kb.redirectOutput(*head.output(0), *last.output(0), head);
        body = rule(head, kb, epilogue);
      } else if (PointwiseRule rule = pointwiseRule(head)) {
        if (head.outputs().size() != 1)
          unsupportedNode(head, "pointwise op with several outputs");
        const TensorRef out = kb.output(*last.output(0), last);
        body = kb.loopNest(out.shape, [&](const std::vector<Expr>& idx) {
          BufferReader reader(head, kb);
          return out.store(idx, epilogue(rule(head, idx, reader), idx));
        });
      } else {
        unsupportedNode(head, "no code generation for op '" + head.opType() + "' yet");
      }
    } catch (const Error& e) {
      throw e.within({{}, head.name, head.opType()});
    }
    loop::Kernel kernel = loop::simplify(kb.finish(body));
    KernelCall call;
    call.kernel = kernel.name;
    for (const Value* v : kb.inputValues())
      call.args.push_back(slotOf(*v, SlotKind::Intermediate));
    for (const Value* v : kb.outputValues())
      call.args.push_back(slotOf(*v, SlotKind::Intermediate));
    call.nodes = std::move(names);
    model_.kernels.push_back(std::move(kernel));
    model_.calls.push_back(std::move(call));
  }

  // The nodes after the head applied in order to `value`, the head's result. Each node
  // reads the value before it through a variable: a value read more than once (Relu is
  // select(x > 0, x, 0)) is bound once by a Let around the rest of the chain instead of
  // being copied into every use, which would double the expression with every such node.
  static Expr applyChain(const std::vector<const Node*>& nodes, KernelBuilder& kb, Expr value,
                         const std::vector<Expr>& outIndex) {
    std::vector<std::pair<Expr, Expr>> lets; // (variable, value), outermost first
    for (std::size_t k = 1; k < nodes.size(); ++k) {
      const Node& node = *nodes[k];
      const Value* chained = nodes[k - 1]->output(0);
      const Expr operand = freshScalar(kb, letHint(*nodes[k - 1]), value.type());
      ChainReader reader(node, kb, chained, operand);
      Expr result = requirePointwise(node)(node, outIndex, reader);
      const std::string& name = operand.as<loop::Var>()->name;
      if (loop::countUses(result, name) > 1 && !isCheapToCopy(value)) {
        lets.emplace_back(operand, std::move(value));
        value = std::move(result);
      } else {
        value = loop::substitute(result, name, value);
      }
    }
    for (auto it = lets.rbegin(); it != lets.rend(); ++it)
      value = loop::Let::make(it->first, it->second, std::move(value));
    return value;
  }

  // A variable or a constant: copying it into every use costs nothing.
  static bool isCheapToCopy(const Expr& e) {
    const loop::Broadcast* b = e.as<loop::Broadcast>();
    return e.as<loop::Var>() || loop::isConst(e) || (b && b->value.as<loop::Var>());
  }

  // The name of a chained value's variable: the op that computes it ("relu", "relu1", ...).
  static std::string letHint(const Node& producer) {
    std::string hint;
    for (char c : producer.opType())
      hint += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return hint;
  }

  static PointwiseRule requirePointwise(const Node& node) {
    PointwiseRule rule = pointwiseRule(node);
    if (!rule)
      unsupportedNode(node, "fused into an epilogue but has no pointwise lowering");
    return rule;
  }

  const graph::Graph& g_;
  LoweringOptions options_;
  LoweredModel model_;
  std::unordered_map<const Value*, int> slots_;
  std::unordered_set<const Value*> uses_; // values some node reads
};

} // namespace

LoweredModel lowerGraph(const graph::Graph& graph, const LoweringOptions& options) {
  return Lowerer(graph, options).run();
}

} // namespace lathe::lowering
