// The Passes tab with a real pipeline: sample_cnn.onnx opened by api::Session, a pass that
// changed the graph selected, its side-by-side diff checked row by row. With the big
// models generated (tests/cli), also times the diff of ResNet-50's largest pass.

#include "app/workbench/explanation_popup.h"
#include "app/workbench/passes_panel.h"
#include "views/code/code_colors.h"
#include "views/code/code_editor.h"
#include "views/diff/ir_diff_view.h"
#include "views/models/pass_list_model.h"

#include <QAbstractButton>
#include <QAbstractItemView>
#include <QCheckBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTest>
#include <QTextBlock>

using namespace lathe;
using views::DiffRow;
using workbench::PassesPanel;

namespace {

QString modelPath(const char* name) {
  return QDir(QStringLiteral(LATHE_MODEL_DIR)).filePath(QString::fromLatin1(name));
}

std::shared_ptr<const api::ModelReport> open(const QString& path) {
  api::Session session;
  api::OpenResult r = session.openModel(path.toStdString());
  if (!r.ok())
    qFatal("cannot open %s: %s", qPrintable(path), r.failure->message.c_str());
  return r.report;
}

int passIndex(const api::ModelReport& report, const std::string& name) {
  for (std::size_t i = 0; i < report.passes.size(); ++i)
    if (report.passes[i].name == name)
      return static_cast<int>(i);
  return -1;
}

QStringList lines(const std::string& text) {
  QStringList out = QString::fromStdString(text).split(QLatin1Char('\n'));
  if (!out.isEmpty() && out.back().isEmpty())
    out.pop_back();
  return out;
}

// The pane's lines that are not filler rows, in order.
QStringList realLines(const views::CodeEditor& pane, const std::vector<DiffRow>& rows, bool left) {
  QStringList out;
  QTextBlock block = pane.document()->firstBlock();
  for (const DiffRow& row : rows) {
    if ((left ? row.left : row.right) >= 0)
      out << block.text();
    block = block.next();
  }
  return out;
}

void saveShot(QWidget& widget, const QString& name) {
  const QString dir = qEnvironmentVariable("LATHE_SHOT_DIR");
  if (!dir.isEmpty())
    widget.grab().save(QDir(dir).filePath(name));
}

} // namespace

class TestPassesPanel : public QObject {
  Q_OBJECT

private slots:
  void initTestCase();
  void foldBatchNormDiff();
  void navigationAndScrolling();
  void hideUnchangedAndIrOnly();
  void whyExplainsThePass();
  void resnet50DiffTime();

private:
  std::shared_ptr<const api::ModelReport> report_;
};

void TestPassesPanel::initTestCase() {
  report_ = open(modelPath("sample_cnn.onnx"));
  QVERIFY(passIndex(*report_, "fold-batchnorm") >= 0);
}

