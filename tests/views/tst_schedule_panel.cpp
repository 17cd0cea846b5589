// The Schedule dock offscreen on sample_cnn: pick a kernel in Code, edit its steps, Apply
// (a real compile and timing of that kernel), see the loop IR diff and the timing, a refused
// step marked on its line, Undo, Keep, and a Compile that replays the kept schedule. Saving
// and loading the kept set round-trips through a schedule file.

#include "app/workbench/explanation_popup.h"
#include "app/workbench/kernels_panel.h"
#include "app/workbench/main_window.h"
#include "app/workbench/schedule_panel.h"
#include "app/workbench/step_through.h"
#include "views/code/code_editor.h"
#include "views/diff/ir_diff_view.h"

#include <QDockWidget>
#include <QFile>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTextCursor>
#include <cstdlib>

using lathe::workbench::KernelsPanel;
using lathe::workbench::MainWindow;
using lathe::workbench::SchedulePanel;

namespace {

const QString kSample = QStringLiteral(LATHE_MODEL_DIR "/sample_cnn.onnx");
constexpr int kTimeoutMs = 120000;

} // namespace

class TestSchedulePanel : public QObject {
  Q_OBJECT

private slots:
  void initTestCase();
  void applyUndoKeepCompile();
  void whyExplainsTheStepOnTheCursorLine();
  void aDefaultTraceIsTheStartingSteps();

private:
  QTemporaryDir dir_;
};

void TestSchedulePanel::initTestCase() {
  QVERIFY(dir_.isValid());
  QCoreApplication::setOrganizationName(QStringLiteral("Lathe"));
  QCoreApplication::setApplicationName(QStringLiteral("lathe-workbench-tests"));
  QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, dir_.path());
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, dir_.path());
}

