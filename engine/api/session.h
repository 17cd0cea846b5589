#pragma once
// engine/api: the only engine header that app/ and views/ include. Everything here is a
// plain value type; a Session does the work and hands back immutable snapshots.

#include "engine/api/tuning.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lathe::api {

struct TensorSummary {
  std::string name;
  std::string dtype;             // "f32", "i64", ... ("?" when unknown)
  std::vector<std::string> dims; // "1", "N" (symbolic), "?" (unknown); empty for scalars
  bool rankKnown = true;
  std::string typeText; // "f32[1,3,224,224]"
};

struct AttributeSummary {
  std::string name;
  std::string kind; // "int", "ints", "float", "tensor", "graph", ...
  std::string text; // printed value, large tensors elided
};

struct GraphSnapshot;

struct NodeSummary {
  std::string name; // ONNX node name (may be empty)
  std::string opType;
  std::string category;             // "convolution", "matmul", "elementwise", "normalization",
                                    // "reduction", "data movement", "control flow", or "other"
  std::string summary;              // one line from the op table
  std::vector<std::string> inputs;  // value names, "" for an absent optional input
  std::vector<std::string> outputs; // value names, "" for an absent optional output
  std::vector<AttributeSummary> attributes;
  int group = -1;     // index into GraphSnapshot::groups, -1 if not fused
  std::string irLine; // the node as one line of IR
  // If/Loop/Scan: attribute name ("then_branch", "body"; "name[i]" in a list) -> subgraph. Its
  // nodes may read values of this graph by name (captures) that none of its own nodes produce.
  std::vector<std::pair<std::string, std::shared_ptr<const GraphSnapshot>>> subgraphs;
  // In a graph as authored (ModelReport::authored), for a node that stands for an operator
  // of a TFLite or TorchScript file: where the file puts it ("operator 12", "model.py:42")
  // and the nodes of ModelReport::imported it became, in order.
  std::string source;
  std::vector<int> importedNodes;
};

struct ConstantSummary {
  TensorSummary tensor;
  std::uint64_t bytes = 0;
};

struct GroupSummary {
  std::string name;       // kernel name
  std::string pattern;    // "Conv+Add+Relu"
  std::vector<int> nodes; // indices into GraphSnapshot::nodes
};

// One graph as the views see it. Values are looked up by name in `values`.
struct GraphSnapshot {
  std::string name;
  std::int64_t opset = 0;
  std::vector<TensorSummary> inputs;
  std::vector<TensorSummary> outputs;
  std::vector<ConstantSummary> constants;
  std::vector<NodeSummary> nodes; // topological order
  std::vector<GroupSummary> groups;
  std::map<std::string, TensorSummary> values; // every value by name
  std::string irText;                          // printed IR, large constants elided
};

struct PassRecord {
  std::string name;        // "fold-batchnorm"
  std::string description; // one line from the pass table
  double milliseconds = 0;
  bool changed = false;
  std::string irBefore;
  std::string irAfter;
  std::shared_ptr<const GraphSnapshot> graphAfter;
};

struct ModelReport {
  std::string path;
  double importMilliseconds = 0;
  double pipelineMilliseconds = 0;
  std::uint64_t peakResidentBytes = 0; // of this process after import
  std::string format = "ONNX";         // the file's format: "ONNX", "TFLite"
  std::int64_t sourceOpset = 0;        // the model's own opset (the graph may be converted)
  std::vector<std::string> warnings;   // e.g. "shape inference stopped early: ..."
  GraphSnapshot imported;              // right after import
  // TFLite and TorchScript, which Lathe translates into its graph IR: the graph as the file
  // has it, one node per operator of the file ("CONV_2D", "aten::conv2d", its options as
  // attributes), each standing for the nodes of `imported` it became. Null for ONNX, whose
  // `imported` is the file's own graph.
  std::shared_ptr<const GraphSnapshot> authored;
  std::vector<PassRecord> passes; // in pipeline order (empty if not run)
  GraphSnapshot final;            // after the last pass
};

struct Failure {
  std::string kind;    // "invalid", "unsupported", "io", "internal", "cancelled"
  std::string message; // complete, e.g. "model.onnx: node 'conv1' (Conv): ..."
  std::string file, node, op, reason;
};

struct Progress {
  int percent = 0;   // 0..100
  std::string stage; // "parsing", "shape inference", "pass fold-batchnorm", ...
};