void TestPassesPanel::foldBatchNormDiff() {
  PassesPanel panel;
  panel.resize(1100, 800);
  panel.setPasses(std::shared_ptr<const std::vector<api::PassRecord>>(report_, &report_->passes),
                  std::shared_ptr<const api::GraphSnapshot>(report_, &report_->imported));
  panel.show();
  QVERIFY(QTest::qWaitForWindowExposed(&panel));
  const int pass = passIndex(*report_, "fold-batchnorm");
  const api::PassRecord& record = report_->passes[pass];
  QVERIFY(record.changed);
  QSignalSpy selected(&panel, &PassesPanel::passSelected);
  QVERIFY(panel.selectPass(pass));
  QCOMPARE(selected.size(), 1);
  QCOMPARE(selected.front().front().toInt(), pass);

  const views::IrDiffView* diff = panel.diffView();
  const views::SideBySideDiff& d = diff->diff();
  QVERIFY(d.removed > 0);
  QVERIFY(d.added > 0);
  QVERIFY(!d.hunkStarts.empty());
  // Aligned: one row per line on both sides, fillers included.
  QCOMPARE(diff->before()->blockCount(), static_cast<int>(d.rows.size()));
  QCOMPARE(diff->after()->blockCount(), static_cast<int>(d.rows.size()));
  // Without the fillers each side is exactly its IR.
  QCOMPARE(realLines(*diff->before(), d.rows, true), lines(record.irBefore));
  QCOMPARE(realLines(*diff->after(), d.rows, false), lines(record.irAfter));
  QCOMPARE(static_cast<qsizetype>(lines(record.irBefore).size() - d.removed),
           static_cast<qsizetype>(lines(record.irAfter).size() - d.added));

  // Tints: red on the left for removed and changed lines, green on the right for added and
  // changed ones, filler grey opposite; nothing on unchanged rows.
  const views::CodeColors c = views::codeColors(diff->palette());
  int red = 0, green = 0, leftFiller = 0, rightFiller = 0, spans = 0;
  const auto& leftMarks = diff->before()->lineMarks();
  const auto& rightMarks = diff->after()->lineMarks();
  QCOMPARE(leftMarks.size(), d.rows.size());
  for (std::size_t i = 0; i < d.rows.size(); ++i) {
    red += leftMarks[i].line == c.removedLine;
    green += rightMarks[i].line == c.addedLine;
    leftFiller += leftMarks[i].line == c.fillerLine;
    rightFiller += rightMarks[i].line == c.fillerLine;
    // A paired line points at what differs inside it on at least one side (only one when
    // the other line is a prefix or suffix of it).
    spans += leftMarks[i].spanTo > leftMarks[i].spanFrom ||
             rightMarks[i].spanTo > rightMarks[i].spanFrom;
    if (d.rows[i].kind == DiffRow::Kind::Same)
      QVERIFY(!leftMarks[i].line.isValid() && !rightMarks[i].line.isValid());
  }
  QCOMPARE(red, d.removed);
  QCOMPARE(green, d.added);
  int changedRows = 0;
  for (const DiffRow& row : d.rows)
    changedRows += row.kind == DiffRow::Kind::Changed;
  QCOMPARE(leftFiller, d.added - changedRows);
  QCOMPARE(rightFiller, d.removed - changedRows);
  QCOMPARE(spans, changedRows);
  QVERIFY(changedRows > 0); // folding rewrites the conv lines in place

  const QString summary = diff->summaryText();
  QVERIFY2(
      summary.startsWith(QStringLiteral("%1 lines removed, %2 added").arg(d.removed).arg(d.added)),
      qPrintable(summary));
  QVERIFY2(summary.contains(QStringLiteral("%1 changes").arg(d.hunkStarts.size())) ||
               d.hunkStarts.size() == 1,
           qPrintable(summary));

  // Graph highlighting: the folded convs changed, the batch norms are gone.
  const views::NodeChanges nodes = panel.nodeChanges(pass);
  const api::GraphSnapshot& before = *report_->passes[pass - 1].graphAfter;
  QVERIFY(!nodes.changed.empty());
  int batchNorms = 0;
  for (const api::NodeSummary& n : before.nodes)
    batchNorms += n.opType == "BatchNormalization";
  QVERIFY(batchNorms > 0);
  QVERIFY(nodes.removed >= batchNorms - static_cast<int>(nodes.changed.size()));
  for (int i : nodes.changed)
    QVERIFY(i >= 0 && i < static_cast<int>(record.graphAfter->nodes.size()));
  saveShot(panel, QStringLiteral("passes_fold_batchnorm.png"));

  // A dark palette re-tints the rows with the dark theme's colours.
  QPalette dark;
  dark.setColor(QPalette::Window, QColor(0x2b, 0x2d, 0x30));
  dark.setColor(QPalette::WindowText, QColor(0xdd, 0xdd, 0xdd));
  dark.setColor(QPalette::Base, QColor(0x1e, 0x1f, 0x22));
  dark.setColor(QPalette::AlternateBase, QColor(0x26, 0x27, 0x2a));
  dark.setColor(QPalette::Text, QColor(0xdd, 0xdd, 0xdd));
  dark.setColor(QPalette::Button, QColor(0x2b, 0x2d, 0x30));
  dark.setColor(QPalette::ButtonText, QColor(0xdd, 0xdd, 0xdd));
  dark.setColor(QPalette::PlaceholderText, QColor(0x99, 0x99, 0x99));
  panel.setPalette(dark);
  const views::CodeColors darkColors = views::codeColors(diff->palette());
  QVERIFY(darkColors.removedLine != c.removedLine);
  QCOMPARE(
      diff->before()->lineMarks()[static_cast<std::size_t>(d.hunkStarts.front())].line.isValid(),
      true);
  bool retinted = false;
  for (const views::LineMark& m : diff->before()->lineMarks())
    retinted = retinted || m.line == darkColors.removedLine;
  QVERIFY(retinted);
  saveShot(panel, QStringLiteral("passes_fold_batchnorm_dark.png"));
}

