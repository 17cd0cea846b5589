// The Code tab's panes on real compiler output: sample_cnn.onnx compiled for this machine
// with its code kept; every pane highlighted in its language, numbered, and searchable.

#include "app/workbench/kernels_panel.h"
#include "views/code/code_colors.h"
#include "views/code/code_editor.h"
#include "views/code/find_bar.h"

#include <QDir>
#include <QLineEdit>
#include <QTabWidget>
#include <QTest>
#include <QTextBlock>
#include <QTextLayout>

using namespace lathe;
using views::CodeEditor;
using views::CodeLanguage;
using workbench::KernelsPanel;

namespace {

// How many characters of the pane carry a foreground colour from its highlighter.
int colouredCharacters(const CodeEditor& pane) {
  int count = 0;
  for (QTextBlock b = pane.document()->firstBlock(); b.isValid(); b = b.next())
    for (const QTextLayout::FormatRange& r : b.layout()->formats())
      count += r.format.hasProperty(QTextFormat::ForegroundBrush) ? r.length : 0;
  return count;
}

} // namespace

class TestKernelCode : public QObject {
  Q_OBJECT

private slots:
  void panesHighlightRealCode();
};

void TestKernelCode::panesHighlightRealCode() {
  api::Session session;
  QVERIFY(session
              .openModel(QDir(QStringLiteral(LATHE_MODEL_DIR))
                             .filePath(QStringLiteral("sample_cnn.onnx"))
                             .toStdString())
              .ok());
  api::CompileOptions options;
  options.keepCode = true;
  const api::CompileResult compiled = session.compile(options);
  QVERIFY2(compiled.ok(), compiled.ok() ? "" : compiled.failure->message.c_str());

  KernelsPanel panel;
  panel.resize(1200, 700);
  panel.setReport(compiled.report);
  panel.show();
  QVERIFY(QTest::qWaitForWindowExposed(&panel));
  QVERIFY(panel.selectKernel(0));

  const struct {
    const char* name;
    CodeLanguage language;
    KernelsPanel::Code code;
  } panes[] = {{"kernelLoopIr", CodeLanguage::LatheIr, KernelsPanel::Code::LoopIr},
               {"kernelLlvmIr", CodeLanguage::LlvmIr, KernelsPanel::Code::LlvmIr},
               {"kernelLlvmIrOptimized", CodeLanguage::LlvmIr, KernelsPanel::Code::LlvmIrOptimized},
               {"kernelAssembly", CodeLanguage::Assembly, KernelsPanel::Code::Assembly}};
  for (const auto& p : panes) {
    auto* pane = panel.findChild<CodeEditor*>(QString::fromLatin1(p.name));
    QVERIFY2(pane, p.name);
    QCOMPARE(pane->language(), p.language);
    QVERIFY2(pane->blockCount() > 3, p.name);
    // A good part of real code is coloured: names, keywords, numbers, comments.
    const int coloured = colouredCharacters(*pane);
    const int total = pane->document()->characterCount();
    qInfo("%s: %d lines, %d of %d characters coloured", p.name, pane->blockCount(), coloured,
          total);
    QVERIFY2(coloured * 5 > total, p.name);
    QVERIFY(pane->gutterWidth() > 0);
    panel.showCode(p.code);
    const QString dir = qEnvironmentVariable("LATHE_SHOT_DIR");
    if (!dir.isEmpty()) {
      if (p.language == CodeLanguage::Assembly) {
        pane->setFocus();
        pane->showFindBar();
        QTest::keyClicks(pane->findBar()->field(), QStringLiteral("mov"));
        QVERIFY(pane->matchCount() > 0);
      }
      panel.grab().save(QDir(dir).filePath(QStringLiteral("code_%1.png").arg(p.name)));
    }
  }
}

QTEST_MAIN(TestKernelCode)
#include "tst_kernel_code.moc"
