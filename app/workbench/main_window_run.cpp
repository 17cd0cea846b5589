// MainWindow's Run and Profile docks: running the model, showing the run and its profile,
// the heat map, and jumping from a profiled kernel to its nodes.
#include "app/workbench/engine_jobs.h"
#include "app/workbench/kernels_panel.h"
#include "app/workbench/main_window.h"
#include "app/workbench/main_window_text.h"
#include "app/workbench/numerics_panel.h"
#include "app/workbench/run_panel.h"
#include "app/workbench/schedule_panel.h"
#include "app/workbench/session_worker.h"
#include "app/workbench/workbench_document.h"
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
  runDock_ = addPanel(runPanel_, tr("Run"), QStringLiteral("runDock"), Qt::RightDockWidgetArea,
                      Scroll::WhenSmall);
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
  // A chunk of a parallel loop on the timeline: after its kernel, the loop that ran it.
  connect(profileView_, &views::ProfileView::parallelChunkActivated, this,
          [this](const QString& kernel, qint64 first, qint64 end, qint64 iterations) {
            const auto& compiled = doc_->compileReport();
            const int k = kernels_->selectedKernel();
            if (compiled && k >= 0 &&
                qs(compiled->kernels[static_cast<std::size_t>(k)].name) == kernel)
              kernels_->showParallelLoop(iterations, first, end);
          });
  // And back: a kernel selected in Code is selected in the profile's table and timeline.
  connect(kernels_, &KernelsPanel::kernelSelected, this, [this](int kernel) {
    const auto& compiled = doc_->compileReport();
    if (compiled && kernel >= 0 && kernel < static_cast<int>(compiled->kernels.size()))
      profileView_->selectKernel(qs(compiled->kernels[static_cast<std::size_t>(kernel)].name));
  });
  connect(profileView_, &views::ProfileView::heatMapToggled, this, [this](bool on) {
    if (on && graphPass_ != kFinalGraph)
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
    if (on && graphPass_ != kFinalGraph)
      showFinalGraph(); // applies the heat map
    else
      applyHeatMap();
  });
  connect(numericsPanel_, &NumericsPanel::finished, this, [this] {
    const auto& r = numericsPanel_->report();
    log(tr("Compared %1 with the %2: %3 match, %4 diverge")
            .arg(QFileInfo(doc_->path()).fileName(), qs(r->reference))
            .arg(r->matched)
            .arg(r->diverged));
    if (numericsPanel_->isHeatMapOn() && graphPass_ != kFinalGraph)
      showFinalGraph(); // the comparison is of the optimised graph's values; applies the map
    else
      applyHeatMap();
  });
  connect(numericsPanel_, &NumericsPanel::failed, this, [this](const QString& message) {
    log(tr("error: comparison failed: %1").arg(message), LogLevel::Error);
  });
}

bool MainWindow::compareNumerics(const QString& referenceModel) {
  if (!doc_->model() || doc_->path().isEmpty() || numericsPanel_->isComparing())
    return false;
  api::CompareOptions options;
  options.model = doc_->path().toStdString();
  options.referenceModel = referenceModel.toStdString();
  doc_->setRunSettings(runPanel_->settings());
  options.inputsNpz = doc_->runSettings().inputsNpz;
  options.threads = runPanel_->threads();
  showPanel(Panel::Numerics);
  return numericsPanel_->compare(std::move(options));
}

// A row of the Numerics table: its node in the final graph (by ONNX name), if a pass kept it.
void MainWindow::selectNodeByName(const QString& name) {
  if (!doc_->model())
    return;
  const std::string wanted = name.toStdString();
  const auto& nodes = doc_->model()->final.nodes;
  for (int n = 0; n < static_cast<int>(nodes.size()); ++n) {
    if (nodes[n].name == wanted) {
      if (graphPass_ != kFinalGraph)
        showFinalGraph();
      selectNode(n);
      return;
    }
  }
}