void TestSchedulePanel::applyUndoKeepCompile() {
  MainWindow window;
  window.resize(1400, 900);
  window.show();
  QSignalSpy loaded(&window, &MainWindow::modelLoaded);
  window.openFile(kSample);
  QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kTimeoutMs);
  SchedulePanel* panel = window.schedulePanel();
  auto* apply = panel->findChild<QPushButton*>(QStringLiteral("scheduleApply"));
  QVERIFY(apply);
  QVERIFY(!apply->isEnabled()); // nothing compiled, no kernel

  QSignalSpy compiled(&window, &MainWindow::compiled);
  QVERIFY(window.compile());
  QTRY_COMPARE_WITH_TIMEOUT(compiled.count(), 1, kTimeoutMs);
  const auto report = window.compileReport();
  int tail = -1;
  for (std::size_t k = 0; k < report->kernels.size(); ++k)
    if (report->kernels[k].name.rfind("fused_add_mul", 0) == 0)
      tail = static_cast<int>(k);
  QVERIFY(tail >= 0);
  const std::string name = report->kernels[static_cast<std::size_t>(tail)].name;
  QVERIFY(window.selectKernel(tail));
  QCOMPARE(panel->kernel(), name);
  window.showPanel(MainWindow::Panel::Schedule);
  const QString loops = panel->findChild<QLabel*>(QStringLiteral("scheduleLoops"))->text();
  QVERIFY2(loops.contains(QStringLiteral("(16)")), qPrintable(loops));
  QVERIFY(apply->isEnabled());
  // A conv kernel's default lowering is described: its tiles and parallel tasks.
  for (std::size_t k = 0; k < report->kernels.size(); ++k)
    if (report->kernels[k].name.rfind("fused_conv", 0) == 0) {
      QVERIFY(window.selectKernel(static_cast<int>(k)));
      const QString strategy =
          panel->findChild<QLabel*>(QStringLiteral("scheduleStrategy"))->text();
      QVERIFY2(strategy.contains(QStringLiteral(" tasks")), qPrintable(strategy));
      break;
    }
  QVERIFY(window.selectKernel(tail));

  // The loop names of the kernel, outermost first, from its loop IR.
  QStringList names;
  for (const QString& part : loops.mid(loops.indexOf(':') + 2).split(QStringLiteral(" · ")))
    names << part.left(part.indexOf(' '));
  QVERIFY(names.size() >= 3); // channel (blocks), rows, columns (and channels in a block)
  const QString good = QStringLiteral("fuse(%1, %2)\nparallel(%1.%2.fused)\nvectorize(%3)\n")
                           .arg(names[0], names[1], names.last());
  panel->setSteps(good);
  QSignalSpy tried(&window, &MainWindow::scheduleTried);
  QTest::mouseClick(apply, Qt::LeftButton);
  QTRY_COMPARE_WITH_TIMEOUT(tried.count(), 1, kTimeoutMs);
  const QString result = panel->resultLabel()->text();
  QVERIFY2(result.contains(QStringLiteral("faster")) || result.contains(QStringLiteral("slower")),
           qPrintable(result));
  QVERIFY(panel->diffView()->changeCount() > 0);
  QVERIFY(panel->diffView()->after()->toPlainText().contains(QStringLiteral("parallel for")));

  // A second Apply compares with the first as well as with the default.
  QTest::mouseClick(apply, Qt::LeftButton);
  QTRY_COMPARE_WITH_TIMEOUT(tried.count(), 2, kTimeoutMs);
  QVERIFY2(panel->resultLabel()->text().contains(QStringLiteral("previous Apply")),
           qPrintable(panel->resultLabel()->text()));
  // Typing previews the IR untimed once the keyboard rests.
  panel->editor()->setFocus();
  QTest::keyClicks(panel->editor(), QStringLiteral("unroll(%1)").arg(names[0]));
  QTRY_COMPARE_WITH_TIMEOUT(tried.count(), 3, kTimeoutMs);
  QVERIFY2(panel->resultLabel()->text().contains(QStringLiteral("not timed")) ||
               panel->resultLabel()->text().startsWith(QStringLiteral("Refused:")),
           qPrintable(panel->resultLabel()->text()));

  // A refused step: the reason, and its line marked in the editor.
  panel->setSteps(good + QStringLiteral("vectorize(%1)\n").arg(names[0]));
  QTest::mouseClick(apply, Qt::LeftButton);
  QTRY_COMPARE_WITH_TIMEOUT(tried.count(), 4, kTimeoutMs);
  QVERIFY2(panel->resultLabel()->text().startsWith(QStringLiteral("Refused:")),
           qPrintable(panel->resultLabel()->text()));
  const auto& marks = panel->editor()->lineMarks();
  QCOMPARE(static_cast<int>(marks.size()), 4);
  QVERIFY(marks.back().line.isValid());

  // Undo returns to the steps applied before; Keep hands them to the next compile.
  panel->undo();
  QCOMPARE(panel->steps(), good);
  panel->keep();
  QCOMPARE(panel->kept().size(), std::size_t{1});
  // Compile while a timed Apply holds the Session: the Apply is dropped, the compile waits
  // for the Session and then runs.
  QTest::mouseClick(apply, Qt::LeftButton);
  QVERIFY(window.compile());
  QVERIFY(window.isCompiling());
  QTRY_COMPARE_WITH_TIMEOUT(compiled.count(), 2, kTimeoutMs);
  const auto& scheduled = window.compileReport()->kernels[static_cast<std::size_t>(tail)];
  QCOMPARE(scheduled.name, name);
  QVERIFY2(scheduled.schedule.find("vectorize(" + names.last().toStdString() + ")") !=
               std::string::npos,
           scheduled.schedule.c_str());
  QVERIFY(scheduled.loopIr.find("ramp(") != std::string::npos);
  // Code lists the kernel as scheduled and shows the trace above its loop IR.
  auto* kernels = window.findChild<KernelsPanel*>();
  QVERIFY(window.selectKernel(tail));
  kernels->showCode(KernelsPanel::Code::LoopIr);
  auto* loopIr = window.findChild<QPlainTextEdit*>(QStringLiteral("kernelLoopIr"));
  QVERIFY(loopIr);
  QVERIFY2(loopIr->toPlainText().startsWith(QStringLiteral("# trace replayed")),
           qPrintable(loopIr->toPlainText().left(200)));

  // Save, forget, load: the same kept set.
  const QString path = dir_.filePath(QStringLiteral("kept.txt"));
  QString error;
  QVERIFY2(panel->saveKept(path, &error), qPrintable(error));
  const auto before = panel->kept();
  panel->reset();
  QVERIFY(panel->kept().empty());
  QVERIFY2(panel->loadKept(path, &error), qPrintable(error));
  QCOMPARE(panel->kept().size(), before.size());
  QVERIFY(panel->kept().begin()->second.find("parallel(") != std::string::npos);
  QFile broken(dir_.filePath(QStringLiteral("broken.txt")));
  QVERIFY(broken.open(QIODevice::WriteOnly));
  broken.write("kernel k:\n  splat(x)\n");
  broken.close();
  QVERIFY(!panel->loadKept(broken.fileName(), &error));
  QVERIFY2(error.contains(QStringLiteral("broken.txt:2: unknown primitive")), qPrintable(error));
}

// Why? explains the primitive of the line the cursor is on, or what a schedule is.
void TestSchedulePanel::whyExplainsTheStepOnTheCursorLine() {
  lathe::workbench::SchedulePanel panel;
  panel.setSteps(QStringLiteral("split(x, 8)\nvectorize(x.i)\n\n"));
  QTextCursor cursor = panel.editor()->textCursor();
  cursor.movePosition(QTextCursor::Start);
  cursor.movePosition(QTextCursor::Down);
  panel.editor()->setTextCursor(cursor);
  QVERIFY(panel.explainStepAtCursor());
  QVERIFY2(panel.explanation()->text().contains(QStringLiteral("vector registers")),
           qPrintable(panel.explanation()->text()));
  cursor.movePosition(QTextCursor::End);
  panel.editor()->setTextCursor(cursor);
  QVERIFY(panel.explainStepAtCursor());
  QVERIFY(panel.explanation()->windowTitle().contains(QStringLiteral("schedule")));
}

