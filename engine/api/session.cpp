#include "engine/api/session.h"

#include "engine/api/session_state.h"
#include "engine/api/snapshot.h"
#include "engine/driver/compile_model.h"
#include "engine/driver/input_shapes.h"
#include "engine/frontend/model_format.h"
#include "engine/frontend/onnx/onnx_importer.h"
#include "engine/graph/op_table.h"
#include "engine/pipeline/instruments.h"
#include "engine/runtime/npy.h"
#include "engine/support/diagnostics.h"
#include "engine/support/memory_usage.h"
#include "engine/support/timer.h"

namespace lathe::api {

std::vector<PassInfoSummary> defaultPipeline() {
  std::vector<PassInfoSummary> out;
  for (const pipeline::PassInfo* p : pipeline::defaultPipeline())
    out.push_back({std::string(p->name), std::string(p->description)});
  return out;
}

std::vector<OpInfoSummary> knownOps() {
  std::vector<OpInfoSummary> out;
  auto arity = [](int lo, int hi) {
    if (hi < 0)
      return std::to_string(lo) + " or more";
    return lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi);
  };
  auto role = [](graph::FusionRole r) {
    switch (r) {
    case graph::FusionRole::Anchor:
      return "anchor";
    case graph::FusionRole::Elementwise:
      return "elementwise";
    case graph::FusionRole::Opaque:
      return "opaque";
    }
    return "?";
  };
  for (const graph::OpInfo& op : graph::allOps())
    out.push_back({std::string(op.name), std::string(graph::categoryName(op.category)),
                   std::string(op.summary), role(op.fusion), arity(op.minInputs, op.maxInputs),
                   arity(op.minOutputs, op.maxOutputs)});
  return out;
}

Session::Session() : state_(std::make_unique<State>()) {}
Session::~Session() = default;

Failure toFailure(const Error& e) {
  Failure f;
  f.kind = errorKindName(e.kind());
  f.message = e.what();
  f.file = e.where().file;
  f.node = e.where().node;
  f.op = e.where().op;
  f.reason = e.reason();
  return f;
}

namespace {

// Pipeline progress maps onto 50..100 % (import takes the first half).
class ProgressInstrument : public pipeline::PassInstrument {
public:
  ProgressInstrument(const OpenOptions& options, std::size_t passCount)
      : options_(options), passCount_(passCount) {}
  void beforePass(const pipeline::PassInfo& pass, const graph::Graph&) override {
    if (options_.onProgress)
      options_.onProgress({50 + static_cast<int>(50 * done_ / std::max<std::size_t>(passCount_, 1)),
                           "pass " + std::string(pass.name)});
    ++done_;
  }

private:
  const OpenOptions& options_;
  std::size_t passCount_;
  std::size_t done_ = 0;
};

// The default pipeline less the passes named (each must be one of it).
std::vector<const pipeline::PassInfo*> pipelineWithout(const std::vector<std::string>& disabled) {
  std::vector<const pipeline::PassInfo*> passes = pipeline::defaultPipeline();
  for (const std::string& name : disabled) {
    const auto before = passes.size();
    std::erase_if(passes, [&](const pipeline::PassInfo* p) { return p->name == name; });
    if (passes.size() == before) {
      std::string known;
      for (const pipeline::PassInfo* p : pipeline::defaultPipeline())
        if (known.find(std::string(p->name) + ",") == std::string::npos)
          known += std::string(p->name) + ", ";
      throw Error(ErrorKind::Invalid, "cannot disable pass '" + name +
                                          "': the pipeline's passes are " +
                                          known.substr(0, known.size() - 2));
    }
  }
  return passes;
}

} // namespace

bool modelNeedsInputShapes(const std::string& path) {
  try {
    return frontend::detectModelFormat(path) == frontend::ModelFormat::TorchScript;
  } catch (const Error&) {
    return false; // opening says what is wrong with the file
  }
}

