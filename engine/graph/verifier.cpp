#include "engine/graph/verifier.h"

#include "engine/graph/op_table.h"
#include "engine/support/diagnostics.h"

#include <unordered_set>

namespace lathe::graph {

std::string VerifyIssue::text() const {
  std::string s;
  if (!node.empty())
    s += "node '" + node + "'" + (op.empty() ? "" : " (" + op + ")") + ": ";
  if (!value.empty())
    s += "value %" + value + ": ";
  return s + message;
}

namespace {

class Verifier {
public:
  Verifier(std::vector<VerifyIssue>& issues, bool allowUnknownOps)
      : issues_(issues), allowUnknownOps_(allowUnknownOps) {}

  void run(const Graph& g, const std::string& scope) {
    std::unordered_set<const Value*> defined;
    std::unordered_set<const Value*> owned;
    for (const auto& v : g.values())
      owned.insert(v.get());
    for (const auto& v : g.values()) {
      if (v->kind() == ValueKind::NodeOutput)
        continue;
      defined.insert(v.get());
      if (v->isConstant()) {
        const TensorData& t = v->constant();
        if (!t.isElided() &&
            t.byteSize() != static_cast<std::size_t>(t.numElements()) * dtypeSize(t.dtype()))
          add(scope, nullptr, v->name(), "constant data size does not match its type");
      }
    }
    for (const Value* in : g.inputs)
      if (!in || in->kind() != ValueKind::Input)
        add(scope, nullptr, in ? in->name() : "", "graph input is not an input value");

    std::unordered_set<int> closedGroups;
    int currentGroup = -1;
    for (const auto& nptr : g.nodes()) {
      const Node& n = *nptr;
      if (n.group != currentGroup) {
        if (currentGroup >= 0)
          closedGroups.insert(currentGroup);
        currentGroup = n.group;
        if (n.group >= 0 && closedGroups.count(n.group))
          add(scope, &n, {}, "fused group '" + g.groups()[n.group].name + "' is not consecutive");
      }
      if (n.group >= static_cast<int>(g.groups().size()))
        add(scope, &n, {},
            "refers to fused group #" + std::to_string(n.group) + " which does not exist");
      for (const Value* in : n.inputs) {
        if (!in)
          continue;
        if (!owned.count(in))
          add(scope, &n, in->name(), "input belongs to another graph");
        else if (!defined.count(in))
          add(scope, &n, in->name(), "used before it is defined (or never defined)");
      }
      for (std::size_t i = 0; i < n.outputs().size(); ++i) {
        const Value* out = n.outputs()[i];
        if (!out)
          continue;
        if (out->producer() != &n || out->producerIndex() != static_cast<int>(i))
          add(scope, &n, out->name(), "output does not point back at its node");
        if (!defined.insert(out).second)
          add(scope, &n, out->name(), "defined more than once");
      }
      checkOp(scope, n, g.opsetVersion);
      for (const auto& [key, attr] : n.attributes) {
        if (attr.is<GraphPtr>())
          run(*attr.as<GraphPtr>(), scope + n.describe() + "/" + key + ": ");
        if (attr.is<std::vector<GraphPtr>>())
          for (const GraphPtr& sub : attr.as<std::vector<GraphPtr>>())
            run(*sub, scope + n.describe() + "/" + key + ": ");
      }
    }
    for (const Value* out : g.outputs)
      if (!out || !defined.count(out))
        add(scope, nullptr, out ? out->name() : "", "graph output is never defined");
  }

private:
  void checkOp(const std::string& scope, const Node& n, std::int64_t opset) {
    if (!n.domain().empty() && n.domain() != kLatheDomain)
      return; // other domains are not in Lathe's table; the importer refuses them
    const OpInfo* op = findOp(n.domain(), n.opType());
    if (!op) {
      if (!allowUnknownOps_)
        add(scope, &n, {}, "unknown op '" + n.opType() + "'");
      return;
    }
    if (opset < 13)
      return; // the table's arity is that of opset 17; older forms differ
    // Trailing absent optional inputs/outputs do not count.
    auto present = [](const std::vector<Value*>& vs) {
      std::size_t k = vs.size();
      while (k > 0 && !vs[k - 1])
        --k;
      return static_cast<int>(k);
    };
    const int nout = present(n.outputs());
    const int nin = present(n.inputs) - static_cast<int>(n.capturedInputCount());
    if (nin < op->minInputs || (op->maxInputs >= 0 && nin > op->maxInputs))
      add(scope, &n, {},
          "has " + std::to_string(nin) + " inputs; " + std::string(op->name) + " takes " +
              range(op->minInputs, op->maxInputs));
    if (nout < op->minOutputs || (op->maxOutputs >= 0 && nout > op->maxOutputs))
      add(scope, &n, {},
          "has " + std::to_string(nout) + " outputs; " + std::string(op->name) + " gives " +
              range(op->minOutputs, op->maxOutputs));
  }

  static std::string range(int lo, int hi) {
    if (hi < 0)
      return std::to_string(lo) + " or more";
    return lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi);
  }

  void add(const std::string& scope, const Node* n, const std::string& value,
           const std::string& msg) {
    VerifyIssue issue;
    if (n) {
      issue.node = scope + (n->name.empty() ? "(unnamed)" : n->name);
      issue.op = n->opType();
    } else if (!scope.empty()) {
      issue.node = scope.substr(0, scope.size() - 2);
    }
    issue.value = value;
    issue.message = msg;
    issues_.push_back(std::move(issue));
  }

  std::vector<VerifyIssue>& issues_;
  bool allowUnknownOps_;
};

} // namespace

std::vector<VerifyIssue> verifyGraph(const Graph& graph) {
  std::vector<VerifyIssue> issues;
  Verifier(issues, graph.hasUnknownOps).run(graph, "");
  return issues;
}

void verifyGraphOrThrow(const Graph& graph, const std::string& file) {
  auto issues = verifyGraph(graph);
  if (issues.empty())
    return;
  const VerifyIssue& first = issues.front();
  std::string reason = (first.value.empty() ? "" : "value %" + first.value + ": ") + first.message;
  if (issues.size() > 1)
    reason += " (and " + std::to_string(issues.size() - 1) + " more problems)";
  throw Error(ErrorKind::Invalid, reason, {file, first.node, first.op});
}

} // namespace lathe::graph
