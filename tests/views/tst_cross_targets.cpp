// The workbench on another machine's code, offscreen: picking AArch64 compiles for it and
// shows its assembly with each kernel's code size; Run builds the export and runs it under
// qemu-aarch64, and its outputs are the host's; File > Export… writes and builds an export.
// LATHE_SCREENSHOT_DIR=DIR keeps pictures of both.
#include "app/workbench/export_dialog.h"
#include "app/workbench/kernels_panel.h"
#include "app/workbench/main_window.h"
#include "views/models/kernel_list_model.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <memory>

using lathe::views::KernelListModel;
using lathe::workbench::ExportDialog;
using lathe::workbench::KernelsPanel;
using lathe::workbench::MainWindow;

namespace {
const QString kSample = QStringLiteral(LATHE_MODEL_DIR "/sample_cnn.onnx");
const QString kAarch64 = QStringLiteral("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1");
constexpr int kTimeoutMs = 240000;

bool installed(const char* program) {
  return !QStandardPaths::findExecutable(QString::fromLatin1(program)).isEmpty();
}

// An output's summary as text, to compare runs.
QString outputsText(const lathe::api::RunReport& r) {
  QStringList parts;
  for (const auto& o : r.outputs)
    parts << QStringLiteral("%1 min %2 max %3 mean %4")
                 .arg(QString::fromStdString(o.name))
                 .arg(o.min, 0, 'g', 6)
                 .arg(o.max, 0, 'g', 6)
                 .arg(o.mean, 0, 'g', 6);
  return parts.join(QLatin1Char('\n'));
}
} // namespace

class TestCrossTargets : public QObject {
  Q_OBJECT

private slots:
  void initTestCase();
  void aarch64CodeIsShownWithSizes();
  void runOnAarch64MatchesTheHost();
  void exportDialogWritesAndBuilds();
  void cudaShowsPtxAndLaunches();

private:
  void shoot(QWidget* w, const char* name) {
    if (const QString dir = qEnvironmentVariable("LATHE_SCREENSHOT_DIR"); !dir.isEmpty())
      QVERIFY(w->grab().save(dir + QLatin1Char('/') + QString::fromLatin1(name)));
  }

  QTemporaryDir settingsDir_;
  std::unique_ptr<MainWindow> window_;
  QString hostOutputs_;
};

void TestCrossTargets::initTestCase() {
  QVERIFY(QFileInfo::exists(kSample));
  QCoreApplication::setOrganizationName(QStringLiteral("Lathe"));
  QCoreApplication::setApplicationName(QStringLiteral("CrossTargetTest"));
  QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settingsDir_.path());
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settingsDir_.path());
  window_ = std::make_unique<MainWindow>();
  window_->resize(1400, 900);
  window_->show();
  QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
  QSignalSpy loaded(window_.get(), &MainWindow::modelLoaded);
  window_->openFile(kSample);
  QVERIFY(loaded.wait(kTimeoutMs));
  // The host's outputs for the same (seeded) inputs, to compare the emulated run with.
  QSignalSpy ran(window_.get(), &MainWindow::runFinished);
  QVERIFY(window_->run());
  QVERIFY(ran.wait(kTimeoutMs));
  QVERIFY(window_->runReport()->runner.empty());
  hostOutputs_ = outputsText(*window_->runReport());
}

void TestCrossTargets::aarch64CodeIsShownWithSizes() {
  QSignalSpy compiled(window_.get(), &MainWindow::compiled);
  QVERIFY(window_->compile());
  QVERIFY(compiled.wait(kTimeoutMs));
  QVERIFY(window_->setTarget(kAarch64)); // a target change recompiles what was compiled
  QVERIFY(window_->isCompiling());
  auto* kernels = window_->findChild<KernelsPanel*>();
  QVERIFY(kernels);
  QVERIFY(!kernels->staleNote().isEmpty()); // the host code on display says it is stale
  QVERIFY(compiled.wait(kTimeoutMs));
  const auto& report = window_->compileReport();
  QVERIFY(report);
  QCOMPARE(QString::fromStdString(report->target), kAarch64);
  QVERIFY(kernels->staleNote().isEmpty());
  // AArch64 assembly with NEON (v registers), and a size for every kernel.
  QVERIFY(window_->selectKernel(0));
  const QString assembly =
      window_->findChild<QPlainTextEdit*>(QStringLiteral("kernelAssembly"))->toPlainText();
  QVERIFY2(assembly.contains(QStringLiteral("ret")) && assembly.contains(QStringLiteral("v0")),
           qPrintable(assembly.left(400)));
  QVERIFY(!assembly.contains(QStringLiteral("%rsp")));
  auto* table = window_->findChild<QTableView*>(QStringLiteral("kernelList"));
  for (int row = 0; row < table->model()->rowCount(); ++row) {
    const QString size = table->model()->index(row, KernelListModel::CodeColumn).data().toString();
    QVERIFY2(size.endsWith(QStringLiteral(" B")) || size.endsWith(QStringLiteral(" KiB")),
             qPrintable(size));
  }
  for (const auto& k : report->kernels)
    QVERIFY2(k.codeBytes > 0, k.name.c_str());
  window_->showPanel(MainWindow::Panel::Kernels);
  window_->findChild<QTabWidget*>(QStringLiteral("kernelCodeTabs"))->setCurrentIndex(3);
  shoot(window_.get(), "target_aarch64_code.png");
}

