// lathe inspect MODEL [--print-topology] [--print-ir-after-all] [--pass-times] [--authored]
//   [--json] [--input-shapes ...]
#include "app/cli/commands.h"
#include "engine/api/session.h"

#include <cstdio>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace lathe::cli {
namespace {

struct InspectOptions {
  std::string model;
  bool topology = false;
  bool irAfterAll = false;
  bool passTimes = false;
  bool authored = false;
  bool json = false;
  bool noPasses = false;
  std::vector<std::string> disabledPasses;
  std::string inputShapes;
};

std::string shapeText(const api::TensorSummary& t) {
  if (!t.rankKnown)
    return "[*]";
  std::string s = "[";
  for (std::size_t i = 0; i < t.dims.size(); ++i)
    s += (i ? "," : "") + t.dims[i];
  return s + "]";
}

void printTopology(const api::ModelReport& r) {
  auto table = [](const char* title, const std::vector<api::TensorSummary>& ts) {
    std::cout << title << " (" << ts.size() << "):\n";
    std::size_t width = 4;
    for (const auto& t : ts)
      width = std::max(width, t.name.size());
    for (const auto& t : ts)
      std::cout << "  " << std::left << std::setw(static_cast<int>(width)) << t.name << "  "
                << std::setw(5) << t.dtype << " " << shapeText(t) << "\n";
  };
  const api::GraphSnapshot& g = r.imported;
  std::cout << "model: " << r.path << " (" << r.format << ")\ngraph: " << g.name << "  opset "
            << g.opset
            << (r.sourceOpset != g.opset ? " (converted from " + std::to_string(r.sourceOpset) + ")"
                                         : "")
            << "  " << g.nodes.size() << " nodes, " << g.constants.size() << " constants\n";
  table("inputs", g.inputs);
  table("outputs", g.outputs);
}

void printPassTimes(const api::ModelReport& r) {
  std::cout << std::left << std::setw(34) << "pass" << std::right << std::setw(10) << "time ms"
            << std::setw(9) << "changed" << std::setw(8) << "nodes" << "\n";
  std::cout << std::left << std::setw(34) << "import" << std::right << std::setw(10) << std::fixed
            << std::setprecision(2) << r.importMilliseconds << std::setw(9) << "-" << std::setw(8)
            << r.imported.nodes.size() << "\n";
  for (const auto& p : r.passes)
    std::cout << std::left << std::setw(34) << p.name << std::right << std::setw(10)
              << p.milliseconds << std::setw(9) << (p.changed ? "yes" : "no") << std::setw(8)
              << p.graphAfter->nodes.size() << "\n";
  std::cout << std::left << std::setw(34) << "total (passes)" << std::right << std::setw(10)
            << r.pipelineMilliseconds << "\n";
  std::cout << std::left << std::setw(34) << "total (import + passes)" << std::right
            << std::setw(10) << r.importMilliseconds + r.pipelineMilliseconds << "\n";
}

// The graph as the file has it: one line per operator of a TFLite or TorchScript file, with
// what it reads, its options, and the graph IR nodes it was imported as.
void printAuthored(const api::ModelReport& r) {
  if (!r.authored) {
    std::cout << "as authored: the " << r.format
              << " file's own nodes are the imported graph (--print-ir-after-all shows it)\n";
    return;
  }
  const api::GraphSnapshot& g = *r.authored;
  std::cout << "as authored (" << r.format << "): " << g.nodes.size() << " operators, imported as "
            << r.imported.nodes.size() << " graph IR nodes\n";
  for (const api::NodeSummary& n : g.nodes) {
    std::cout << "  " << n.opType << " " << (n.name.empty() ? "(unnamed)" : n.name);
    if (!n.source.empty())
      std::cout << "  [" << n.source << "]";
    std::cout << "\n    reads:";
    for (const std::string& in : n.inputs)
      std::cout << " " << in;
    if (!n.attributes.empty()) {
      std::cout << "\n    options:";
      for (const api::AttributeSummary& a : n.attributes)
        std::cout << " " << a.name << "=" << a.text;
    }
    std::cout << "\n    imported as:";
    if (n.importedNodes.empty())
      std::cout << " itself (added by the importer, not an operator of the file)";
    for (int m : n.importedNodes)
      std::cout << " " << r.imported.nodes[static_cast<std::size_t>(m)].opType;
    std::cout << "\n";
  }
}

nlohmann::json authoredJson(const api::ModelReport& r) {
  nlohmann::json ops = nlohmann::json::array();
  for (const api::NodeSummary& n : r.authored->nodes) {
    nlohmann::json options = nlohmann::json::object();
    for (const api::AttributeSummary& a : n.attributes)
      options[a.name] = a.text;
    nlohmann::json importedAs = nlohmann::json::array();
    for (int m : n.importedNodes)
      importedAs.push_back(r.imported.nodes[static_cast<std::size_t>(m)].opType);
    ops.push_back({{"op", n.opType},
                   {"name", n.name},
                   {"source", n.source},
                   {"inputs", n.inputs},
                   {"outputs", n.outputs},
                   {"options", options},
                   {"imported_nodes", n.importedNodes},
                   {"imported_as", importedAs}});
  }
  return ops;
}

nlohmann::json tensorJson(const api::TensorSummary& t) {
  nlohmann::json j{{"name", t.name}, {"dtype", t.dtype}, {"type", t.typeText}};
  j["shape"] = t.rankKnown ? nlohmann::json(t.dims) : nlohmann::json(nullptr);
  return j;
}

nlohmann::json reportJson(const api::ModelReport& r, const InspectOptions& o) {
  nlohmann::json j;
  j["model"] = r.path;
  j["graph"] = r.imported.name;
  j["opset"] = r.imported.opset;
  j["source_opset"] = r.sourceOpset;
  j["format"] = r.format;
  j["import_ms"] = r.importMilliseconds;
  j["pipeline_ms"] = r.pipelineMilliseconds;
  j["peak_rss_bytes"] = r.peakResidentBytes;
  j["warnings"] = r.warnings;
  for (const auto& t : r.imported.inputs)
    j["inputs"].push_back(tensorJson(t));
  for (const auto& t : r.imported.outputs)
    j["outputs"].push_back(tensorJson(t));
  j["nodes_imported"] = r.imported.nodes.size();
  j["nodes_final"] = r.final.nodes.size();
  j["passes"] = nlohmann::json::array();
  for (const auto& p : r.passes) {
    nlohmann::json pj{{"name", p.name},
                      {"ms", p.milliseconds},
                      {"changed", p.changed},
                      {"nodes", p.graphAfter->nodes.size()}};
    if (o.irAfterAll)
      pj["ir"] = p.irAfter;
    j["passes"].push_back(pj);
  }
  for (const auto& g : r.final.groups)
    j["fused_groups"].push_back({{"name", g.name}, {"pattern", g.pattern}});
  if (r.authored) {
    j["operators_authored"] = r.authored->nodes.size();
    if (o.authored)
      j["authored"] = authoredJson(r);
  }
  return j;
}

int runInspect(const InspectOptions& o) {
  api::Session session;
  api::OpenOptions open;
  open.allowUnknownOps = true; // inspecting needs no kernels
  open.runPipeline = !o.noPasses;
  open.disabledPasses = o.disabledPasses;
  open.inputShapes = parseInputShapes(o.inputShapes);
  const api::OpenResult result = session.openModel(o.model, open);
  if (!result.ok()) {
    std::cerr << "lathe: error: " << result.failure->message << "\n";
    return 1;
  }
  const api::ModelReport& r = *result.report;
  for (const auto& w : r.warnings)
    std::cerr << "lathe: warning: " << w << "\n";
  if (o.json) {
    std::cout << reportJson(r, o).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
    return 0;
  }
  const bool nothingChosen = !o.topology && !o.irAfterAll && !o.passTimes && !o.authored;
  if (o.topology || nothingChosen)
    printTopology(r);
  if (o.authored)
    printAuthored(r);
  if (o.irAfterAll) {
    std::cout << "// ----- IR after import -----\n" << r.imported.irText;
    for (const auto& p : r.passes)
      std::cout << "// ----- IR after " << p.name << (p.changed ? "" : " (unchanged)") << " -----\n"
                << p.irAfter;
  }
  if (o.passTimes || nothingChosen)
    printPassTimes(r);
  return 0;
}

} // namespace

