// compareNumerics: Lathe's run with every value kept against a reference, value by value.
#include "engine/api/numerics_compare.h"

#include "engine/api/run_inputs.h"
#include "engine/api/session_state.h"
#include "engine/api/value_stats.h"
#include "engine/driver/tensor_convert.h"
#include "engine/frontend/model_format.h"
#include "engine/pipeline/pass_manager.h"
#include "engine/reference/onnxruntime_reference.h"
#include "engine/reference/reference_interpreter.h"
#include "engine/reference/tensor_difference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace lathe::api {
namespace {

using Values = std::unordered_map<std::string, runtime::Tensor>;

// Every node output becomes a graph output: the passes keep graph outputs (fusion, BatchNorm
// folding and layout changes leave them in place) and the executor returns them.
void keepEveryValue(graph::Graph& g) {
  std::unordered_set<const graph::Value*> outputs(g.outputs.begin(), g.outputs.end());
  for (const auto& node : g.nodes())
    for (graph::Value* v : node->outputs())
      if (v && outputs.insert(v).second)
        g.outputs.push_back(v);
}

// Marks as graph outputs the values that the compiled model stores anyway, so the executor
// returns them without changing a kernel: node outputs that keep their imported name and
// type (not renamed or re-laid out), except inside a fused group, whose kernel stores only
// its last node's output.
void keepStoredValues(graph::Graph& g, const graph::Graph& imported) {
  std::unordered_map<std::string, const graph::TensorType*> types;
  for (const auto& node : imported.nodes())
    for (const graph::Value* v : node->outputs())
      if (v)
        types.emplace(v->name(), &v->type);
  std::unordered_set<const graph::Value*> outputs(g.outputs.begin(), g.outputs.end());
  const auto& nodes = g.nodes();
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const graph::Node& node = *nodes[i];
    const bool lastOfGroup = i + 1 == nodes.size() || nodes[i + 1]->group != node.group;
    if (node.group >= 0 && !lastOfGroup)
      continue;
    for (graph::Value* v : node.outputs()) {
      const auto it = v ? types.find(v->name()) : types.end();
      if (it != types.end() && v->type == *it->second && outputs.insert(v).second)
        g.outputs.push_back(v);
    }
  }
}

// Name and element type of every node output, for a reference that must be asked for them.
std::vector<std::pair<std::string, graph::DType>> nodeValues(const graph::Graph& g) {
  std::vector<std::pair<std::string, graph::DType>> values;
  for (const auto& node : g.nodes())
    for (const graph::Value* v : node->outputs())
      if (v)
        values.emplace_back(v->name(), v->type.dtype);
  return values;
}

// A step that failed with a Session's own Failure, passed on unchanged.
struct FailedStep {
  Failure failure;
};

// Imports the model (input shapes fixed as `lathe run` fixes them) without the pipeline.
void openImported(Session& session, const std::string& path, const CompareOptions& o) {
  OpenOptions open;
  open.runPipeline = false;
  open.inputShapes = o.inputShapes;
  open.inputShapesFile = o.inputsNpz;
  open.cancel = o.cancel;
  const OpenResult opened = session.openModel(path, open);
  if (!opened.ok())
    throw FailedStep{*opened.failure};
}

std::vector<std::int64_t> coordinatesOf(std::int64_t flat, const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> at(shape.size());
  for (std::size_t k = shape.size(); k-- > 0;) {
    at[k] = shape[k] > 0 ? flat % shape[k] : 0;
    flat = shape[k] > 0 ? flat / shape[k] : 0;
  }
  return at;
}

std::string typeText(const runtime::Tensor& t) {
  return std::string(runtime::elementTypeName(t.elementType())) + runtime::formatShape(t.shape());
}

// Min/max/mean/std and a histogram of a tensor's finite elements, the bins over `range`
// widened as accumulateStats does.
ConstantStats valueStats(const std::string& name, const runtime::Tensor& t,
                         std::optional<std::pair<double, double>> range = std::nullopt) {
  ConstantStats s;
  s.name = name;
  s.dtype = std::string(runtime::elementTypeName(t.elementType()));
  s.shape = t.shape();
  accumulateStats(
      t.numElements(), [&](std::int64_t i) { return t.elementAsDouble(i); }, 32, s, range);
  return s;
}