struct OpenOptions {
  bool runPipeline = true;
  // Fixes symbolic input dims before the pipeline: input name -> full shape.
  std::map<std::string, std::vector<std::int64_t>> inputShapes;
  // An .npz of inputs: its arrays fix the shapes of the inputs that are not static and
  // not in inputShapes (a model with symbolic dims runs on the inputs it is given).
  std::string inputShapesFile;
  // Open a model whose nodes use ops Lathe does not know, to look at it (the workbench,
  // lathe inspect); compile() then refuses those nodes by name.
  bool allowUnknownOps = false;
  // Passes of the default pipeline not to run, by name (`lathe passes`), e.g.
  // "winograd-nchwc" to compare with the direct convolutions; an unknown name fails the open.
  std::vector<std::string> disabledPasses;
  // The model is opened to be compiled for a GPU (isGpuTarget): the passes that arrange
  // data for CPU vector registers (layout-nchwc, winograd-nchwc) are left out, so that the
  // GPU lowering sees plain NCHW Convs.
  bool forGpu = false;
  // Called from the worker thread doing the work.
  std::function<void(const Progress&)> onProgress;
  // Polled between stages; when it becomes true the call fails with kind "cancelled".
  const std::atomic<bool>* cancel = nullptr;
};

struct OpenResult {
  std::shared_ptr<const ModelReport> report; // set on success
  std::optional<Failure> failure;            // set on failure
  bool ok() const { return report != nullptr; }
};

// Value statistics of one constant (a weight), for the Properties histogram.
struct ConstantStats {
  std::string name, dtype;
  std::vector<std::int64_t> shape;
  std::int64_t count = 0;     // elements
  std::int64_t nonFinite = 0; // NaN and infinite elements, left out of everything below
  double min = 0, max = 0, mean = 0, std = 0; // std: population standard deviation
  // Equal-width bins over [histogramMin, histogramMax]; the last bin includes the top. All
  // values fall in one bin when the two are equal. The range is [min, max], or one shared
  // with another value so that two histograms line up (lathe compare's two sides).
  std::vector<std::uint64_t> histogram;
  double histogramMin = 0, histogramMax = 0;
};

// Names and descriptions of the default pipeline's passes, in order.
struct PassInfoSummary {
  std::string name, description;
};
std::vector<PassInfoSummary> defaultPipeline();

// Op table rows, for legends and docs.
struct OpInfoSummary {
  std::string name, category, summary;
  std::string fusion;          // "anchor", "elementwise" or "opaque"
  std::string inputs, outputs; // arity: "1", "2 to 3", "1 or more"
};
std::vector<OpInfoSummary> knownOps();

// Targets the workbench offers in its picker, host variants first.
struct TargetSummary {
  std::string label;       // "x86-64-v3 (this machine, AVX2)", "AArch64 Linux"
  std::string text;        // a target string for CompileOptions::target
  std::string description; // one line
  bool runsHere = false;   // code for it can run in this process (host triple)
  // Resolved by LLVM (empty when this LLVM cannot generate code for it: `unavailable`).
  std::string triple, cpu;
  int vectorBits = 0; // widest f32 vectors (0: none, or not a CPU target)
  std::string unavailable;
};
std::vector<TargetSummary> knownTargets();

// Whether code for the target string `target` runs in this process (the host's triple, and
// every instruction set extension it asks for present); false for an invalid string.
bool runsInThisProcess(const std::string& target);
// Whether the target string names a GPU (CUDA) target; false for an invalid string.
bool isGpuTarget(const std::string& target);
// The canonical form of a target string (what a compile reports as its target) and what
// LLVM resolves it to, e.g. "x86_64-pc-linux-gnu, cpu x86-64, 128-bit vectors"; both
// empty for an invalid string.
struct ResolvedTarget {
  std::string canonical, description;
};
ResolvedTarget resolveTargetText(const std::string& target);

// Whether the model file records no input shapes (a TorchScript archive), so that opening it
// needs OpenOptions::inputShapes (or an inputs file). Decided by the file's contents.
bool modelNeedsInputShapes(const std::string& path);

// The arrays of an inputs file (.npz) as TensorSummary (name, dtype, dims), read from each
// member's header only: nothing is inflated, so it is cheap for large files.
struct InputFileSummary {
  std::vector<TensorSummary> arrays;
  std::optional<Failure> failure;
  bool ok() const { return !failure; }
};
InputFileSummary describeInputFile(const std::string& path);

