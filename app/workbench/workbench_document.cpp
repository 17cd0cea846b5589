#include "app/workbench/workbench_document.h"

namespace lathe::workbench {

WorkbenchDocument::WorkbenchDocument(QObject* parent) : QObject(parent) {}

void WorkbenchDocument::setModel(const QString& path, std::shared_ptr<const api::ModelReport> model,
                                 std::shared_ptr<api::Session> session) {
  path_ = path;
  model_ = std::move(model);
  session_ = std::move(session);
  keptSchedules_.clear(); // schedules name this model's kernels
  compile_.reset();
  compiledThreads_ = -1;
  run_.reset();
  selectedNode_ = -1;
  emit modelChanged();
  emit compileChanged();
  emit runChanged();
  emit selectionChanged();
}

void WorkbenchDocument::setTarget(const QString& target) {
  if (target == target_)
    return;
  target_ = target;
  emit targetChanged();
}

void WorkbenchDocument::setKeptSchedules(std::string text) {
  keptSchedules_ = std::move(text);
}

void WorkbenchDocument::setRunSettings(RunSettings settings) {
  runSettings_ = std::move(settings);
}

void WorkbenchDocument::setCompileReport(std::shared_ptr<const api::CompileReport> report,
                                         int threads) {
  compile_ = std::move(report);
  compiledThreads_ = threads;
  emit compileChanged();
}

void WorkbenchDocument::setRunReport(std::shared_ptr<const api::RunReport> report) {
  run_ = std::move(report);
  emit runChanged();
}

void WorkbenchDocument::setSelectedNode(int node) {
  if (node == selectedNode_)
    return;
  selectedNode_ = node;
  emit selectionChanged();
}

} // namespace lathe::workbench