// Fills `vc` from Lathe's and the reference's tensors of one value.
void compareValue(ValueComparison& vc, const runtime::Tensor& lathe,
                  const runtime::Tensor& reference, const CompareOptions& o) {
  // Both histograms over one range, so that the two sides line up bin for bin: the side
  // whose own range is narrower is binned again over the other's.
  vc.latheStats = valueStats(vc.value, lathe);
  vc.referenceStats = valueStats(vc.value, reference);
  ConstantStats& l = vc.latheStats;
  ConstantStats& r = vc.referenceStats;
  if (l.count > l.nonFinite && r.count > r.nonFinite) {
    const std::pair range(std::min(l.min, r.min), std::max(l.max, r.max));
    if (l.min != range.first || l.max != range.second)
      l = valueStats(vc.value, lathe, range);
    if (r.min != range.first || r.max != range.second)
      r = valueStats(vc.value, reference, range);
  }
  if (lathe.shape() != reference.shape() || lathe.elementType() != reference.elementType()) {
    vc.status = "diverges";
    vc.note = "Lathe's value is " + typeText(lathe) + ", the reference's " + typeText(reference);
    return;
  }
  const reference::TensorDifference d = reference::compareTensors(lathe, reference, o.rtol, o.atol);
  vc.elements = d.elements;
  vc.outside = d.outside;
  vc.maxAbsError = d.maxAbsError;
  vc.maxRelError = d.maxRelError;
  vc.latheNaN = d.actualNaN;
  vc.latheInf = d.actualInf;
  vc.referenceNaN = d.referenceNaN;
  vc.referenceInf = d.referenceInf;
  vc.status = d.outside > 0 ? "diverges" : "match";
  if (d.outside > 0) {
    vc.firstOutsideAt = coordinatesOf(d.firstOutside, lathe.shape());
    vc.firstOutsideLathe = d.firstActual;
    vc.firstOutsideReference = d.firstReference;
  }
}

// What the reference computed, and why a value may be absent from it.
struct ReferenceValues {
  Values values;
  std::string missingStatus = "not in reference", missingNote;
};

ReferenceValues runInterpreter(const graph::Graph& graph,
                               const std::vector<runtime::NamedTensor>& inputs,
                               CompareReport& report, const std::atomic<bool>* cancel) {
  std::unordered_map<std::string, graph::TensorData> given;
  for (const runtime::NamedTensor& in : inputs)
    given.emplace(in.name, driver::toTensorData(in.tensor));
  reference::Interpretation run = reference::interpretGraph(graph, given, cancel);
  ReferenceValues ref;
  // Converted one by one, so that no value is held twice for long.
  for (auto it = run.values.begin(); it != run.values.end(); it = run.values.erase(it))
    ref.values.emplace(it->first, driver::toTensor(it->second));
  ref.missingNote = "no node of the reference model produces it";
  if (!run.complete) {
    report.referenceStoppedNode = run.stoppedNode;
    report.referenceStoppedOp = run.stoppedOp;
    report.referenceStopReason = run.stopReason;
    ref.missingStatus = "not evaluated";
    ref.missingNote =
        "the reference stopped at node '" + run.stoppedNode + "' (" + run.stoppedOp + ")";
  }
  return ref;
}

ReferenceValues runOnnxRuntime(const CompareOptions& o, const std::string& path,
                               const std::vector<std::pair<std::string, graph::DType>>& wanted,
                               std::vector<runtime::NamedTensor>& inputs) {
  std::vector<runtime::NamedTensor> views;
  for (runtime::NamedTensor& in : inputs)
    views.push_back({in.name, in.tensor.view()});
  ReferenceValues ref;
  for (runtime::NamedTensor& out :
       reference::runOnnxRuntime(path, wanted, views, {o.nodeModules, o.threads, o.cancel}))
    ref.values.emplace(out.name, std::move(out.tensor));
  ref.missingNote = "ONNX Runtime did not return it: no node of the reference model produces it";
  return ref;
}

// Lathe's side: the values its compiled model kept, the inputs it ran on, and the imported
// graph (every node output in order, and what a reference must be asked for).
struct LatheRun {
  Values values;
  std::vector<runtime::NamedTensor> inputs;
  std::shared_ptr<const graph::Graph> imported;
  int threads = 0;
};

// Makes the values of `o.keep` graph outputs around the default pipeline; returns a copy of
// the graph as imported (structure and types only).
std::shared_ptr<const graph::Graph> runPipelineKeepingValues(graph::Graph& g,
                                                             const CompareOptions& o) {
  std::shared_ptr<const graph::Graph> imported = g.clone(0);
  if (o.keep == "all")
    keepEveryValue(g);
  pipeline::PassManager passes;
  passes.addPasses(pipeline::defaultPipeline());
  passes.run(g);
  if (o.keep == "kernels")
    keepStoredValues(g, *imported);
  return imported;
}

// Runs the compiled model once; every graph output is a kept value.
void runKeptValues(const CompareOptions& o, runtime::Executor& exec, LatheRun& run) {
  run.threads = exec.threads();
  const runtime::ExecutionPlan& plan = exec.plan();
  std::vector<runtime::Tensor> inputs = prepareRunInputs(plan, o.inputsNpz, "", o.seed);
  std::vector<runtime::Tensor> outputs = exec.run(inputs);
  for (std::size_t i = 0; i < outputs.size(); ++i)
    run.values.emplace(plan.slots[plan.outputs[i]].name, std::move(outputs[i]));
  for (std::size_t i = 0; i < inputs.size(); ++i)
    run.inputs.push_back({plan.slots[plan.inputs[i]].name, std::move(inputs[i])});
}

