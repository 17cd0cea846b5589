// lathe compare MODEL.onnx [--inputs in.npz] [--reference reference|onnxruntime]
//   [--reference-model OTHER.onnx] [--rtol R] [--atol A] [--json] [--threads N]
//   [--node-modules DIR] [--input-shapes ...]
// Exit status: 0 every compared value matches, 1 a node diverges, 2 a usage error or the
// comparison could not run.
#include "app/cli/commands.h"
#include "engine/api/numerics_compare.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

namespace lathe::cli {
namespace {

constexpr int kDiverges = 1;
constexpr int kCannotCompare = 2;

struct CompareCommandOptions {
  api::CompareOptions engine;
  std::string inputShapes;
  bool json = false;
};

std::string shapeText(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string number(double v) {
  if (v == 0)
    return "0";
  char text[32];
  std::snprintf(text, sizeof text, "%.2e", v);
  return text;
}

// CLI::NonNegativeNumber's message prints the whole range of double.
std::string notNegative(const std::string& text) {
  try {
    return std::stod(text) >= 0 ? "" : "must not be negative, got " + text;
  } catch (const std::exception&) {
    return "not a number: " + text;
  }
}

bool compared(const api::ValueComparison& v) {
  return v.status == "match" || (v.status == "diverges" && v.elements > 0);
}

// Without --node-modules: NODE_PATH when set (node reads it), else the build tree's
// npm/node_modules next to this executable's folder (where make's set-up installs it).
std::string defaultNodeModules() {
  if (std::getenv("NODE_PATH"))
    return {};
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec)
    return {};
  const std::filesystem::path built = exe.parent_path() / ".." / ".." / "npm" / "node_modules";
  if (std::filesystem::exists(built / "onnxruntime-node", ec))
    return std::filesystem::weakly_canonical(built, ec).string();
  return {};
}

void printTable(const api::CompareReport& r) {
  const std::vector<std::string> head{"#",       "node",    "op",        "value",     "shape",
                                      "max abs", "max rel", "NaN/Inf L", "NaN/Inf R", "status"};
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < r.values.size(); ++i) {
    const api::ValueComparison& v = r.values[i];
    const bool numbers = compared(v);
    std::string status = v.status;
    if (static_cast<int>(i) == r.firstDivergent)
      status += "  <-- first divergent";
    rows.push_back(
        {std::to_string(i + 1), v.node.empty() ? "-" : v.node, v.op, v.value,
         v.shapeKnown ? v.dtype + shapeText(v.shape) : "?", numbers ? number(v.maxAbsError) : "-",
         numbers ? number(v.maxRelError) : "-",
         numbers ? std::to_string(v.latheNaN) + "/" + std::to_string(v.latheInf) : "-",
         numbers ? std::to_string(v.referenceNaN) + "/" + std::to_string(v.referenceInf) : "-",
         status});
  }
  std::vector<std::size_t> width(head.size());
  for (std::size_t c = 0; c < head.size(); ++c) {
    width[c] = head[c].size();
    for (const auto& row : rows)
      width[c] = std::max(width[c], row[c].size());
  }
  auto print = [&](const std::vector<std::string>& row) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      const bool right = c == 0 || (c >= 5 && c <= 8);
      const std::string pad(width[c] - row[c].size(), ' ');
      line += (c ? "  " : "") + (right ? pad + row[c] : row[c] + (c + 1 < row.size() ? pad : ""));
    }
    std::cout << line << "\n";
  };
  print(head);
  for (const auto& row : rows)
    print(row);
}