void addInspectCommand(CLI::App& app, int& exitCode) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App* cmd = app.add_subcommand(
      "inspect",
      "Import a model (ONNX, TFLite or TorchScript), run the graph pipeline and show the "
      "topology, the IR after each pass and the pass times. Without flags: topology and pass "
      "times.");
  cmd->add_option("model", options->model,
                  "Model file (.onnx, .tflite or a TorchScript .pt; the format is read from the "
                  "contents)")
      ->required();
  cmd->add_flag("--print-topology", options->topology,
                "List every graph input and output with name, element type and shape");
  cmd->add_flag("--print-ir-after-all", options->irAfterAll,
                "Print the IR after import and after every pass");
  cmd->add_flag("--pass-times", options->passTimes,
                "Print a table of passes: time, changed or not, node count");
  cmd->add_flag("--authored", options->authored,
                "List the model as its file has it: each TFLite / TorchScript operator with what "
                "it reads, its options and the graph IR nodes it was imported as");
  cmd->add_flag("--json", options->json,
                "Print one JSON object (topology, passes, times; with --print-ir-after-all the "
                "IR, with --authored the file's operators)");
  cmd->add_flag("--no-passes", options->noPasses, "Import only; do not run the graph pipeline");
  cmd->add_option("--input-shapes", options->inputShapes,
                  "Input shapes: \"name:[d0,d1,...] other:[...]\" (symbolic dims; TorchScript "
                  "models, which record none)");
  addDisablePassOption(cmd, &options->disabledPasses);
  cmd->footer("Passes in the default pipeline:\n" + [] {
    std::string s;
    for (const auto& p : api::defaultPipeline())
      s += "  " + p.name + std::string(p.name.size() < 32 ? 32 - p.name.size() : 1, ' ') +
           p.description + "\n";
    return s;
  }());
  cmd->callback([options, &exitCode] { exitCode = runInspect(*options); });
}

} // namespace lathe::cli