struct CompileOptions {
  std::string target = "llvm"; // a target string; running needs the host
  int threads = 0;             // executor threads; 0 = one per core
  bool keepCode = false;       // keep loop IR, LLVM IR and assembly per kernel
  std::string bundlePath;      // also write a module bundle (.tar) here
  std::string dumpDir;         // with bundlePath: per-kernel loop IR, LLVM IR, assembly
  // A schedule file (text or JSON, see engine/schedule/schedule.h) replayed on the kernels
  // it names after the default lowering; empty for none.
  std::string schedulePath;
  // The same as text (`kernel NAME:` blocks of steps), used when schedulePath is empty.
  std::string scheduleText;
  // An .npz of the inputs a run will get. When the open model has symbolic input dims, it
  // is opened again with the shapes (and integer scalars) of these arrays before compiling,
  // once per set of shapes; the CompileReport says so. Ignored for static models.
  std::string inputsFile;
  // Full shapes of inputs with symbolic dims, by name (the Run panel's shape table); they
  // take precedence over inputsFile's arrays. Ignored for static models.
  std::map<std::string, std::vector<std::int64_t>> inputShapes;
  // Called between stages ("folding constants", "lowering", "generating code", ...).
  std::function<void(const Progress&)> onProgress;
  // Polled between stages; when it becomes true the call fails with kind "cancelled". Code
  // generation itself (LLVM) runs to its end before the flag is seen.
  const std::atomic<bool>* cancel = nullptr;
  // Tuning records (lathe tune): each kernel that `schedulePath`/`scheduleText` leave alone
  // and that has a record for this target, CPU and thread count (`threads`; 0: one per
  // core) which beat the default when it was measured gets that record's trace.
  std::string tuningRecords;
  // Also write an export for the standalone C runtime (lathe export) into this folder; the
  // model is then not compiled to run here. `exportName`: the C name of its symbols.
  std::string exportDir, exportName;
  // Lower and schedule as for a CUDA GPU, then run every block and thread in turn on this
  // CPU (driver::CompileSettings::gpuSchedulesOnHost): the GPU schedules' results checked
  // where there is no GPU. The target must run here; times mean nothing for a GPU.
  bool gpuSchedulesOnHost = false;
};

// A file an export wrote.
struct ExportedFile {
  std::string name, description;
  std::uint64_t bytes = 0;
};

struct ExportReport {
  std::string folder, triple;
  std::vector<ExportedFile> files;
  std::uint64_t codeBytes = 0, weightBytes = 0, arenaBytes = 0;
  std::vector<std::pair<std::string, std::uint64_t>> kernelCodeBytes; // per kernel, plan order
  std::uint64_t scratchBytes = 0, ioBytes = 0; // kernels' temporaries; inputs and outputs
  // Bare metal: the board the example is linked for ("" elsewhere), its memory, the stack.
  std::string board;
  std::uint64_t boardFlashBytes = 0, boardRamBytes = 0, stackBytes = 0;
  std::string buildCommand; // e.g. "make -C out"
  std::string runCommand;   // e.g. "qemu-aarch64 out/model", or "" where nothing runs it here
};

// Building an export's example program (make in its folder) with the target's toolchain, as
// its README says: the check that what was written builds.
struct ExportBuild {
  std::string status;  // "built", "skipped" (a tool is missing), "failed", "cancelled"
  std::string message; // what was run, or what is missing and its Debian package, or the
                       // compiler's last lines
};
ExportBuild buildExport(const ExportReport& exported, const std::atomic<bool>* cancel = nullptr);

// A CUDA launch of a kernel, with what ptxas reported (-1: ptxas did not run).
struct GpuLaunchReport {
  std::string name; // its entry function in the PTX
  std::int64_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  int registers = -1, sharedBytes = -1, stackBytes = -1, spillStores = -1, spillLoads = -1;
};

