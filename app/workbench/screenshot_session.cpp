#include "app/workbench/screenshot_session.h"

#include "app/workbench/kernels_panel.h"
#include "app/workbench/main_window.h"
#include "app/workbench/run_panel.h"
#include "app/workbench/schedule_panel.h"
#include "app/workbench/step_through.h"
#include "views/graph/graph_view.h"
#include "views/profile/profile_view.h"

#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QPixmap>
#include <QRegularExpression>
#include <QTimer>
#include <cstdio>

namespace lathe::workbench {
namespace {

// The node the Properties shot shows: the first convolution, else the first node.
int firstConvLikeNode(const api::GraphSnapshot& graph) {
  for (int i = 0; i < static_cast<int>(graph.nodes.size()); ++i) {
    const api::NodeSummary& node = graph.nodes[i];
    if (node.category == "convolution" || node.opType.find("Conv") != std::string::npos)
      return i;
  }
  return graph.nodes.empty() ? -1 : 0;
}

// The kernel the Kernels shot shows: the first fused one (several nodes), else the first.
int firstFusedKernel(const api::CompileReport& report) {
  for (int i = 0; i < static_cast<int>(report.kernels.size()); ++i) {
    if (report.kernels[i].nodes.size() > 1)
      return i;
  }
  return report.kernels.empty() ? -1 : 0;
}

int firstChangedPass(const std::vector<api::PassRecord>& passes) {
  for (int i = 0; i < static_cast<int>(passes.size()); ++i) {
    if (passes[i].changed)
      return i;
  }
  return passes.empty() ? -1 : 0;
}

// Lets queued layout and paint work run so the grab shows the settled window.
void settle() {
  for (int i = 0; i < 3; ++i)
    QApplication::processEvents();
}

} // namespace

ScreenshotSession::ScreenshotSession(MainWindow* window, QString directory, QObject* parent)
    : QObject(parent), window_(window), directory_(std::move(directory)) {
  connect(window_, &MainWindow::modelLoaded, this,
          [this] { afterLayout(&ScreenshotSession::capture); });
  connect(window_, &MainWindow::compiled, this,
          [this] { QTimer::singleShot(0, this, &ScreenshotSession::captureKernels); });
  const auto fail = [](const QString& message) {
    std::fprintf(stderr, "lathe-workbench: %s\n", qPrintable(message));
    QApplication::exit(1);
  };
  connect(window_, &MainWindow::loadFailed, this, fail);
  connect(window_, &MainWindow::compileFailed, this, fail);
  connect(window_, &MainWindow::runFinished, this,
          [this] { QTimer::singleShot(0, this, &ScreenshotSession::captureRun); });
  connect(window_, &MainWindow::runFailed, this, fail);
  connect(window_, &MainWindow::scheduleTried, this,
          [this] { QTimer::singleShot(0, this, &ScreenshotSession::captureSchedule); });
}

bool ScreenshotSession::save(QWidget* widget, const QString& fileName) {
  settle();
  const QString path = QDir(directory_).filePath(fileName);
  if (!widget->grab().save(path, "PNG")) {
    std::fprintf(stderr, "lathe-workbench: cannot write %s\n", qPrintable(path));
    return false;
  }
  std::printf("%s\n", qPrintable(QDir::toNativeSeparators(path)));
  return true;
}

void ScreenshotSession::afterLayout(void (ScreenshotSession::*next)()) {
  views::GraphView* graph = window_->graphView();
  if (!graph->isLayingOut()) {
    QTimer::singleShot(0, this, next);
    return;
  }
  auto connection = std::make_shared<QMetaObject::Connection>();
  *connection = connect(graph, &views::GraphView::layoutFinished, this, [this, connection, next] {
    disconnect(*connection);
    QTimer::singleShot(0, this, next);
  });
}

QWidget* ScreenshotSession::dock(const char* name) const {
  return window_->findChild<QDockWidget*>(QString::fromLatin1(name));
}

void ScreenshotSession::capture() {
  if (!QDir().mkpath(directory_)) {
    std::fprintf(stderr, "lathe-workbench: cannot create %s\n", qPrintable(directory_));
    QApplication::exit(1);
    return;
  }
  const api::ModelReport& report = *window_->report();
  window_->selectNode(firstConvLikeNode(report.final));
  window_->showPanel(MainWindow::Panel::Properties);
  ok_ = save(window_, QStringLiteral("main_window.png"));
  ok_ = save(window_->graphView(), QStringLiteral("graph.png")) && ok_;
  ok_ = save(dock("propertiesDock"), QStringLiteral("properties.png")) && ok_;

  window_->selectPass(firstChangedPass(report.passes));
  afterLayout(&ScreenshotSession::capturePass);
}

void ScreenshotSession::capturePass() {
  ok_ = save(dock("passesDock"), QStringLiteral("passes.png")) && ok_;
  ok_ = save(window_->centralWidget(), QStringLiteral("graph_after_pass.png")) && ok_;
  window_->showFinalGraph();
  window_->showPanel(MainWindow::Panel::Ir);
  ok_ = save(dock("irDock"), QStringLiteral("ir.png")) && ok_;
  if (RunPanel* run = window_->runPanel(); !run->shapeProblem().isEmpty()) {
    // Symbolic input dims that no one has given: the Run panel asking for them is the
    // last shot, since nothing compiles before they are given.
    window_->showPanel(MainWindow::Panel::Run);
    settle();
    ok_ = save(dock("runDock"), QStringLiteral("run_shapes.png")) && ok_;
    std::printf("no compile or run: %s\n", qPrintable(run->shapeProblem()));
    std::fflush(stdout);
    QApplication::exit(ok_ ? 0 : 1);
    return;
  }
  std::fflush(stdout);
  if (!ok_ || !window_->compile()) {
    QApplication::exit(1);
    return;
  }
  // captureKernels() follows once the compile is done.
}

void ScreenshotSession::captureKernels() {
  auto* kernels = window_->findChild<KernelsPanel*>();
  window_->selectKernel(firstFusedKernel(*window_->compileReport()));
  kernels->showCode(KernelsPanel::Code::LoopIr);
  bool ok = save(dock("codeDock"), QStringLiteral("kernels.png"));
  ok_ = save(window_, QStringLiteral("main_window_code.png")) && ok && ok_;
  // Teaching mode on the first convolution, at its assembly.
  const auto& nodes = window_->report()->final.nodes;
  for (int n = 0; n < static_cast<int>(nodes.size()); ++n) {
    if (nodes[n].category != "convolution")
      continue;
    if (StepThroughDialog* steps = window_->showStepThrough(n)) {
      steps->showStep(steps->stepCount() - 1);
      settle();
      ok_ = save(steps, QStringLiteral("step_through.png")) && ok_;
      steps->close();
    }
    break;
  }
  std::fflush(stdout);
  // Five profiled runs: enough for a distribution and a readable timeline.
  RunPanel* run = window_->runPanel();
  run->setRepeat(5);
  run->setProfile(true);
  window_->showPanel(MainWindow::Panel::Run);
  if (!ok_ || !window_->run()) {
    QApplication::exit(1);
    return;
  }
  // captureRun() follows once the run is done.
}

void ScreenshotSession::captureRun() {
  const auto& report = window_->runReport();
  if (report && report->profile && !report->profile->rows.empty())
    window_->profileView()->selectKernel(QString::fromStdString(report->profile->rows[0].kernel));
  // Profile opens at its last width; the shot wants it half the window wide.
  auto* code = window_->findChild<QDockWidget*>(QStringLiteral("codeDock"));
  auto* profile = window_->findChild<QDockWidget*>(QStringLiteral("profileDock"));
  settle();
  window_->resizeDocks({code, profile}, {window_->width() / 2, window_->width() / 2},
                       Qt::Horizontal);
  bool ok = save(dock("runDock"), QStringLiteral("run.png"));
  ok = save(dock("profileDock"), QStringLiteral("profile.png")) && ok;
  ok = save(window_, QStringLiteral("main_window_run.png")) && ok;
  std::fflush(stdout);
  ok_ = ok && ok_;
  // The Schedule tab: the last kernel whose loops nest three deep, its two outer loops fused
  // and run in parallel, the inner one vectorized.
  const auto& kernels = window_->compileReport()->kernels;
  static const QRegularExpression loop(QStringLiteral(R"(for \((\S+), 0, \d+\))"));
  for (int k = static_cast<int>(kernels.size()) - 1; k >= 0; --k) {
    QStringList names;
    auto it = loop.globalMatch(QString::fromStdString(kernels[k].loopIr));
    while (it.hasNext())
      names << it.next().captured(1);
    if (names.size() < 3 || kernels[k].loopIr.find("allocate") != std::string::npos ||
        !kernels[k].defaultTrace.empty())
      continue; // an elementwise nest: rows, columns (channel blocks), the innermost loop
    window_->selectKernel(k);
    window_->showPanel(MainWindow::Panel::Schedule);
    window_->schedulePanel()->setSteps(
        QStringLiteral("fuse(%1, %2)\nparallel(%1.%2.fused)\nvectorize(%3)\n")
            .arg(names[0], names[1], names.last()));
    if (ok_ && window_->trySchedule())
      return; // captureSchedule() follows
    break;
  }
  QApplication::exit(1);
}

void ScreenshotSession::captureSchedule() {
  const bool ok = save(dock("scheduleDock"), QStringLiteral("schedule.png"));
  std::fflush(stdout);
  QApplication::exit(ok && ok_ ? 0 : 1);
}

} // namespace lathe::workbench
