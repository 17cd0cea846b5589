#pragma once
// engine/api: the numerics debugger behind `lathe compare`. Lathe runs the model with every
// intermediate value kept; a reference runs it too (Lathe's own naive interpreter or ONNX
// Runtime); each value is compared in graph order and the first node that goes wrong is
// named. Plain value types, like session.h.

#include "engine/api/session.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lathe::api {

struct CompareOptions {
  std::string model;
  // The reference runs this model instead (the same graph with, say, other weights); values
  // are matched by name. Empty: `model`.
  std::string referenceModel;
  // "reference": Lathe's interpreter over the imported graph (no fusion, no layout changes,
  // each node by plain loops in double). "onnxruntime": ONNX Runtime through Node.js.
  std::string reference = "reference";
  // What Lathe keeps. "all": every node output is made a graph output before the pipeline, so
  // every node is compared on its own (the passes do not fuse or fold across kept values).
  // "kernels": the model compiled as `lathe run` compiles it; only the values its kernels
  // store are compared (values inside fused kernels, folded or re-laid out are "not kept").
  std::string keep = "all";
  // onnxruntime: the node_modules folder that holds onnxruntime-node; empty: node's own
  // search (NODE_PATH).
  std::string nodeModules;
  std::string inputsNpz; // inputs by name; empty: seeded random inputs, as `lathe run` fills
  std::uint64_t seed = 0;
  std::map<std::string, std::vector<std::int64_t>> inputShapes; // fixes symbolic input dims
  double rtol = 1e-3, atol = 1e-4;
  int threads = 0; // Lathe's threads (and ONNX Runtime's); 0: one per core
  // Polled between the steps (open, compile, run, reference), before each node the
  // interpreter evaluates and while ONNX Runtime runs (its process is then killed); once it
  // is true the call fails with kind "cancelled".
  const std::atomic<bool>* cancel = nullptr;
};

// One node output. `status`: "match"; "diverges" (an element outside atol + rtol*|ref|, a
// NaN or infinity the reference does not have, or another shape or type); "not kept"
// (Lathe's compiled model does not store the value: nothing to compare); "not evaluated" (the
// interpreter stopped at an earlier node); "not in reference" (the reference has no value
// of that name).
struct ValueComparison {
  std::string node, op, value; // producing node (ONNX name), its op, the value's name
  std::string dtype;           // Lathe's, or the imported graph's when Lathe has none
  std::vector<std::int64_t> shape;
  bool shapeKnown = false;
  std::string status;
  std::string note; // why it was not compared, or what differs, in words
  std::int64_t elements = 0, outside = 0;
  double maxAbsError = 0, maxRelError = 0;
  std::int64_t latheNaN = 0, latheInf = 0, referenceNaN = 0, referenceInf = 0;
  std::vector<std::int64_t> firstOutsideAt; // coordinates of the first element outside
  double firstOutsideLathe = 0, firstOutsideReference = 0;
  // Each side's values (min/max/mean/std and a histogram over its own range), for the
  // workbench; `count` 0 when that side was not compared.
  ConstantStats latheStats, referenceStats;
};

struct CompareReport {
  std::string model, referenceModel, reference, keep;
  double rtol = 0, atol = 0;
  int threads = 0;
  std::size_t latheKernels = 0;        // kernels of Lathe's compiled model
  std::vector<ValueComparison> values; // every node output of the imported graph, in order
  int firstDivergent = -1;             // index into values, -1 when nothing diverges
  // The node where Lathe's interpreter stopped (an op or form it does not implement); values
  // from there on are "not evaluated". Empty when it evaluated every node.
  std::string referenceStoppedNode, referenceStoppedOp, referenceStopReason;
  std::size_t matched = 0, diverged = 0, notKept = 0, notEvaluated = 0, notInReference = 0;
};

struct CompareResult {
  std::shared_ptr<const CompareReport> report;
  std::optional<Failure> failure; // the comparison could not run (bad model, no ONNX Runtime)
  bool ok() const { return report != nullptr; }
};

// Never throws: errors come back in CompareResult::failure.
CompareResult compareNumerics(const CompareOptions& options);

} // namespace lathe::api