bool MainWindow::run() {
  if (!doc_->model() || !doc_->session() || worker_->isBusy(jobs::kRun) ||
      worker_->isBusy(jobs::kTune))
    return false;
  if (!runPanel_->shapeProblem().isEmpty())
    return false;
  doc_->setRunSettings(runPanel_->settings());
  RunSettings settings = doc_->runSettings();
  settings.target = target().toStdString();
  settings.scheduleText = doc_->keptSchedules();
  settings.tuningRecords = doc_->tuningRecords();
  const int threads = runPanel_->threads();
  const bool elsewhere = !api::runsInThisProcess(settings.target);
  if (elsewhere && settings.profile) {
    settings.profile = false;
    log(tr("%1 runs under an emulator: the run is not profiled").arg(target()), LogLevel::Warning);
  }
  // Compiled first (keeping the code, so that a profiled kernel can show it) unless the
  // Session holds code for these threads. A model with symbolic input dims goes through
  // compile() each time: its shapes may have changed (code compiled for them before is
  // reused). A compile in flight is waited for: the worker runs jobs in order.
  const bool compiled =
      elsewhere || (compileReport() && !worker_->isBusy(jobs::kCompile) &&
                    !runPanel_->hasSymbolicInputs() && threads == doc_->compiledThreads());
  settings.compileThreads = compiled ? -1 : threads;
  const auto model = doc_->model();
  const std::string path = doc_->path().toStdString();
  worker_->post(
      jobs::kRun,
      [this, session = doc_->session(), model, path,
       settings](const SessionWorker::Context& context) -> SessionWorker::Deliver {
        RunOutcome outcome = runJob(*session, path, settings, context);
        return [this, model, settings, outcome] { finishRun(model, settings, outcome); };
      },
      [this, model, path, settings](const std::string& error) -> SessionWorker::Deliver {
        RunOutcome outcome;
        outcome.run.failure = internalFailure(path, error);
        return [this, model, settings, outcome] { finishRun(model, settings, outcome); };
      });
  runPanel_->setRunning(true);
  if (worker_->isBusy(jobs::kCompile) || !worker_->isIdle())
    runPanel_->setProgress(-1, tr("Waiting for the engine\u2026"));
  updateRunAvailability();
  updateScheduleAvailability();
  log(tr("Running %1%2: %3 timed runs, %4 inputs%5")
          .arg(QFileInfo(doc_->path()).fileName(),
               elsewhere ? tr(" for %1 (exported, built and run under its emulator)").arg(target())
                         : QString())
          .arg(settings.repeat)
          .arg(settings.inputsNpz.empty() ? qs(settings.fill) : qs(settings.inputsNpz))
          .arg(settings.profile ? tr(", profiled") : QString()));
  return true;
}

void MainWindow::finishRun(const std::shared_ptr<const api::ModelReport>& model,
                           const RunSettings& settings, const RunOutcome& outcome) {
  if (model != doc_->model())
    return;
  if (outcome.compileFailed) {
    runPanel_->setRunning(false);
    doc_->forgetCompiledThreads();
    updateRunAvailability();
    showCompileFailure(model, *outcome.run.failure);
    return;
  }
  if (const auto& compiled = outcome.compiled) {
    // New code (or other shapes' code) for the Code panel; the same code compiled before
    // for these threads leaves the panel as it is.
    if (!compiled->reused || !compileReport() ||
        compileReport()->specialisedFor != compiled->specialisedFor)
      showKernels(model, compiled, settings.compileThreads);
    else
      doc_->setCompileReport(compileReport(), settings.compileThreads);
  }
  if (outcome.run.ok())
    showRunReport(model, outcome.run.report);
  else
    showRunFailure(model, *outcome.run.failure);
}

void MainWindow::cancelRun() {
  if (!worker_->cancel(jobs::kRun))
    return;
  runPanel_->setRunning(false);
  updateRunAvailability();
  updateScheduleAvailability();
  log(tr("Cancelled running %1").arg(QFileInfo(doc_->path()).fileName()));
}

bool MainWindow::isRunning() const {
  return worker_->isBusy(jobs::kRun);
}

const std::shared_ptr<const api::RunReport>& MainWindow::runReport() const {
  return doc_->runReport();
}

