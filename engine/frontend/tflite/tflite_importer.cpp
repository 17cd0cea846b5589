#include "engine/frontend/tflite/tflite_importer.h"

#include "engine/frontend/tflite/tflite_convert.h"
#include "engine/graph/verifier.h"
#include "engine/graph_passes/infer_shapes.h"
#include "engine/support/diagnostics.h"

#include <algorithm>
#include <filesystem>

namespace lathe::frontend {
namespace tflite {
namespace {

const std::unordered_map<int, OpEntry>& opTable() {
  static const std::unordered_map<int, OpEntry> table = [] {
    std::unordered_map<int, OpEntry> t;
    registerElementwiseOps(t);
    registerShapeOps(t);
    registerSpatialOps(t);
    registerQuantOps(t);
    registerTransposedOps(t);
    registerPartOps(t);
    return t;
  }();
  return table;
}

const std::unordered_map<std::string, OpEntry>& customOpTable() {
  static const std::unordered_map<std::string, OpEntry> table = [] {
    std::unordered_map<std::string, OpEntry> t;
    registerCustomOps(t);
    return t;
  }();
  return table;
}

bool isQuantizedType(graph::DType t) {
  return t == graph::DType::I8 || t == graph::DType::U8 || t == graph::DType::I16;
}

// PassThrough operators run on the stored integers when every quantized tensor they touch
// has the same parameters (so moving values moves their meaning) and none is float.
bool runsOnIntegers(TfliteModel& model, const lathe_tflite::Operator& op) {
  const Quant* first = nullptr;
  bool sawFloatData = false;
  auto visit = [&](const flatbuffers::Vector<std::int32_t>* list, bool dataOnly) {
    if (!list)
      return;
    for (flatbuffers::uoffset_t i = 0; i < list->size(); ++i) {
      const std::int32_t idx = list->Get(i);
      if (idx < 0 || (dataOnly && i > 0))
        continue;
      const TensorInfo& info = model.tensor(idx, "an operator");
      if (!(info.quant.present() && isQuantizedType(info.dtype))) {
        sawFloatData = sawFloatData || graph::isFloat(info.dtype);
        continue;
      }
      if (!first)
        first = &info.quant;
      else if (!(*first == info.quant))
        sawFloatData = true; // differing parameters: go through float
    }
  };
  visit(op.inputs(), false);
  visit(op.outputs(), false);
  return first && !sawFloatData;
}

// The shapes and types Lathe computes agree with the ones the file declares.
void checkDeclaredTypes(TfliteModel& model, const graph::Graph& g,
                        const std::vector<std::pair<std::int64_t, std::string>>& written) {
  for (const auto& [index, who] : written) {
    const TensorInfo& info = model.tensor(index, who);
    const graph::Value* v = g.findValue(info.name);
    if (!v || !v->type.hasRank() || !v->type.isStatic())
      continue;
    const graph::TensorType declared = graph::TensorType::of(info.dtype, info.shape);
    if (v->type.staticDims() != info.shape || v->type.dtype != info.dtype)
      throw Error(ErrorKind::Invalid,
                  who + " writes tensor '" + info.name + "' as " + graph::toString(declared) +
                      " in the file, but its inputs and options give " + graph::toString(v->type),
                  {model.path(), info.fileName, {}});
  }
}

} // namespace

const OpEntry* findOp(lathe_tflite::BuiltinOperator op) {
  const auto& t = opTable();
  auto it = t.find(static_cast<int>(op));
  return it == t.end() ? nullptr : &it->second;
}

const OpEntry* findCustomOp(const std::string& name) {
  const auto& t = customOpTable();
  auto it = t.find(name);
  return it == t.end() ? nullptr : &it->second;
}

} // namespace tflite

std::vector<std::string> supportedTfliteOperators() {
  std::vector<std::string> names;
  for (const auto& [code, entry] : tflite::opTable())
    names.push_back(tflite::builtinName(static_cast<lathe_tflite::BuiltinOperator>(code)));
  for (const auto& [custom, entry] : tflite::customOpTable())
    names.push_back(custom + " (custom)");
  std::sort(names.begin(), names.end());
  return names;
}

ImportResult importTfliteFile(const std::string& path, const ImportOptions& options) {
  using namespace tflite;
  auto progress = [&](int percent, const std::string& stage) {
    reportImportProgress(options, path, percent, stage);
  };
  progress(0, "parsing");
  TfliteModel model(path);
  ImportResult result;
  result.format = ModelFormat::Tflite;
  result.graph = std::make_unique<graph::Graph>();
  graph::Graph& g = *result.graph;
  g.name = std::filesystem::path(path).stem().string();
  g.opsetVersion = 17;
  result.sourceOpset = g.opsetVersion;
  Converter cv(model, g);
  cv.reserveNames();

  const lathe_tflite::SubGraph& sg = model.subgraph();
  if (!sg.inputs() || !sg.outputs() || sg.outputs()->size() == 0)
    throw Error(ErrorKind::Invalid, "the subgraph lists no inputs or no outputs", {path, {}, {}});
  for (std::int32_t idx : *sg.inputs()) {
    const TensorInfo& info = model.tensor(idx, "the subgraph's input list");
    if (cv.bound(idx))
      throw Error(ErrorKind::Invalid, "tensor '" + info.name + "' is listed twice as an input",
                  {path, info.fileName, {}});
    cv.bind(idx, g.addInput(info.name, graph::TensorType::of(info.dtype, info.shape)));
    if (info.dynamicDims)
      result.warnings.push_back("input '" + info.name +
                                "' has dimensions the file marks as dynamic; they are imported "
                                "at the file's default sizes (set others with --input-shapes)");
  }

  AuthoredRecorder authored(g);
  std::vector<std::pair<std::int64_t, std::string>> written;
  const auto* ops = sg.operators();
  const std::size_t opCount = ops ? ops->size() : 0;
  for (std::size_t i = 0; i < opCount; ++i) {
    if (i % 64 == 0)
      progress(10 + static_cast<int>(70 * i / std::max<std::size_t>(opCount, 1)),
               "translating operators");
    const lathe_tflite::Operator& op = *ops->Get(static_cast<flatbuffers::uoffset_t>(i));
    const lathe_tflite::BuiltinOperator code = model.opcode(op, i);
    const bool custom = code == lathe_tflite::BuiltinOperator::CUSTOM;
    const std::string name = custom ? model.customCode(op) : builtinName(code);
    const OpEntry* entry = custom ? findCustomOp(name) : findOp(code);
    if (!entry) {
      std::string out;
      if (op.outputs() && op.outputs()->size() > 0)
        out = model.tensor(op.outputs()->Get(0), "operator " + std::to_string(i)).fileName;
      if (custom)
        throw Error(ErrorKind::Unsupported,
                    "operator " + std::to_string(i) + " is the custom operator '" + name +
                        "', which Lathe does not know",
                    {path, out, "CUSTOM"});
      using B = lathe_tflite::BuiltinOperator;
      if (code == B::WHILE || code == B::IF || code == B::CALL_ONCE || code == B::CALL)
        throw Error(ErrorKind::Unsupported,
                    "operator " + std::to_string(i) + ": TFLite's " + name +
                        " runs another subgraph (control flow), which Lathe's TFLite importer "
                        "does not translate",
                    {path, out, name});
      throw Error(ErrorKind::Unsupported,
                  "operator " + std::to_string(i) + ": TFLite's " + name +
                      " is not supported by Lathe's TFLite importer",
                  {path, out, name});
    }
    bool dequantize = entry->quant == QuantMode::Float;
    if (entry->quant == QuantMode::PassThrough)
      dequantize = !runsOnIntegers(model, op);
    OpContext ctx(cv, op, i, name, dequantize);
    if (ctx.outputCount() == 0)
      ctx.invalid("has no outputs");
    entry->handler(ctx);
    const std::vector<graph::Value*> outs = ctx.finalOutputs();
    for (std::size_t k = 0; k < outs.size(); ++k) {
      LATHE_CHECK(outs[k] != nullptr,
                  name + " handler left output " + std::to_string(k) + " unset");
      written.emplace_back(op.outputs()->Get(static_cast<flatbuffers::uoffset_t>(k)),
                           "operator " + std::to_string(i) + " (" + name + ")");
    }
    const TensorInfo& written0 = ctx.outputInfo(0);
    authored.take({name,
                   written0.fileName.empty() ? written0.name : written0.fileName,
                   "operator " + std::to_string(i),
                   describeOptions(op),
                   {}});
  }

  for (std::int32_t idx : *sg.outputs())
    g.outputs.push_back(cv.tensorValue(idx, "the subgraph's output list"));

  progress(85, "inferring shapes");
  g.pruneUnusedValues();
  result.authored = authored.finish();
  passes::inferShapes(g);
  checkDeclaredTypes(model, g, written);
  graph::verifyGraphOrThrow(g, path);
  progress(100, "imported");
  return result;
}

} // namespace lathe::frontend