OpenResult Session::openModel(const std::string& path, const OpenOptions& options) {
  OpenResult result;
  try {
    auto report = std::make_shared<ModelReport>();
    report->path = path;
    frontend::ImportOptions importOptions;
    importOptions.cancel = options.cancel;
    importOptions.allowUnknownOps = options.allowUnknownOps;
    if (options.onProgress)
      importOptions.onProgress = [&](int percent, const std::string& stage) {
        options.onProgress({options.runPipeline ? percent / 2 : percent, stage});
      };
    // TorchScript records no input shapes: the importer takes them from --input-shapes and
    // from the arrays of the input file (their element types too).
    if (frontend::detectModelFormat(path) == frontend::ModelFormat::TorchScript) {
      importOptions.inputShapes = options.inputShapes;
      if (!options.inputShapesFile.empty())
        for (const runtime::ArrayInfo& a : runtime::describeNpz(options.inputShapesFile)) {
          importOptions.inputShapes.emplace(a.name, a.shape);
          for (graph::DType d : {graph::DType::F32, graph::DType::F64, graph::DType::F16,
                                 graph::DType::I64, graph::DType::I32, graph::DType::Bool})
            if (driver::elementTypeOf(d) == a.type)
              importOptions.inputTypes[a.name] = d;
        }
    }
    Stopwatch watch;
    frontend::ImportResult imported = frontend::importModelFile(path, importOptions);
    report->importMilliseconds = watch.elapsedMs();
    report->peakResidentBytes = peakResidentBytes();
    report->sourceOpset = imported.sourceOpset;
    report->format = frontend::modelFormatName(imported.format);
    driver::applyInputShapes(*imported.graph, options.inputShapes, path, "--input-shapes");
    if (!options.inputShapesFile.empty())
      driver::applyInputShapes(*imported.graph,
                               driver::shapesFromInputFile(*imported.graph, options.inputShapesFile,
                                                           options.inputShapes),
                               path, "the input file '" + options.inputShapesFile + "'");
    if (!options.inputShapesFile.empty())
      for (std::string& note :
           driver::specialiseIntegerScalars(*imported.graph, options.inputShapesFile, path))
        report->warnings.push_back(std::move(note));
    for (const std::string& w : imported.warnings)
      report->warnings.push_back(w);
    report->imported = makeSnapshot(*imported.graph);
    if (!imported.authored.empty())
      report->authored = std::make_shared<const GraphSnapshot>(
          makeAuthoredSnapshot(report->imported, imported.authored, report->format));

    if (options.runPipeline) {
      pipeline::PassManager pm;
      std::vector<std::string> disabled = options.disabledPasses;
      if (options.forGpu)
        for (const char* cpuOnly : {"layout-nchwc", "winograd-nchwc"})
          if (std::find(disabled.begin(), disabled.end(), cpuOnly) == disabled.end())
            disabled.push_back(cpuOnly);
      pm.addPasses(pipelineWithout(disabled));
      pipeline::PassTrace trace;
      ProgressInstrument progress(options, pm.passes().size());
      pm.addInstrument(&progress);
      pm.addInstrument(&trace);
      watch.restart();
      try {
        pm.run(*imported.graph, options.cancel);
      } catch (const Error& e) {
        // Models older than opset 7 reach the pipeline only through the ONNX version
        // converter, which leaves some of them inconsistent (e.g. PRelu slopes).
        if (e.kind() != ErrorKind::Invalid || imported.format != frontend::ModelFormat::Onnx ||
            imported.sourceOpset >= frontend::kMinNativeOpset)
          throw;
        throw Error(ErrorKind::Unsupported,
                    "opset " + std::to_string(imported.sourceOpset) +
                        " model is inconsistent after conversion to opset " +
                        std::to_string(imported.graph->opsetVersion) + ": " + e.reason(),
                    e.where());
      }
      report->pipelineMilliseconds = watch.elapsedMs();
      for (const pipeline::PassSnapshot& s : trace.snapshots()) {
        PassRecord r;
        r.name = s.name;
        r.description = s.description;
        r.milliseconds = s.milliseconds;
        r.changed = s.changed;
        r.irBefore = s.irBefore;
        r.irAfter = s.irAfter;
        r.graphAfter = std::make_shared<const GraphSnapshot>(makeSnapshot(*s.graphAfter));
        report->passes.push_back(std::move(r));
      }
    }
    report->final = makeSnapshot(*imported.graph);
    report->peakResidentBytes = std::max(report->peakResidentBytes, peakResidentBytes());
    if (options.onProgress)
      options.onProgress({100, "done"});
    result.report = std::move(report);
    state_->graph = std::move(imported.graph);
    state_->path = path;
    state_->forgetCompile();
    if (!state_->specialising) { // the caller's own open
      state_->variants.clear();
      state_->openOptions = options;
      state_->openOptions.onProgress = nullptr;
      state_->openOptions.cancel = nullptr;
      state_->declaredInputs.clear();
      for (const graph::Value* v : state_->graph->inputs) {
        const auto n = v->type.isStatic() ? v->type.numElements() : std::nullopt;
        state_->declaredInputs.push_back(
            {v->name(), !v->type.isStatic(), graph::isInteger(v->type.dtype) && n && *n == 1});
      }
      state_->symbolicInputs =
          std::any_of(state_->declaredInputs.begin(), state_->declaredInputs.end(),
                      [](const State::DeclaredInput& in) { return in.symbolic; });
      state_->specialisedFor.clear();
    }
  } catch (const Error& e) {
    result.failure = toFailure(e);
  } catch (const std::bad_alloc&) {
    result.failure = Failure{"internal", path + ": out of memory", path, {}, {}, "out of memory"};
  } catch (const std::exception& e) {
    result.failure =
        Failure{"internal", path + ": internal error: " + e.what(), path, {}, {}, e.what()};
  }
  return result;
}

} // namespace lathe::api