void TestPassesPanel::navigationAndScrolling() {
  PassesPanel panel;
  panel.resize(1000, 700);
  panel.setPasses(std::shared_ptr<const std::vector<api::PassRecord>>(report_, &report_->passes));
  panel.show();
  QVERIFY(QTest::qWaitForWindowExposed(&panel));
  QVERIFY(panel.selectPass(passIndex(*report_, "fold-batchnorm")));
  views::IrDiffView* diff = panel.diffView();
  auto* next = diff->findChild<QAbstractButton*>(QStringLiteral("nextChange"));
  auto* previous = diff->findChild<QAbstractButton*>(QStringLiteral("previousChange"));
  QVERIFY(next && previous);
  QVERIFY(next->isEnabled());
  QVERIFY(!previous->isEnabled());
  QCOMPARE(diff->currentChange(), -1);
  for (int hunk = 0; hunk < diff->changeCount(); ++hunk) {
    next->click();
    QCOMPARE(diff->currentChange(), hunk);
    if (hunk == 1)
      saveShot(panel, QStringLiteral("passes_second_change.png"));
    // The change is on screen on both sides, which stay scrolled together.
    const int row = diff->diff().hunkStarts[hunk];
    QCOMPARE(diff->before()->textCursor().blockNumber(), row);
    QCOMPARE(diff->before()->verticalScrollBar()->value(),
             diff->after()->verticalScrollBar()->value());
    const int first = diff->before()->verticalScrollBar()->value();
    QVERIFY(row >= first);
  }
  QVERIFY(!next->isEnabled());
  if (diff->changeCount() > 1) {
    previous->click();
    QCOMPARE(diff->currentChange(), diff->changeCount() - 2);
  }
  diff->after()->verticalScrollBar()->setValue(3);
  QCOMPARE(diff->before()->verticalScrollBar()->value(), 3);
}

void TestPassesPanel::hideUnchangedAndIrOnly() {
  PassesPanel panel;
  panel.setPasses(std::shared_ptr<const std::vector<api::PassRecord>>(report_, &report_->passes));
  auto* hide = panel.findChild<QCheckBox*>(QStringLiteral("hideUnchangedPasses"));
  auto* list = panel.findChild<QAbstractItemView*>(QStringLiteral("passList"));
  int changed = 0;
  for (const api::PassRecord& p : report_->passes)
    changed += p.changed;
  hide->setChecked(true);
  QCOMPARE(list->model()->rowCount(), changed);
  hide->setChecked(false);
  QCOMPARE(list->model()->rowCount(), static_cast<int>(report_->passes.size()));

  // An unchanged pass: no tinted rows, "No changes".
  int unchanged = -1;
  for (std::size_t i = 0; i < report_->passes.size(); ++i)
    if (!report_->passes[i].changed && report_->passes[i].irBefore == report_->passes[i].irAfter)
      unchanged = static_cast<int>(i);
  if (unchanged >= 0) {
    QVERIFY(panel.selectPass(unchanged));
    QVERIFY(panel.diffView()->summaryText().startsWith(QStringLiteral("No changes")));
    QVERIFY(panel.diffView()->diff().hunkStarts.empty());
  }

  // The IR-after-only view shows exactly the IR.
  const int pass = passIndex(*report_, "fold-batchnorm");
  QVERIFY(panel.selectPass(pass));
  QSignalSpy reselected(&panel, &PassesPanel::passSelected);
  panel.setShowDiff(false);
  auto* irView = panel.findChild<QPlainTextEdit*>(QStringLiteral("passIrView"));
  QVERIFY(irView->isVisibleTo(&panel));
  QVERIFY(!panel.diffView()->isVisibleTo(&panel));
  QCOMPARE(irView->toPlainText(), QString::fromStdString(report_->passes[pass].irAfter));
  panel.setShowDiff(true);
  QVERIFY(panel.diffView()->isVisibleTo(&panel));
  QVERIFY(panel.diffView()->diff().removed > 0);
  QCOMPARE(reselected.size(), 0); // switching views is not a new selection
}

