#pragma once
// What the workbench asks of the engine, as the work of SessionWorker jobs: each function
// runs on the worker thread, with the Session the job was posted for.

#include "app/workbench/session_worker.h"
#include "engine/api/session.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lathe::workbench {

// The tags of the worker's jobs: one current job each.
namespace jobs {
inline const QString kOpen = QStringLiteral("open");
inline const QString kCompile = QStringLiteral("compile");
inline const QString kRun = QStringLiteral("run");
inline const QString kSchedule = QStringLiteral("schedule");
inline const QString kStats = QStringLiteral("stats");
inline const QString kCompare = QStringLiteral("compare");
inline const QString kTune = QStringLiteral("tune");
inline const QString kExport = QStringLiteral("export");
} // namespace jobs

using ShapeMap = std::map<std::string, std::vector<std::int64_t>>;

struct RunSettings {
  std::string inputsNpz;       // inputs by name; empty: every input is filled
  std::string fill = "random"; // random | zeros | ones; ignored (strict) with inputsNpz
  int repeat = 10;             // timed runs, after one warm-up run
  bool profile = false;
  int topK = 5;
  // Compile for the host with this many threads (0: one per core) before running, keeping
  // the code for the Code panel; -1 keeps the compiled model the Session holds (it compiles
  // one if it has none).
  int compileThreads = -1;
  std::string target = "llvm";
  std::string scheduleText;  // kept schedules for that compile (schedule set text)
  std::string tuningRecords; // records in use for that compile (lathe tune's)
  // The model has symbolic input dims: it is compiled for the shapes of inputsNpz's arrays
  // or of inputShapes (CompileOptions::inputShapes) before the run.
  bool symbolicInputs = false;
  ShapeMap inputShapes;
};

// A model opened by a Session of its own, which compiles and runs it from then on.
struct Opened {
  api::OpenResult result;
  std::shared_ptr<api::Session> session; // null unless the open succeeded
  bool forGpu = false;                   // opened for a GPU target (api::OpenOptions::forGpu)
};
// `inputShapes` for models that record none (TorchScript); empty otherwise.
Opened openModelJob(const std::string& path, bool forGpu, const SessionWorker::Context& context,
                    const std::map<std::string, std::vector<std::int64_t>>& inputShapes = {});

// Compiles for `options` (its cancel and progress come from the job), keeping the code of
// every kernel for the Code panel.
api::CompileResult compileJob(api::Session& session, api::CompileOptions options,
                              const SessionWorker::Context& context);

// A run, compiled first when settings.compileThreads >= 0: `compiled` has that compile.
// For a target whose code cannot run in this process, Session::runOnTarget (export, build,
// emulator) instead, without a profile.
// Progress is per timed run and Cancel stops between runs; a profiled run is one engine
// call (its profile spans every timed run) that reports and polls the flag itself.
struct RunOutcome {
  api::RunResult run;
  std::shared_ptr<const api::CompileReport> compiled;
  bool compileFailed = false; // run.failure is the compile's
};
RunOutcome runJob(api::Session& session, const std::string& path, const RunSettings& settings,
                  const SessionWorker::Context& context);

// File > Export…: what to write, and what came of it.
struct ExportRequest {
  std::string target; // the picked target with the CPU typed in
  std::string folder;
  std::string name; // C identifier of the symbols; empty: from the model file's name
  bool build = true;
};

struct ExportOutcome {
  api::CompileResult compiled; // compiled.report->exported on success
  std::optional<api::ExportBuild> build;
};

// Exports the model file at `path` with a Session of its own (the document's compiled model
// stays as it is), for the shapes and schedules of `settings`, then builds the example when
// asked.
ExportOutcome exportJob(const std::string& path, const RunSettings& settings,
                        const ExportRequest& request, const SessionWorker::Context& context);

// A failure of kind "internal" for a bug that threw out of the engine.
api::Failure internalFailure(const std::string& path, const std::string& reason);

} // namespace lathe::workbench