// A row's names, type and shape (from the tensor shown when there is one).
ValueComparison describeValue(const graph::Node& node, const graph::Value& v,
                              const runtime::Tensor* shown) {
  ValueComparison vc;
  vc.node = node.name;
  vc.op = node.opType();
  vc.value = v.name();
  vc.dtype =
      shown ? runtime::elementTypeName(shown->elementType()) : graph::dtypeName(v.type.dtype);
  if (shown) {
    vc.shape = shown->shape();
    vc.shapeKnown = true;
  }
  return vc;
}

// One row per node output of the imported graph, in order, and the counts.
void tabulate(const LatheRun& lathe, const ReferenceValues& ref, const CompareOptions& o,
              CompareReport& report) {
  for (const auto& node : lathe.imported->nodes())
    for (const graph::Value* v : node->outputs()) {
      if (!v)
        continue;
      const auto ours = lathe.values.find(v->name());
      const auto theirs = ref.values.find(v->name());
      const runtime::Tensor* shown = ours != lathe.values.end()   ? &ours->second
                                     : theirs != ref.values.end() ? &theirs->second
                                                                  : nullptr;
      ValueComparison vc = describeValue(*node, *v, shown);
      if (ours == lathe.values.end()) {
        vc.status = "not kept";
        vc.note = o.keep == "all" ? "Lathe's passes removed or renamed it"
                                  : "inside a fused kernel, folded, or re-laid out by Lathe";
      } else if (theirs == ref.values.end()) {
        vc.status = ref.missingStatus;
        vc.note = ref.missingNote;
      } else {
        compareValue(vc, ours->second, theirs->second, o);
      }
      report.values.push_back(std::move(vc));
    }
  for (std::size_t i = 0; i < report.values.size(); ++i) {
    const std::string& status = report.values[i].status;
    if (status == "diverges" && report.firstDivergent < 0)
      report.firstDivergent = static_cast<int>(i);
    report.matched += status == "match";
    report.diverged += status == "diverges";
    report.notKept += status == "not kept";
    report.notEvaluated += status == "not evaluated";
    report.notInReference += status == "not in reference";
  }
}

} // namespace

CompareResult compareNumerics(const CompareOptions& o) {
  CompareResult result;
  try {
    if (o.reference != "reference" && o.reference != "onnxruntime")
      throw Error(ErrorKind::Invalid,
                  "unknown reference '" + o.reference + "' (reference or onnxruntime)");
    if (o.keep != "all" && o.keep != "kernels")
      throw Error(ErrorKind::Invalid, "unknown keep mode '" + o.keep + "' (all or kernels)");
    auto report = std::make_shared<CompareReport>();
    report->model = o.model;
    report->referenceModel = o.referenceModel.empty() ? o.model : o.referenceModel;
    if (o.reference == "onnxruntime" &&
        frontend::detectModelFormat(report->referenceModel) != frontend::ModelFormat::Onnx)
      throw Error(ErrorKind::Unsupported,
                  "ONNX Runtime reads ONNX models only, and this is a " +
                      std::string(frontend::modelFormatName(
                          frontend::detectModelFormat(report->referenceModel))) +
                      " model: compare with Lathe's reference interpreter (--reference "
                      "reference), or give an ONNX model of the same network with "
                      "--reference-model",
                  {report->referenceModel, {}, {}});
    report->reference = o.reference;
    report->keep = o.keep;
    report->rtol = o.rtol;
    report->atol = o.atol;
    // Lathe: the model with its values kept, through the default pipeline, compiled and run.
    Session session;
    openImported(session, o.model, o);
    LatheRun lathe;
    lathe.imported = runPipelineKeepingValues(*session.state_->graph, o);
    const auto checkCancel = [&] {
      if (o.cancel && o.cancel->load())
        throw Error(ErrorKind::Cancelled, "the comparison was cancelled");
    };
    checkCancel();
    CompileOptions compile;
    compile.threads = o.threads;
    compile.cancel = o.cancel;
    const CompileResult compiled = session.compile(compile);
    if (!compiled.ok())
      throw FailedStep{*compiled.failure};
    report->latheKernels = compiled.report->kernels.size();
    checkCancel();
    runKeptValues(o, *session.state_->compiled->executor, lathe);
    report->threads = lathe.threads;
    checkCancel();
    ReferenceValues ref;
    if (o.reference == "onnxruntime") {
      ref = runOnnxRuntime(o, report->referenceModel, nodeValues(*lathe.imported), lathe.inputs);
    } else {
      Session imports;
      openImported(imports, report->referenceModel, o);
      ref = runInterpreter(*imports.state_->graph, lathe.inputs, *report, o.cancel);
    }
    checkCancel();
    tabulate(lathe, ref, o, *report);
    result.report = std::move(report);
  } catch (const FailedStep& step) {
    result.failure = step.failure;
  } catch (const Error& e) {
    result.failure = toFailure(e.within({o.model, {}, {}}));
  } catch (const std::exception& e) {
    result.failure =
        Failure{"internal", o.model + ": internal error: " + e.what(), o.model, {}, {}, e.what()};
  }
  return result;
}

} // namespace lathe::api