// Why? opens the selected pass's explanation; the open window follows the selection.
void TestPassesPanel::whyExplainsThePass() {
  PassesPanel panel;
  panel.resize(1100, 800);
  panel.setPasses(std::shared_ptr<const std::vector<api::PassRecord>>(report_, &report_->passes));
  panel.show();
  QVERIFY(QTest::qWaitForWindowExposed(&panel));
  auto* why = panel.findChild<QAbstractButton*>(QStringLiteral("explainPass"));
  QVERIFY(why);
  QVERIFY(!why->isEnabled()); // nothing selected
  QVERIFY(panel.selectPass(passIndex(*report_, "fold-batchnorm")));
  QVERIFY(why->isEnabled());
  why->click();
  QVERIFY(panel.explanation() && panel.explanation()->isVisible());
  QVERIFY2(panel.explanation()->text().contains(QStringLiteral("gamma / sqrt(var + eps)")),
           qPrintable(panel.explanation()->text()));
  QVERIFY(panel.explanation()->text().contains(QStringLiteral("lathe explain fold-batchnorm")));
  if (const QString shots = qEnvironmentVariable("LATHE_SCREENSHOT_DIR"); !shots.isEmpty())
    QVERIFY(panel.explanation()->grab().save(shots + QStringLiteral("/explain_pass.png")));
  QVERIFY(panel.selectPass(passIndex(*report_, "fuse-elementwise")));
  QVERIFY(panel.explanation()->text().contains(QStringLiteral("epilogue")));
  QVERIFY(panel.explanation()->windowTitle().contains(QStringLiteral("fuse-elementwise")));
}

void TestPassesPanel::resnet50DiffTime() {
  const QString path = modelPath("big/resnet50.onnx");
  if (!QFileInfo::exists(path))
    QSKIP("big/resnet50.onnx not generated (run the cli/generate_big_models test)");
  const auto report = open(path);
  // The pass with the most IR lines before + after.
  int largest = -1;
  qsizetype largestLines = 0;
  for (std::size_t i = 0; i < report->passes.size(); ++i) {
    const qsizetype n =
        lines(report->passes[i].irBefore).size() + lines(report->passes[i].irAfter).size();
    if (n > largestLines && report->passes[i].changed) {
      largestLines = n;
      largest = static_cast<int>(i);
    }
  }
  QVERIFY(largest >= 0);
  const api::PassRecord& record = report->passes[largest];
  QElapsedTimer timer;
  timer.start();
  const views::SideBySideDiff d = views::diffTexts(record.irBefore, record.irAfter);
  const double diffMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;

  views::IrDiffView view;
  view.resize(1200, 800);
  timer.restart();
  view.setTexts(record.irBefore, record.irAfter);
  const double viewMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
  qInfo("resnet50 %s: %lld + %lld lines, %d removed, %d added, %zu changes; diff %.2f ms, "
        "diff view %.1f ms",
        record.name.c_str(), static_cast<long long>(lines(record.irBefore).size()),
        static_cast<long long>(lines(record.irAfter).size()), d.removed, d.added,
        d.hunkStarts.size(), diffMs, viewMs);
  // Times are printed, not asserted: this machine is shared (tests/bench measures speed).
  QVERIFY(d.removed + d.added > 0);
}

QTEST_MAIN(TestPassesPanel)
#include "tst_passes_panel.moc"