void TestCrossTargets::runOnAarch64MatchesTheHost() {
  if (!installed("qemu-aarch64") || !installed("aarch64-linux-gnu-gcc"))
    QSKIP("qemu-aarch64 or aarch64-linux-gnu-gcc is not installed");
  QCOMPARE(window_->target(), kAarch64);
  QSignalSpy ran(window_.get(), &MainWindow::runFinished);
  QSignalSpy failed(window_.get(), &MainWindow::runFailed);
  QVERIFY(window_->run());
  QVERIFY(ran.wait(kTimeoutMs));
  QCOMPARE(failed.count(), 0);
  const auto& r = *window_->runReport();
  QVERIFY2(QString::fromStdString(r.runner).contains(QStringLiteral("qemu-aarch64")),
           r.runner.c_str());
  QCOMPARE(outputsText(r), hostOutputs_);
  auto* stats = window_->findChild<QLabel*>(QStringLiteral("runStats"));
  QVERIFY(stats);
  QVERIFY2(stats->text().contains(QStringLiteral("qemu-aarch64")), qPrintable(stats->text()));
  window_->showPanel(MainWindow::Panel::Run);
  shoot(window_.get(), "target_aarch64_run.png");
}

void TestCrossTargets::exportDialogWritesAndBuilds() {
  QTemporaryDir out;
  QVERIFY(out.isValid());
  ExportDialog* dialog = window_->showExportDialog();
  QVERIFY(dialog);
  QVERIFY(QTest::qWaitForWindowExposed(dialog));
  // The toolbar's target is preselected; a CPU typed in replaces its -mcpu.
  QCOMPARE(QString::fromStdString(dialog->request().target), kAarch64);
  auto* cpu = dialog->findChild<QLineEdit*>(QStringLiteral("exportCpu"));
  QVERIFY(cpu->text().isEmpty());
  QCOMPARE(cpu->placeholderText(), QStringLiteral("neoverse-n1"));
  cpu->setText(QStringLiteral("cortex-a72"));
  QCOMPARE(QString::fromStdString(dialog->request().target),
           QStringLiteral("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72"));
  const QString folder = out.filePath(QStringLiteral("sample_aarch64"));
  dialog->setFolder(folder);
  dialog->setBuild(installed("aarch64-linux-gnu-gcc"));
  QSignalSpy finished(window_.get(), &MainWindow::exportFinished);
  QVERIFY(dialog->startExport());
  QVERIFY(dialog->isExporting());
  QVERIFY(finished.wait(kTimeoutMs));
  QVERIFY(!dialog->isExporting());
  const QString result = dialog->resultText();
  QVERIFY2(result.contains(QStringLiteral("Exported")), qPrintable(result));
  QVERIFY2(result.contains(QStringLiteral("aarch64-linux-gnu")), qPrintable(result));
  for (const char* file : {"kernels.o", "weights.o", "model.h", "model.c", "main.c", "Makefile",
                           "README.md", "lathe_runtime.c"})
    QVERIFY2(QFileInfo::exists(folder + QLatin1Char('/') + QString::fromLatin1(file)), file);
  auto* files = dialog->findChild<QTableWidget*>(QStringLiteral("exportFiles"));
  auto* kernels = dialog->findChild<QTableWidget*>(QStringLiteral("exportKernels"));
  QVERIFY(files->rowCount() >= 8);
  QCOMPARE(kernels->rowCount(), static_cast<int>(window_->compileReport()->kernels.size()));
  if (installed("aarch64-linux-gnu-gcc")) {
    QVERIFY2(result.contains(QStringLiteral("Built:")), qPrintable(result));
    QVERIFY(QFileInfo::exists(folder + QStringLiteral("/model")));
  }
  shoot(dialog, "export_dialog.png");

  // A folder that cannot be made: the dialog says why, and nothing is lost.
  QFile blocker(out.filePath(QStringLiteral("a_file")));
  QVERIFY(blocker.open(QIODevice::WriteOnly));
  blocker.close();
  dialog->setFolder(blocker.fileName());
  QVERIFY(dialog->startExport());
  QVERIFY(finished.wait(kTimeoutMs));
  QVERIFY2(dialog->resultText().contains(QStringLiteral("Export failed")),
           qPrintable(dialog->resultText()));
  dialog->close();
  QVERIFY(window_->setTarget(QStringLiteral("llvm")));
}