struct KernelReport {
  std::string name;
  std::vector<std::string> nodes; // ONNX nodes it computes
  std::string loopIr;
  std::string schedule; // the schedule trace replayed on it, one step per line; empty if none
  // Its default trace (empty: the nest as lowered is the default), and the loop IR of that
  // nest, which every trace replays on (empty: the same as loopIr, no trace was replayed).
  std::string defaultTrace, naiveLoopIr;
  // When keepCode: the loop IR after each step of `schedule`, replayed one by one on the
  // nest (the last is loopIr), for reading a trace step by step.
  std::vector<std::string> traceLoopIrs;
  // How the default lowering computes it (tiles, parallel tasks, where the epilogue runs),
  // one line per choice; empty for plain loop nests.
  std::string strategy;
  std::string llvmIr, llvmIrOptimized, assembly; // when keepCode
  // Per line of `assembly`: the line of `loopIr` it came from (0: none known), when keepCode.
  std::vector<int> assemblyLoopLines;
  std::vector<int> llvmIrLoopLines, llvmIrOptimizedLoopLines; // the same for the LLVM IR
  std::uint64_t codeBytes = 0; // machine code of its functions for the target (0: unknown)
  int tunedTrials = 0;         // `schedule` came from tuning records, found in this many trials
  // CUDA targets: the launches, and why ptxas did not run when it did not.
  std::vector<GpuLaunchReport> gpuLaunches;
  std::string ptxasNote;
};

struct CompileReport {
  std::string target;
  double lowerMilliseconds = 0, codegenMilliseconds = 0;
  std::uint64_t arenaBytes = 0;      // planned intermediate memory
  std::uint64_t naiveArenaBytes = 0; // the same without buffer reuse
  std::uint64_t constantBytes = 0;
  std::uint64_t bundleBytes = 0; // when a bundle was written
  std::size_t foldedNodes = 0;   // constant nodes computed once at compile time
  double foldMilliseconds = 0;
  std::vector<KernelReport> kernels;
  // For a model with symbolic input dims, the shapes (and integer scalars compiled in by
  // value) it was compiled for: "x:[1,16000] sr=16000"; empty for a static model.
  std::string specialisedFor;
  // The code of an earlier compile for the same shapes, target, threads and schedule was
  // reused: nothing was compiled. A Session keeps its last few compiles of the open model
  // (compiled in memory for this machine) for this.
  bool reused = false;
  // With tuning records: how many kernels got a tuned trace, and notes on records that did
  // not apply (kept for another CPU or thread count).
  int tunedKernels = 0;
  std::vector<std::string> tuningNotes;
  std::optional<ExportReport> exported; // with CompileOptions::exportDir
};

struct CompileResult {
  std::shared_ptr<const CompileReport> report;
  std::optional<Failure> failure;
  bool ok() const { return report != nullptr; }
};

struct TuneResult {
  std::shared_ptr<const TuneReport> report;
  std::optional<Failure> failure;
  bool ok() const { return report != nullptr; }
};

// What the records file at `path` holds; nullopt (and `failure` set) when it cannot be read.
std::optional<RecordsSummary> summarizeRecords(const std::string& path, Failure* failure);
// The records of `a` and `b` side by side; nullopt (and `failure` set) when one cannot be read.
std::optional<RecordsComparison> compareRecords(const std::string& a, const std::string& b,
                                                Failure* failure);

struct RunOptions {
  std::string inputsNpz; // inputs by name
  std::string fill;      // random | zeros | ones for inputs not in inputsNpz; empty:
                         // random without inputsNpz, an error for a missing one with it
  std::uint64_t seed = 0;
  std::string outputsNpz; // write the outputs here when set
  int repeat = 1;         // timed runs (after one warm-up run when repeat > 1)
  int topK = 0;           // top-k entries per output in the summary
  // Record per-kernel and per-thread times of the timed runs (RunReport::profile); adds a
  // warm-up run also when repeat is 1, and measures this machine's peak FLOP/s once.
  bool profile = false;
  // Called before each timed run ("run 3 of 20"); percent counts finished runs.
  std::function<void(const Progress&)> onProgress;
  // Polled between runs; when it becomes true the call fails with kind "cancelled".
  const std::atomic<bool>* cancel = nullptr;
};

struct OutputSummary {
  std::string name, dtype;
  std::vector<std::int64_t> shape;
  double min = 0, max = 0, mean = 0;
  std::vector<std::pair<std::int64_t, double>> top; // (flat index, value), largest first
};

// One kernel's line in the profile, summed over its calls in every timed run.
struct KernelProfileRow {
  std::string kernel;
  std::vector<std::string> nodes; // ONNX nodes it computes
  std::int64_t calls = 0;
  double totalMs = 0, meanMs = 0;
  double percent = 0;        // of the time of all kernels
  double flopsPerCall = 0;   // 0 when unknown (only Conv, ConvTranspose, MatMul, Gemm count)
  double gflops = -1;        // negative when unknown
  double percentOfPeak = -1; // negative when unknown
};

