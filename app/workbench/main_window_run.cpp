// MainWindow's Run and Profile docks: running the model, showing the run and its profile,
// the heat map, and jumping from a profiled kernel to its nodes.
#include "app/workbench/kernels_panel.h"
#include "app/workbench/main_window.h"
#include "app/workbench/main_window_text.h"
#include "app/workbench/model_compiler.h"
#include "app/workbench/model_runner.h"
#include "app/workbench/numerics_panel.h"
#include "app/workbench/run_panel.h"
#include "app/workbench/schedule_panel.h"
#include "app/workbench/schedule_trier.h"
#include "views/graph/graph_view.h"
#include "views/graph/heat_colors.h"
#include "views/profile/profile_view.h"

#include <QDockWidget>
#include <QFileInfo>
#include <QTimer>
#include <algorithm>
#include <map>
#include <set>

namespace lathe::workbench {

void MainWindow::createRunDocks() {
  runPanel_ = new RunPanel(this);
  profileView_ = new views::ProfileView(this);
  // Run next to Properties; Profile beside the code panels, so that a click on a kernel shows
  // its code without hiding the profile. Profile stays hidden until there is a profile.
  runDock_ = addPanel(runPanel_, tr("Run"), QStringLiteral("runDock"), Qt::RightDockWidgetArea);
  tabifyDockWidget(propertiesDock_, runDock_);
  propertiesDock_->raise();
  profileDock_ = addPanel(profileView_, tr("Profile"), QStringLiteral("profileDock"),
                          Qt::BottomDockWidgetArea);
  splitDockWidget(passesDock_, profileDock_, Qt::Horizontal);
  profileDock_->hide();
  connect(runPanel_, &RunPanel::runRequested, this, &MainWindow::run);
  connect(runPanel_, &RunPanel::cancelRequested, this, &MainWindow::cancelRun);
  connect(runPanel_, &RunPanel::shapesChanged, this, &MainWindow::updateRunAvailability);
  connect(profileView_, &views::ProfileView::kernelActivated, this,
          &MainWindow::selectProfiledKernel);
  connect(profileView_, &views::ProfileView::heatMapToggled, this, [this](bool on) {
    if (on && graphPass_ >= 0)
      showFinalGraph(); // the profile times the final graph's nodes; applies the heat map
    else
      applyHeatMap();
  });

  // Numerics beside the Log (tabified in createDocks): the table needs the bottom's width.
  numericsPanel_ = new NumericsPanel(this);
  numericsPanel_->setObjectName(QStringLiteral("numericsPanel"));
  numericsDock_ = addPanel(numericsPanel_, tr("Numerics"), QStringLiteral("numericsDock"),
                           Qt::BottomDockWidgetArea);
  connect(numericsPanel_, &NumericsPanel::compareRequested, this, [this] { compareNumerics(); });
  connect(numericsPanel_, &NumericsPanel::nodeActivated, this, &MainWindow::selectNodeByName);
  connect(numericsPanel_, &NumericsPanel::heatMapToggled, this, [this](bool on) {
    if (on && graphPass_ >= 0)
      showFinalGraph(); // applies the heat map
    else
      applyHeatMap();
  });
  connect(numericsPanel_, &NumericsPanel::finished, this, [this] {
    const auto& r = numericsPanel_->report();
    log(tr("Compared %1 with the %2: %3 match, %4 diverge")
            .arg(QFileInfo(currentFile_).fileName(), qs(r->reference))
            .arg(r->matched)
            .arg(r->diverged));
    applyHeatMap();
  });
  connect(numericsPanel_, &NumericsPanel::failed, this, [this](const QString& message) {
    log(tr("error: comparison failed: %1").arg(message), LogLevel::Error);
  });
}

bool MainWindow::compareNumerics(const QString& referenceModel) {
  if (!report_ || currentFile_.isEmpty() || numericsPanel_->isComparing())
    return false;
  api::CompareOptions options;
  options.model = currentFile_.toStdString();
  options.referenceModel = referenceModel.toStdString();
  options.inputsNpz = runPanel_->settings().inputsNpz;
  options.threads = runPanel_->threads();
  showPanel(Panel::Numerics);
  return numericsPanel_->compare(std::move(options));
}

// A row of the Numerics table: its node in the final graph (by ONNX name), if a pass kept it.
void MainWindow::selectNodeByName(const QString& name) {
  if (!report_)
    return;
  const std::string wanted = name.toStdString();
  const auto& nodes = report_->final.nodes;
  for (int n = 0; n < static_cast<int>(nodes.size()); ++n) {
    if (nodes[n].name == wanted) {
      if (graphPass_ >= 0)
        showFinalGraph();
      selectNode(n);
      return;
    }
  }
}

bool MainWindow::run() {
  if (!report_ || !session_ || runner_->isRunning() || pendingRun_)
    return false;
  if (!runPanel_->shapeProblem().isEmpty())
    return false;
  runPanel_->setRunning(true);
  // A model with symbolic input dims goes through compile() each time: its shapes may have
  // changed, and the Kernels panel shows the code compiled for them (reused when it was
  // compiled before).
  if (compileReport() && !compiler_->isCompiling() && !runPanel_->hasSymbolicInputs())
    return startRun();
  // Compile first (keeping the code, so that a profiled kernel can show it), then run.
  pendingRun_ = true;
  if (!compiler_->isCompiling() && !compile()) {
    pendingRun_ = false;
    runPanel_->setRunning(false);
    updateRunAvailability();
    return false;
  }
  runPanel_->setProgress(-1, tr("Waiting for the compile\u2026"));
  updateRunAvailability();
  return true;
}

bool MainWindow::startRun() {
  // A cancelled compile or run may still hold the Session on a worker: wait for it.
  if (compiler_->isBusyWith(session_.get()) || runner_->isBusyWith(session_.get()) ||
      trier_->isBusyWith(session_.get())) {
    pendingRun_ = true;
    runPanel_->setRunning(true);
    runPanel_->setProgress(-1, tr("Waiting for the engine to finish the cancelled job\u2026"));
    updateRunAvailability();
    return true;
  }
  pendingRun_ = false;
  RunSettings settings = runPanel_->settings();
  settings.target = target().toStdString();
  settings.scheduleText = schedulePanel_->keptScheduleText();
  const int threads = runPanel_->threads();
  settings.compileThreads = threads != sessionThreads_ ? threads : -1;
  if (!runner_->run(session_, report_, settings)) {
    runPanel_->setRunning(false);
    return false;
  }
  sessionThreads_ = threads; // set back to -1 if the run fails
  runPanel_->setRunning(true);
  updateRunAvailability();
  log(tr("Running %1: %2 timed runs, %3 inputs%4")
          .arg(QFileInfo(currentFile_).fileName())
          .arg(settings.repeat)
          .arg(settings.inputsNpz.empty() ? qs(settings.fill) : qs(settings.inputsNpz))
          .arg(settings.profile ? tr(", profiled") : QString()));
  return true;
}

void MainWindow::cancelRun() {
  if (pendingRun_) {
    pendingRun_ = false;
  } else if (runner_->isRunning()) {
    runner_->drop();
  } else {
    return;
  }
  runPanel_->setRunning(false);
  updateRunAvailability();
  log(tr("Cancelled running %1").arg(QFileInfo(currentFile_).fileName()));
}

bool MainWindow::isRunning() const {
  return runner_->isRunning() || pendingRun_;
}

const std::shared_ptr<const api::RunReport>& MainWindow::runReport() const {
  return runPanel_->report();
}

void MainWindow::updateRunAvailability() {
  const bool canRun = report_ && session_ && !runner_->isRunning() && !pendingRun_ &&
                      runPanel_->shapeProblem().isEmpty();
  runAction_->setEnabled(canRun);
  runPanel_->setCanRun(canRun);
  numericsPanel_->setCanCompare(report_ && !currentFile_.isEmpty());
}

void MainWindow::showRunReport(const std::shared_ptr<const api::ModelReport>& model,
                               std::shared_ptr<const api::RunReport> report) {
  if (model != report_)
    return;
  runPanel_->setRunning(false);
  const api::RunReport& r = *report;
  log(tr("Ran %1: %2 timed %3 on %4 %5, median %6 (min %7, max %8)")
          .arg(QFileInfo(currentFile_).fileName())
          .arg(r.latenciesMs.size())
          .arg(r.latenciesMs.size() == 1 ? tr("run") : tr("runs"))
          .arg(r.threads)
          .arg(r.threads == 1 ? tr("thread") : tr("threads"))
          .arg(ms(r.medianMs), ms(r.minMs), ms(r.maxMs)));
  if (r.profile) {
    profileView_->setReport(report,
                            std::shared_ptr<const api::GraphSnapshot>(report_, &report_->final));
    applyHeatMap(); // the new profile's times
    const bool firstShow = profileDock_->isHidden();
    profileDock_->show();
    profileDock_->raise();
    if (firstShow && !layoutRestored_) {
      // Half the bottom area, not the dock's narrow size hint: the timeline, the bar chart
      // and the table need the width. Sizes only stick once the dock is laid out.
      // resizeDocks() alone loses to the code panels' size hints, so the width is forced
      // for one layout pass and then released (the user can drag the splitter again).
      profileDock_->setMinimumWidth(width() * 45 / 100);
      QTimer::singleShot(0, this, [this] { profileDock_->setMinimumWidth(0); });
    }
  }
  runPanel_->showReport(std::move(report));
  updateRunAvailability();
  emit runFinished();
}

void MainWindow::showRunFailure(const std::shared_ptr<const api::ModelReport>& model,
                                const api::Failure& failure) {
  if (model != report_)
    return;
  runPanel_->setRunning(false);
  sessionThreads_ = -1; // a compile for other threads may have failed half-way
  updateRunAvailability();
  const QString fileName = QFileInfo(currentFile_).fileName();
  const QString message = failure.message.empty()
                              ? tr("%1: could not be run (%2)").arg(fileName, qs(failure.kind))
                              : qs(failure.message);
  if (failure.kind == "cancelled") {
    log(tr("Cancelled running %1").arg(fileName));
    return;
  }
  log(tr("error: %1").arg(message), LogLevel::Error);
  showErrorDialog(QStringLiteral("runErrorDialog"), tr("Cannot Run Model"),
                  tr("Lathe could not run %1.").arg(fileName), message);
  emit runFailed(message);
}

// A kernel clicked in the profile: its code in Code and its nodes in the graph; by node names
// alone when the model was run without a compile that kept the code.
void MainWindow::selectProfiledKernel(const QString& kernel, const QStringList& nodes) {
  if (const auto& compiled = kernels_->report()) {
    const std::string name = kernel.toStdString();
    for (int k = 0; k < static_cast<int>(compiled->kernels.size()); ++k) {
      if (compiled->kernels[k].name == name) {
        selectKernel(k); // outlines its nodes in the graph too
        highlightKernel(k);
        return;
      }
    }
  }
  if (!report_ || graphPass_ >= 0)
    return;
  const std::set<QString> names(nodes.begin(), nodes.end());
  std::vector<int> indices;
  for (int n = 0; n < static_cast<int>(report_->final.nodes.size()); ++n) {
    if (names.count(qs(report_->final.nodes[n].name)))
      indices.push_back(n);
  }
  if (!indices.empty())
    graph_->revealNode(indices.front());
  graph_->highlightNodes(std::move(indices));
}

// With the Profile's "Heat map" on, the final graph is coloured by each node's share of the
// kernels' time: each kernel's whole time on its anchor node (see views::nodeTimeShares).
void MainWindow::applyHeatMap() {
  // The Numerics heat map wins while it is on: each node's max relative error (capped at 1).
  if (const auto& compared = numericsPanel_->report();
      compared && numericsPanel_->isHeatMapOn() && report_ && graphPass_ < 0) {
    std::map<std::string, double> errors;
    for (const auto& v : compared->values) {
      if (v.status == "match" || v.status == "diverges")
        errors[v.node] = std::max(errors[v.node], std::min(1.0, v.maxRelError));
    }
    std::vector<double> heat(report_->final.nodes.size(), 0.0);
    for (std::size_t n = 0; n < heat.size(); ++n) {
      if (const auto it = errors.find(report_->final.nodes[n].name); it != errors.end())
        heat[n] = it->second;
    }
    graph_->setHeatTitle(tr("Error vs reference: max relative error"));
    graph_->setNodeHeat(std::move(heat));
    return;
  }
  graph_->setHeatTitle({});
  const auto& run = profileView_->report();
  if (!profileView_->isHeatMapOn() || !run || !run->profile || !report_ || graphPass_ >= 0) {
    graph_->setNodeHeat({});
    return;
  }
  graph_->setNodeHeat(views::nodeTimeShares(*run->profile, report_->final));
}

} // namespace lathe::workbench