// A matrix product is lowered as a plain nest plus a default trace: the panel lists the
// nest's loops and starts from the trace's steps, which replay to the default itself;
// clearing them gives the plain nest; Default puts them back; keeping them keeps nothing.
void TestSchedulePanel::aDefaultTraceIsTheStartingSteps() {
  MainWindow window;
  window.resize(1400, 900);
  window.show();
  QSignalSpy loaded(&window, &MainWindow::modelLoaded);
  window.openFile(QStringLiteral(LATHE_MODEL_DIR "/matmul_zoo.onnx"));
  QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kTimeoutMs);
  QSignalSpy compiled(&window, &MainWindow::compiled);
  QVERIFY(window.compile());
  QTRY_COMPARE_WITH_TIMEOUT(compiled.count(), 1, kTimeoutMs);
  const auto report = window.compileReport();
  int traced = -1;
  for (std::size_t k = 0; k < report->kernels.size() && traced < 0; ++k)
    if (!report->kernels[k].defaultTrace.empty())
      traced = static_cast<int>(k);
  QVERIFY2(traced >= 0, "matmul_zoo has a kernel with a default trace");
  const auto& kernel = report->kernels[static_cast<std::size_t>(traced)];
  QVERIFY(kernel.schedule == kernel.defaultTrace);
  QVERIFY(!kernel.naiveLoopIr.empty() && kernel.naiveLoopIr != kernel.loopIr);
  SchedulePanel* panel = window.schedulePanel();
  QVERIFY(window.selectKernel(traced));
  window.showPanel(MainWindow::Panel::Schedule);
  const QString trace = QString::fromStdString(kernel.defaultTrace);
  QCOMPARE(panel->steps(), trace);
  QVERIFY(trace.contains(QStringLiteral("register_tile(")));
  const QString loops = panel->findChild<QLabel*>(QStringLiteral("scheduleLoops"))->text();
  QVERIFY2(loops.contains(QStringLiteral("k (")) && !loops.contains(QStringLiteral(".init")),
           qPrintable(loops));

  auto* apply = panel->findChild<QPushButton*>(QStringLiteral("scheduleApply"));
  QSignalSpy tried(&window, &MainWindow::scheduleTried);
  QTest::mouseClick(apply, Qt::LeftButton);
  QTRY_COMPARE_WITH_TIMEOUT(tried.count(), 1, kTimeoutMs);
  QVERIFY2(!panel->resultLabel()->text().startsWith(QStringLiteral("Refused:")),
           qPrintable(panel->resultLabel()->text()));
  QCOMPARE(panel->diffView()->changeCount(), 0); // the default trace gives the default

  panel->setSteps(QString());
  QTest::mouseClick(apply, Qt::LeftButton);
  QTRY_COMPARE_WITH_TIMEOUT(tried.count(), 2, kTimeoutMs);
  QVERIFY(panel->diffView()->changeCount() > 0); // the plain nest
  QVERIFY(!panel->diffView()->after()->toPlainText().contains(QStringLiteral("tile")));

  QTest::mouseClick(panel->findChild<QPushButton*>(QStringLiteral("scheduleDefault")),
                    Qt::LeftButton);
  QCOMPARE(panel->steps(), trace);
  panel->keep();
  QVERIFY(panel->kept().empty());
  if (const char* dir = std::getenv("LATHE_SCREENSHOT_DIR"))
    window.grab().save(QString::fromLocal8Bit(dir) + QStringLiteral("/schedule_default_trace.png"));

  // Step through the kernel's node: the plain nest, then each step of the trace with the
  // loops after it and the primitive's explanation.
  int node = -1;
  const auto& graph = window.report()->final.nodes;
  for (int n = 0; n < static_cast<int>(graph.size()) && node < 0; ++n)
    if (graph[static_cast<std::size_t>(n)].name == kernel.nodes.front())
      node = n;
  QVERIFY(node >= 0);
  lathe::workbench::StepThroughDialog* steps = window.showStepThrough(node);
  QVERIFY(steps);
  int tile = -1;
  for (int i = 0; i < steps->stepCount() && tile < 0; ++i)
    if (steps->step(i).title.contains(QStringLiteral("register_tile(")))
      tile = i;
  QVERIFY(tile > 0);
  QVERIFY(steps->step(tile).title.startsWith(QStringLiteral("Step ")));
  steps->showStep(tile);
  QVERIFY2(steps->codeText().contains(QStringLiteral(".tile")), qPrintable(steps->codeText()));
  QVERIFY2(steps->explanationText().contains(QStringLiteral("registers")),
           qPrintable(steps->explanationText()));
  steps->showStep(tile - 1); // before it: no tile yet
  QVERIFY(!steps->codeText().contains(QStringLiteral(".tile")));
  if (const char* dir = std::getenv("LATHE_SCREENSHOT_DIR")) {
    steps->showStep(tile);
    steps->grab().save(QString::fromLocal8Bit(dir) + QStringLiteral("/step_through_trace.png"));
  }
  steps->close();
}

QTEST_MAIN(TestSchedulePanel)
#include "tst_schedule_panel.moc"