// One bar of the timeline: a whole kernel call on the calling thread (thread 0), or one
// chunk of a parallel loop inside it on the pool thread that ran it.
struct TraceEvent {
  std::string kernel; // empty for a chunk outside every call
  int call = -1;      // index into RunProfile::calls
  int run = 0;        // timed run
  int thread = 0;     // 0: the calling thread; i > 0: pool worker i
  bool chunk = false;
  double startUs = 0, durationUs = 0; // from the start of the first timed run
  // Chunks: the iterations [firstIteration, endIteration) of a parallel loop of `iterations`
  // (the loop IR's `parallel for` with that extent); 0 for calls.
  std::int64_t firstIteration = 0, endIteration = 0, iterations = 0;
};

struct RunProfile {
  struct Call {
    std::string kernel;
    std::vector<std::string> nodes;
    double flops = 0; // per call; 0 when unknown
  };
  std::vector<Call> calls;                       // the plan's calls, in order
  std::vector<KernelProfileRow> rows;            // by total time, largest first
  std::vector<TraceEvent> events;                // calls in time order, then chunks by thread
  std::vector<std::pair<double, double>> runsUs; // (start, duration) of each timed run
  int threads = 0;
  double peakGflops = 0; // measured (FMA microbenchmark); 0 when unknown
  std::string peakIsa;   // "avx512", "avx2" or "scalar"
  std::size_t droppedEvents = 0;
};

struct RunReport {
  std::vector<OutputSummary> outputs;
  std::vector<double> latenciesMs; // one per timed run
  double meanMs = 0, medianMs = 0, minMs = 0, maxMs = 0, stdMs = 0;
  int threads = 0;
  std::optional<RunProfile> profile; // with RunOptions::profile
  // runOnTarget: how it ran ("qemu-aarch64 (emulated; times are the emulator's ...)"), the target,
  // and whether latenciesMs holds anything (a bare-metal board is not timed).
  std::string runner, target;
  bool timed = true;
};

// A run's profile as "table" (aligned text, units in the headers), "csv" or "json";
// maxRows > 0 limits the table. Empty when the run was not profiled.
std::string formatProfile(const RunReport& report, const std::string& format,
                          std::size_t maxRows = 0);
// A run's profile as a Chrome trace (Trace Event Format JSON) for Perfetto or
// chrome://tracing. Empty when the run was not profiled.
std::string profileChromeTrace(const RunReport& report);

struct RunResult {
  std::shared_ptr<const RunReport> report;
  std::optional<Failure> failure;
  bool ok() const { return report != nullptr; }
};

// Trying a schedule on one kernel of the compiled model (the Schedule panel's engine).
struct KernelScheduleOptions {
  std::string kernel; // a kernel of the last compile()
  // Its steps in text form, one per line ("split(x, 8)"), without a `kernel` line: a whole
  // trace replayed on the kernel's nest as lowered (KernelReport::naiveLoopIr), which for a
  // kernel with a default trace (KernelReport::defaultTrace) replaces it. Empty: that nest.
  std::string steps;
  int repeat = 30; // timed calls after one warm-up; 0 times nothing
  int threads = 0; // 0: one per core
  const std::atomic<bool>* cancel = nullptr;
};

struct KernelScheduleReport {
  std::string kernel;
  std::string trace; // the steps as replayed, one per line (normalised spelling)
  std::string loopIr, llvmIrOptimized, assembly; // of the scheduled kernel
  std::string defaultLoopIr;                     // the same kernel as lowered by default
  // Median of the timed calls on the model's weights and random activations, in ms; 0 when
  // not timed. The default's time is measured once per kernel and kept.
  double medianMs = 0, defaultMedianMs = 0;
};

struct KernelScheduleResult {
  std::shared_ptr<const KernelScheduleReport> report;
  std::optional<Failure> failure; // a refused step: the message names line, step and reason
  int failedLine = 0;             // the 1-based line of `steps` refused, 0 if none
  bool ok() const { return report != nullptr; }
};

// A schedule set file (text or JSON) as kernel name -> its steps in text form, one per line.
struct ScheduleSetFile {
  std::vector<std::pair<std::string, std::string>> kernels;
  std::optional<Failure> failure;
  bool ok() const { return !failure; }
};
ScheduleSetFile readScheduleSet(const std::string& path);
// The same from schedule-set text (what formatScheduleSet writes).
ScheduleSetFile parseScheduleSet(const std::string& text);
// The text form of a schedule set: `kernel NAME:` and the steps indented below it.
std::string formatScheduleSet(const std::vector<std::pair<std::string, std::string>>& kernels);