void MainWindow::updateRunAvailability() {
  const bool canRun = doc_->model() && doc_->session() && !worker_->isBusy(jobs::kRun) &&
                      !worker_->isBusy(jobs::kTune) && runPanel_->shapeProblem().isEmpty();
  runAction_->setEnabled(canRun);
  runPanel_->setCanRun(canRun);
  numericsPanel_->setCanCompare(doc_->model() && !doc_->path().isEmpty());
}

void MainWindow::showRunReport(const std::shared_ptr<const api::ModelReport>& model,
                               std::shared_ptr<const api::RunReport> report) {
  if (model != doc_->model())
    return;
  runPanel_->setRunning(false);
  const api::RunReport& r = *report;
  if (!r.runner.empty())
    log(tr("Ran %1 for %2: %3%4")
            .arg(QFileInfo(doc_->path()).fileName(), qs(r.target), qs(r.runner),
                 r.timed ? tr("; median %1").arg(ms(r.medianMs)) : QString()));
  else
    log(tr("Ran %1: %2 timed %3 on %4 %5, median %6 (min %7, max %8)")
            .arg(QFileInfo(doc_->path()).fileName())
            .arg(r.latenciesMs.size())
            .arg(r.latenciesMs.size() == 1 ? tr("run") : tr("runs"))
            .arg(r.threads)
            .arg(r.threads == 1 ? tr("thread") : tr("threads"))
            .arg(ms(r.medianMs), ms(r.minMs), ms(r.maxMs)));
  if (r.profile) {
    profileView_->setReport(
        report, std::shared_ptr<const api::GraphSnapshot>(doc_->model(), &doc_->model()->final));
    if (profileView_->isHeatMapOn() && graphPass_ == kAuthoredGraph)
      showFinalGraph(); // the profile times the optimised graph's nodes; applies the map
    else
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
  doc_->setRunReport(std::move(report)); // the Run panel follows
  updateRunAvailability();
  emit runFinished();
}

void MainWindow::showRunFailure(const std::shared_ptr<const api::ModelReport>& model,
                                const api::Failure& failure) {
  if (model != doc_->model())
    return;
  runPanel_->setRunning(false);
  doc_->forgetCompiledThreads(); // a compile for other threads may have failed half-way
  updateRunAvailability();
  const QString fileName = QFileInfo(doc_->path()).fileName();
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
  if (const auto& compiled = doc_->compileReport()) {
    const std::string name = kernel.toStdString();
    for (int k = 0; k < static_cast<int>(compiled->kernels.size()); ++k) {
      if (compiled->kernels[k].name == name) {
        selectKernel(k); // outlines its nodes in the graph too
        highlightKernel(k);
        return;
      }
    }
  }
  if (!doc_->model() || graphPass_ != kFinalGraph)
    return;
  const std::set<QString> names(nodes.begin(), nodes.end());
  std::vector<int> indices;
  for (int n = 0; n < static_cast<int>(doc_->model()->final.nodes.size()); ++n) {
    if (names.count(qs(doc_->model()->final.nodes[n].name)))
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
      compared && numericsPanel_->isHeatMapOn() && doc_->model() && graphPass_ == kFinalGraph) {
    std::map<std::string, double> errors;
    for (const auto& v : compared->values) {
      if (v.status == "match" || v.status == "diverges")
        errors[v.node] = std::max(errors[v.node], std::min(1.0, v.maxRelError));
    }
    std::vector<double> heat(doc_->model()->final.nodes.size(), 0.0);
    for (std::size_t n = 0; n < heat.size(); ++n) {
      if (const auto it = errors.find(doc_->model()->final.nodes[n].name); it != errors.end())
        heat[n] = it->second;
    }
    graph_->setHeatTitle(tr("Error vs reference: max relative error"));
    graph_->setNodeHeat(std::move(heat));
    return;
  }
  graph_->setHeatTitle({});
  const auto& run = profileView_->report();
  if (!profileView_->isHeatMapOn() || !run || !run->profile || !doc_->model() ||
      graphPass_ != kFinalGraph) {
    graph_->setNodeHeat({});
    return;
  }
  graph_->setNodeHeat(views::nodeTimeShares(*run->profile, doc_->model()->final));
}

} // namespace lathe::workbench