void printSummary(const api::CompareReport& r) {
  std::cout << "\nLathe (" << r.latheKernels << " kernels, "
            << (r.keep == "all" ? "every value kept" : "compiled as lathe run compiles it")
            << ") vs "
            << (r.reference == "onnxruntime" ? "ONNX Runtime" : "Lathe's reference interpreter")
            << (r.referenceModel != r.model ? " on " + r.referenceModel : "") << ": "
            << r.matched + r.diverged << " values compared, " << r.matched << " match, "
            << r.diverged << " diverge (atol " << r.atol << " + rtol " << r.rtol
            << " * |reference|; L = Lathe, R = reference)\n";
  if (r.notKept)
    std::cout << r.notKept << " values not kept by Lathe's compiled model (not compared)\n";
  if (!r.referenceStoppedNode.empty() || !r.referenceStopReason.empty())
    std::cout << "the reference stopped at node '" << r.referenceStoppedNode << "' ("
              << r.referenceStoppedOp << "): " << r.referenceStopReason << "; " << r.notEvaluated
              << " values from there on are not compared\n";
  if (r.notInReference)
    std::cout << r.notInReference << " values have no counterpart in the reference\n";
  if (r.firstDivergent < 0) {
    std::cout << "no node diverges" << (r.notEvaluated ? " up to where the reference stopped" : "")
              << "\n";
    return;
  }
  const api::ValueComparison& v = r.values[static_cast<std::size_t>(r.firstDivergent)];
  std::cout << "first divergent node: " << v.node << " (" << v.op << "), value " << v.value << ": ";
  if (!v.note.empty()) {
    std::cout << v.note << "\n";
    return;
  }
  std::cout << v.outside << " of " << v.elements << " elements outside tolerance, the first at "
            << shapeText(v.firstOutsideAt) << " (Lathe " << v.firstOutsideLathe << ", reference "
            << v.firstOutsideReference << "); max abs error " << number(v.maxAbsError) << "\n";
}

nlohmann::json reportJson(const api::CompareReport& r) {
  nlohmann::json j{{"model", r.model},
                   {"reference", r.reference},
                   {"reference_model", r.referenceModel},
                   {"keep", r.keep},
                   {"lathe_kernels", r.latheKernels},
                   {"rtol", r.rtol},
                   {"atol", r.atol},
                   {"threads", r.threads},
                   {"values", nlohmann::json::array()}};
  for (const api::ValueComparison& v : r.values) {
    nlohmann::json vj{{"node", v.node},   {"op", v.op},         {"value", v.value},
                      {"dtype", v.dtype}, {"status", v.status}, {"note", v.note}};
    vj["shape"] = v.shapeKnown ? nlohmann::json(v.shape) : nlohmann::json(nullptr);
    if (compared(v)) {
      vj["elements"] = v.elements;
      vj["outside"] = v.outside;
      vj["max_abs_error"] = v.maxAbsError;
      vj["max_rel_error"] = v.maxRelError;
      vj["lathe_nan"] = v.latheNaN;
      vj["lathe_inf"] = v.latheInf;
      vj["reference_nan"] = v.referenceNaN;
      vj["reference_inf"] = v.referenceInf;
      if (v.outside > 0)
        vj["first_outside"] = {{"index", v.firstOutsideAt},
                               {"lathe", v.firstOutsideLathe},
                               {"reference", v.firstOutsideReference}};
    }
    j["values"].push_back(std::move(vj));
  }
  j["first_divergent"] = nullptr;
  if (r.firstDivergent >= 0) {
    const api::ValueComparison& v = r.values[static_cast<std::size_t>(r.firstDivergent)];
    j["first_divergent"] = {
        {"index", r.firstDivergent}, {"node", v.node}, {"op", v.op}, {"value", v.value}};
  }
  j["reference_stopped"] = nullptr;
  if (!r.referenceStoppedNode.empty() || !r.referenceStopReason.empty())
    j["reference_stopped"] = {{"node", r.referenceStoppedNode},
                              {"op", r.referenceStoppedOp},
                              {"reason", r.referenceStopReason}};
  j["summary"] = {{"match", r.matched},
                  {"diverges", r.diverged},
                  {"not_kept", r.notKept},
                  {"not_evaluated", r.notEvaluated},
                  {"not_in_reference", r.notInReference}};
  return j;
}