struct BackendTestResult;  // backend_test.h
struct BackendTestOptions; // backend_test.h

struct CompareOptions; // numerics_compare.h
struct CompareResult;

// A Session may be used from any one thread at a time; results are immutable and may
// be shared across threads.
class Session {
public:
  Session();
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Imports an ONNX model and (by default) runs the default graph pipeline.
  // Never throws: errors come back in OpenResult::failure.
  OpenResult openModel(const std::string& path, const OpenOptions& options = {});

  // Opens a bundle written by compile(); run() then uses its kernels without compiling.
  OpenResult openBundle(const std::string& path, int threads = 0);

  // Compiles the open model (after its pipeline) to native code for the target: in memory
  // for running when the target is this machine, and as a bundle when bundlePath is set.
  CompileResult compile(const CompileOptions& options = {});
  // Runs the compiled model (compiling for the host first if needed).
  RunResult run(const RunOptions& options = {});
  // Runs the open model on a target that is not this machine's: exports it for
  // `compile.target` (as lathe export does) into a temporary folder, builds the example
  // program with the target's toolchain and runs it under the emulator (qemu-user,
  // qemu-system-arm with semihosting) or Node (wasm32) on the inputs `run` describes.
  // Fails with kind "unsupported" and the packages to install when a tool is missing.
  // Leaves compile()'s state as a compile for that target (nothing runs in this process).
  RunResult runOnTarget(const CompileOptions& compile, const RunOptions& run);

  // Replays `options.steps` on one kernel of the last compile() (which must have been for
  // this machine), compiles it alone, and times it and the default next to each other.
  // The compiled model itself is not changed: compile() with scheduleText does that.
  KernelScheduleResult tryKernelSchedule(const KernelScheduleOptions& options);

  // Searches schedules for the open model's kernels on this machine (compiling it for
  // `options.target` first), measuring each candidate in a child process and appending a
  // record per trial to options.recordsPath.
  TuneResult tune(const TuneOptions& options);

  // Statistics of the constant named `valueName` in the open model's final graph (after
  // the pipeline), values converted to double; nullopt if there is no such constant or its
  // bytes are not loaded. Reads only: may run on a worker while compile() runs on another.
  std::optional<ConstantStats> constantStats(const std::string& valueName, int bins = 64) const;

private:
  std::string
  specialisationKey(const std::string& npz,
                    const std::map<std::string, std::vector<std::int64_t>>& shapes) const;
  void specialiseForInputs(const std::string& npz,
                           const std::map<std::string, std::vector<std::int64_t>>& shapes,
                           const std::string& key, const std::atomic<bool>* cancel);
  // After tune(): the model with its defaults and with the records run in turns
  // (session_tune.cpp); nothing when cancelled. Fills each workload's in-model times.
  std::optional<ModelCheck> checkInModel(const CompileOptions& defaults, const TuneOptions& options,
                                         std::vector<TunedWorkload>& workloads);
  // runOnTarget for a CUDA target on a machine whose driver works (session_target_run.cpp).
  std::shared_ptr<RunReport> runOnGpu(const CompileOptions& compile, const RunOptions& run);
  friend BackendTestResult runBackendTest(const std::string&, const BackendTestOptions&);
  friend CompareResult compareNumerics(const CompareOptions&);
  struct State;
  std::unique_ptr<State> state_;
};

// --- files the front ends write ---
struct WriteResult {
  std::optional<Failure> failure;
  bool ok() const { return !failure; }
};
// Writes `text` to `path` whole or not at all: a temporary file beside it, renamed over it.
WriteResult writeTextFile(const std::string& path, const std::string& text);
// Whether `output` names the same file as `input` (through links, or the same path when
// the output does not exist yet): a write would destroy the input.
bool isSameFile(const std::string& output, const std::string& input);
// `bytes` (names from an untrusted file) as printable UTF-8: control characters and invalid
// UTF-8 as \xNN; with keepLineBreaks, '\n' and '\t' stay.
std::string escapeText(std::string_view bytes, bool keepLineBreaks = false);
// On SIGINT and SIGTERM, removes the temporary files of writes in progress and the folders
// that open bundles were extracted to, then dies of the signal (call once, from main).
void cleanUpTemporaryFilesOnSignals();

} // namespace lathe::api
