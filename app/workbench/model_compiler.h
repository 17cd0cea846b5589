#pragma once
// Compiles the open model for the host on a worker thread and reports back on the GUI
// thread. Only the newest job reports: starting another one, or drop(), discards the result
// of the job in flight (the engine cannot stop a compile half-way, so it runs to its end).

#include "app/workbench/session_jobs.h"
#include "engine/api/session.h"

#include <QObject>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace lathe::workbench {

using ShapeMap = std::map<std::string, std::vector<std::int64_t>>;

class ModelCompiler : public QObject {
  Q_OBJECT

public:
  explicit ModelCompiler(QObject* parent = nullptr);

  // Starts compiling the model `session` holds for `target` (a target string that runs
  // here), keeping the code of every kernel. `model`
  // comes back with the result so the caller can tell whether it is still the one on
  // display. Refuses (false) while a job on the same Session is in flight: a Session
  // serves one thread at a time. `inputsFile`: the .npz a run will use, whose shapes
  // specialise a model with symbolic input dims (CompileOptions::inputsFile), as
  // `inputShapes` do (CompileOptions::inputShapes).
  bool compile(std::shared_ptr<api::Session> session, std::shared_ptr<const api::ModelReport> model,
               const std::string& target = "llvm", const std::string& scheduleText = {},
               const std::string& inputsFile = {}, const ShapeMap& inputShapes = {});
  // Forgets the job in flight: nothing arrives for it, and the engine is asked to stop it at
  // its next stage (code generation itself runs to its end).
  void drop();
  bool isCompiling() const { return jobs_.hasCurrent(); }
  // Whether a job (a dropped one included) still uses `session` on a worker.
  bool isBusyWith(const api::Session* session) const { return jobs_.isBusyWith(session); }

signals:
  // The stage the current job reached ("lowering", "generating code", ...).
  void stageChanged(const QString& stage);
  void compiled(std::shared_ptr<const lathe::api::ModelReport> model,
                std::shared_ptr<const lathe::api::CompileReport> report);
  void failed(std::shared_ptr<const lathe::api::ModelReport> model,
              const lathe::api::Failure& failure);
  // The last job on a worker has ended, dropped ones included: the Sessions are free.
  void idle();

private:
  void finish(quint64 id);

  // Destroyed before the QObject base deletes the watchers: it waits for the workers.
  SessionJobs<api::CompileResult> jobs_;
};

} // namespace lathe::workbench
