#pragma once
// What the workbench has open and has found out about it: the model and the Session that
// opened it, the target, the schedules kept for the next compile, the inputs a run uses,
// the last compile and run, and the selection. Panels read it and listen to its signals;
// the window changes it as jobs finish (session_worker.h), so no panel asks another.

#include "app/workbench/engine_jobs.h"
#include "engine/api/session.h"

#include <QObject>
#include <QString>
#include <memory>
#include <string>

namespace lathe::workbench {

class WorkbenchDocument : public QObject {
  Q_OBJECT

public:
  explicit WorkbenchDocument(QObject* parent = nullptr);

  // The model on display (nullptr before the first successful open), its file, and the
  // Session that opened it: jobs for this model use it, on the worker only.
  const std::shared_ptr<const api::ModelReport>& model() const { return model_; }
  const QString& path() const { return path_; }
  const std::shared_ptr<api::Session>& session() const { return session_; }
  // Another model (or the same one opened again): what was compiled, run, kept and selected
  // for the last one is forgotten (compileChanged, runChanged and selectionChanged follow
  // modelChanged).
  void setModel(const QString& path, std::shared_ptr<const api::ModelReport> model,
                std::shared_ptr<api::Session> session);

  // The target string compiles use ("llvm" for this machine).
  const QString& target() const { return target_; }
  void setTarget(const QString& target);

  // The schedules kept for the next compile, as schedule-set text.
  const std::string& keptSchedules() const { return keptSchedules_; }
  void setKeptSchedules(std::string text);

  // What a run is given: an input file, else filled inputs, and the shapes typed for
  // symbolic dims (both also specialise a compile of a model with symbolic dims).
  const RunSettings& runSettings() const { return runSettings_; }
  void setRunSettings(RunSettings settings);

  // The tuning records Compile and Run apply (empty: none), set when a search finishes.
  const std::string& tuningRecords() const { return tuningRecords_; }
  void setTuningRecords(std::string path) { tuningRecords_ = std::move(path); }

  // The last compile of this model and the threads its code was compiled for (0: one per
  // core; -1: none yet, or unknown after a failed compile for other threads).
  const std::shared_ptr<const api::CompileReport>& compileReport() const { return compile_; }
  int compiledThreads() const { return compiledThreads_; }
  void setCompileReport(std::shared_ptr<const api::CompileReport> report, int threads);
  void forgetCompiledThreads() { compiledThreads_ = -1; }

  // The last finished run of this model.
  const std::shared_ptr<const api::RunReport>& runReport() const { return run_; }
  void setRunReport(std::shared_ptr<const api::RunReport> report);

  // The selected node: an index into model()->final.nodes, or -1.
  int selectedNode() const { return selectedNode_; }
  void setSelectedNode(int node);

signals:
  void modelChanged();
  void targetChanged();
  void compileChanged();
  void runChanged();
  void selectionChanged();

private:
  std::shared_ptr<const api::ModelReport> model_;
  QString path_;
  std::shared_ptr<api::Session> session_;
  QString target_ = QStringLiteral("llvm");
  std::string keptSchedules_;
  std::string tuningRecords_;
  RunSettings runSettings_;
  std::shared_ptr<const api::CompileReport> compile_;
  int compiledThreads_ = -1;
  std::shared_ptr<const api::RunReport> run_;
  int selectedNode_ = -1;
};

} // namespace lathe::workbench