void TestCrossTargets::cudaShowsPtxAndLaunches() {
  QSignalSpy compiled(window_.get(), &MainWindow::compiled);
  QSignalSpy failed(window_.get(), &MainWindow::compileFailed);
  QSignalSpy loaded(window_.get(), &MainWindow::modelLoaded);
  QVERIFY(window_->compileReport()); // compiled for the host before: the CUDA compile follows
  QVERIFY(window_->setTarget(QStringLiteral("cuda -arch=sm_90")));
  // The sample's Convs run in the CPU's blocked layout: the model opens again without it.
  QVERIFY(loaded.wait(kTimeoutMs));
  // A compile for the previous target may still finish first.
  for (int i = 0; i < 3 && !(window_->compileReport() &&
                             window_->compileReport()->target == "cuda -arch=sm_90");
       ++i)
    QVERIFY2(compiled.wait(kTimeoutMs),
             failed.isEmpty() ? "no compile" : qPrintable(failed.front().front().toString()));
  const auto& report = window_->compileReport();
  QVERIFY(report);
  QCOMPARE(QString::fromStdString(report->target), QStringLiteral("cuda -arch=sm_90"));
  bool plainConv = false;
  for (const lathe::api::KernelReport& k : report->kernels) {
    QVERIFY2(QString::fromStdString(k.name).indexOf(QStringLiteral("nchwc")) < 0, k.name.c_str());
    plainConv = plainConv || k.strategy.find("plain convolution for a GPU") != std::string::npos;
  }
  QVERIFY(plainConv);
  auto* kernels = window_->findChild<KernelsPanel*>();
  QVERIFY(window_->selectKernel(0));
  auto* tabs = window_->findChild<QTabWidget*>(QStringLiteral("kernelCodeTabs"));
  auto* assembly = window_->findChild<QPlainTextEdit*>(QStringLiteral("kernelAssembly"));
  QCOMPARE(tabs->tabText(tabs->indexOf(assembly)), QStringLiteral("PTX"));
  QVERIFY2(assembly->toPlainText().contains(QStringLiteral(".entry ")),
           qPrintable(assembly->toPlainText().left(400)));
  // One row per launch of the kernel, with ptxas's registers where ptxas ran.
  QTableWidget* launches = kernels->gpuLaunchTable();
  QVERIFY(tabs->indexOf(launches) >= 0);
  QCOMPARE(launches->rowCount(), static_cast<int>(report->kernels[0].gpuLaunches.size()));
  QVERIFY(launches->rowCount() >= 1);
  QCOMPARE(launches->item(0, 0)->text(),
           QString::fromStdString(report->kernels[0].gpuLaunches[0].name));
  if (report->kernels[0].gpuLaunches[0].registers >= 0)
    QVERIFY(launches->item(0, 3)->text().toInt() > 0);
  // The kernel with the most spilled bytes (if any) is shown in the warning colours.
  for (int k = 0; k < static_cast<int>(report->kernels.size()); ++k)
    for (const lathe::api::GpuLaunchReport& g :
         report->kernels[static_cast<std::size_t>(k)].gpuLaunches)
      if (g.spillStores > 0) {
        QVERIFY(window_->selectKernel(k));
        bool amber = false;
        for (int row = 0; row < launches->rowCount(); ++row)
          amber = amber || launches->item(row, 0)->background().color() == QColor(0xff, 0xf3, 0xcd);
        QVERIFY(amber);
        break;
      }
  window_->showPanel(MainWindow::Panel::Kernels);
  kernels->showCode(KernelsPanel::Code::GpuLaunches);
  shoot(window_.get(), "target_cuda_launches.png");
  // Back to the host: opened again with the blocked layout, and the GPU tab goes away again.
  QVERIFY(window_->setTarget(QStringLiteral("llvm")));
  QVERIFY(loaded.wait(kTimeoutMs));
  QVERIFY(compiled.wait(kTimeoutMs));
  QVERIFY(tabs->indexOf(launches) < 0);
}

QTEST_MAIN(TestCrossTargets)
#include "tst_cross_targets.moc"