int compareModel(CompareCommandOptions& o) {
  o.engine.inputShapes = parseInputShapes(o.inputShapes);
  if (o.engine.reference == "onnxruntime" && o.engine.nodeModules.empty())
    o.engine.nodeModules = defaultNodeModules();
  const api::CompareResult result = api::compareNumerics(o.engine);
  if (!result.ok()) {
    std::cerr << "lathe: error: " << result.failure->message << "\n";
    return kCannotCompare;
  }
  const api::CompareReport& r = *result.report;
  if (o.json) {
    std::cout << reportJson(r).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  } else {
    printTable(r);
    printSummary(r);
  }
  return r.firstDivergent >= 0 ? kDiverges : 0;
}

} // namespace

void addCompareCommand(CLI::App& app, int& exitCode) {
  auto o = std::make_shared<CompareCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Numerics debugger: run an ONNX model with every intermediate value kept, compare each "
      "value with a reference in graph order, and name the first node that diverges. Exit "
      "status 0: every compared value matches; 1: a node diverges; 2: a usage error, or the "
      "comparison could not run");
  cmd->footer(
      "Values are compared by ONNX name, in the order of the imported graph. A value "
      "diverges when an element lies outside "
      "atol + rtol * |reference|, when it is NaN or infinite where the reference is not, or "
      "when its shape or type differs. Statuses: match, diverges, not kept (Lathe's compiled "
      "model does not store it), not evaluated (the reference interpreter stopped at an "
      "earlier node it cannot evaluate; the output says which and why), not in reference.");
  cmd->add_option("model", o->engine.model, "The ONNX model (.onnx)")->required();
  cmd->add_option("--inputs", o->engine.inputsNpz,
                  "Inputs by name from a .npz file (numpy.savez); their shapes fix the model's "
                  "symbolic input dims. Default: seeded random inputs, as lathe run fills them");
  cmd->add_option("--reference", o->engine.reference,
                  "reference: Lathe's own slow path, an interpreter over the imported graph (no "
                  "fusion, no layout changes, each node by plain loops in double precision); "
                  "onnxruntime: ONNX Runtime through Node.js and the npm package "
                  "onnxruntime-node")
      ->check(CLI::IsMember({"reference", "onnxruntime"}))
      ->capture_default_str();
  cmd->add_option("--reference-model", o->engine.referenceModel,
                  "The reference runs this model instead (the same graph, e.g. with other "
                  "weights); values are matched by name")
      ->check(CLI::ExistingFile);
  cmd->add_option("--keep", o->engine.keep,
                  "all: every node output is made a graph output before the pipeline, so each "
                  "node is compared on its own (no fusion or folding across kept values); "
                  "kernels: the model compiled as lathe run compiles it, comparing the values "
                  "its kernels store (fused, folded or re-laid out values are 'not kept')")
      ->check(CLI::IsMember({"all", "kernels"}))
      ->capture_default_str();
  cmd->add_option("--rtol", o->engine.rtol, "Relative tolerance")
      ->check(notNegative)
      ->capture_default_str();
  cmd->add_option("--atol", o->engine.atol, "Absolute tolerance")
      ->check(notNegative)
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Print the table and the first divergent node as JSON");
  cmd->add_option("--threads", o->engine.threads,
                  "Threads for Lathe and ONNX Runtime (0 = one per core / its default)")
      ->check(notNegative)
      ->capture_default_str();
  cmd->add_option("--node-modules", o->engine.nodeModules,
                  "With --reference onnxruntime: the node_modules folder holding "
                  "onnxruntime-node. Default: $NODE_PATH, else the build tree's npm/node_modules "
                  "(installed by make's set-up)");
  cmd->add_option("--input-shapes", o->inputShapes,
                  "Fix symbolic input dims: \"name:[d0,d1,...] other:[...]\" (without --inputs)");
  cmd->callback([o, &exitCode] {
    try {
      exitCode = compareModel(*o);
    } catch (const CLI::ValidationError& e) {
      std::cerr << "lathe: error: " << e.what() << "\n";
      exitCode = kCannotCompare;
    }
  });
}

} // namespace lathe::cli
