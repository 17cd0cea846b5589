// views/code: the find bar, the syntax highlighters, the line-number gutter and line tints
// of CodeEditor, offscreen.

#include "views/code/code_colors.h"
#include "views/code/code_editor.h"
#include "views/code/find_bar.h"
#include "views/common/code_view.h"

#include <QLineEdit>
#include <QScrollBar>
#include <QTest>
#include <QTextBlock>
#include <QTextLayout>

using namespace lathe;
using views::CodeEditor;
using views::CodeLanguage;

namespace {

const char* const kGraphIr = R"(graph @g opset 17 {
  input %x: f32[1,4,8,8]
  const %w1: f32[4,4,1,1] = elided  # 64 bytes
  %a: f32[1,4,8,8] = Conv(%x, %w1) {kernel_shape = [1, 1]} @main_conv
  output %a
})";

const char* const kLlvmIr = R"(; ModuleID = 'lathe'
define void @fused_conv_relu_0(ptr noalias %0, ptr %1) {
entry:
  %2 = load float, ptr %0, align 4
  ret void
})";

const char* const kAssembly = "fused_conv_relu_0:\n"
                              "\tvmovups\t(%rdi), %ymm0    # load\n"
                              "\tmov\tx0, #4\n"
                              "\t.p2align\t4\n";

// The foreground colour applied at column `column` of line `line`, invalid if none.
QColor colorAt(const CodeEditor& editor, int line, int column) {
  const QTextBlock block = editor.document()->findBlockByNumber(line);
  for (const QTextLayout::FormatRange& r : block.layout()->formats())
    if (column >= r.start && column < r.start + r.length &&
        r.format.hasProperty(QTextFormat::ForegroundBrush))
      return r.format.foreground().color();
  return {};
}

// WCAG contrast ratio of two colours.
double contrast(const QColor& a, const QColor& b) {
  const auto luminance = [](const QColor& c) {
    const auto channel = [](double v) {
      return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
    };
    return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF());
  };
  const double la = luminance(a), lb = luminance(b);
  return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

} // namespace

class TestCodePanes : public QObject {
  Q_OBJECT

private slots:
  void findBarCountsAndCycles();
  void ctrlFOpensAndEscapeCloses();
  void latheIrHighlighting();
  void llvmIrAndAssemblyHighlighting();
  void colorsReadableOnLightAndDark();
  void gutterGrowsWithLineCount();
  void lineMarksPaintUnderText();
};

void TestCodePanes::findBarCountsAndCycles() {
  CodeEditor editor;
  editor.resize(500, 300);
  editor.setPlainText(QString::fromLatin1(kGraphIr));
  editor.show();
  editor.showFindBar();
  QVERIFY(editor.findBar()->isVisible());
  QTest::keyClicks(editor.findBar()->field(), QStringLiteral("conv"));
  // "Conv(" and "@main_conv", case-insensitively.
  QCOMPARE(editor.matchCount(), 2);
  QCOMPARE(editor.currentMatch(), 0);
  QCOMPARE(editor.findBar()->countText(), QStringLiteral("1 of 2"));
  QCOMPARE(editor.textCursor().selectedText(), QStringLiteral("Conv"));
  QTest::keyClick(editor.findBar()->field(), Qt::Key_Return);
  QCOMPARE(editor.currentMatch(), 1);
  QCOMPARE(editor.textCursor().selectedText(), QStringLiteral("conv"));
  editor.findNext(); // wraps around
  QCOMPARE(editor.currentMatch(), 0);
  QTest::keyClick(editor.findBar()->field(), Qt::Key_Return, Qt::ShiftModifier);
  QCOMPARE(editor.currentMatch(), 1);
  QCOMPARE(editor.extraSelections().size(), 2); // every match tinted, the current one stronger

  editor.findBar()->field()->setText(QStringLiteral("no such text"));
  QCOMPARE(editor.matchCount(), 0);
  QCOMPARE(editor.findBar()->countText(), QStringLiteral("No matches"));

  // New text while the bar is open: searched again.
  editor.findBar()->field()->setText(QStringLiteral("%"));
  const int before = editor.matchCount();
  QVERIFY(before > 5);
  editor.setPlainText(QStringLiteral("%a %b"));
  QCOMPARE(editor.matchCount(), 2);
}

void TestCodePanes::ctrlFOpensAndEscapeCloses() {
  QWidget window;
  CodeEditor* editor = views::createCodeView(&window, CodeLanguage::LatheIr);
  editor->setGeometry(0, 0, 400, 200);
  editor->setPlainText(QString::fromLatin1(kGraphIr));
  window.resize(400, 200);
  window.show();
  QVERIFY(QTest::qWaitForWindowExposed(&window));
  const int viewportHeight = editor->viewport()->height();
  QTest::keyClick(editor, Qt::Key_F, Qt::ControlModifier);
  QVERIFY(editor->findBar()->isVisible());
  // The bar takes room below the text instead of covering it.
  QVERIFY(editor->viewport()->height() < viewportHeight);
  QTest::keyClicks(editor->findBar()->field(), QStringLiteral("output"));
  QCOMPARE(editor->matchCount(), 1);
  QTest::keyClick(editor->findBar()->field(), Qt::Key_Escape);
  QVERIFY(!editor->findBar()->isVisible());
  QCOMPARE(editor->viewport()->height(), viewportHeight);
  QVERIFY(editor->extraSelections().isEmpty());
}

void TestCodePanes::latheIrHighlighting() {
  CodeEditor editor;
  editor.setLanguage(CodeLanguage::LatheIr);
  editor.setPlainText(QString::fromLatin1(kGraphIr));
  const views::CodeColors c = views::codeColors(editor.palette());
  QCOMPARE(colorAt(editor, 0, 0), c.keyword);  // graph
  QCOMPARE(colorAt(editor, 0, 6), c.symbol);   // @g
  QCOMPARE(colorAt(editor, 1, 8), c.value);    // %x
  QCOMPARE(colorAt(editor, 1, 12), c.type);    // f32
  QCOMPARE(colorAt(editor, 2, 38), c.comment); // # 64 bytes
  const QString conv = editor.document()->findBlockByNumber(3).text();
  QCOMPARE(colorAt(editor, 3, static_cast<int>(conv.indexOf(QLatin1String("Conv")))), c.op);
  QCOMPARE(colorAt(editor, 3, static_cast<int>(conv.indexOf(QLatin1String("kernel_shape")))),
           c.type);

  // Quoted names, as ONNX exporters make them, are one name.
  editor.setPlainText(QStringLiteral("%\"/stem/conv/Conv\": f32[1] = Relu(%\"/a b\") @\"/x/y\""));
  QCOMPARE(colorAt(editor, 0, 5), c.value);
  QCOMPARE(colorAt(editor, 0, 34), c.value);
  QCOMPARE(colorAt(editor, 0, 44), c.symbol);

  // Loop IR shares the rules; `%` between operands is a modulo.
  editor.setPlainText(
      QStringLiteral("parallel for (co, 0, 4) {\n  acc[0] = 0.0f\n  x[nm%4] = 1\n}"));
  QCOMPARE(colorAt(editor, 0, 0), c.keyword);
  QCOMPARE(colorAt(editor, 1, 11), c.number);
  QCOMPARE(colorAt(editor, 2, 6), QColor());
  QCOMPARE(colorAt(editor, 2, 7), c.number);

  // Switching language re-highlights existing text at once.
  editor.setLanguage(CodeLanguage::LlvmIr);
  QCOMPARE(colorAt(editor, 0, 0), QColor()); // "parallel" is not LLVM
  editor.setLanguage(CodeLanguage::LatheIr);
  QCOMPARE(colorAt(editor, 0, 0), c.keyword);

  // Plain: no formats at all.
  editor.setLanguage(CodeLanguage::Plain);
  editor.setPlainText(QString::fromLatin1(kGraphIr));
  QVERIFY(!colorAt(editor, 0, 0).isValid());
}

void TestCodePanes::llvmIrAndAssemblyHighlighting() {
  CodeEditor llvm;
  llvm.setLanguage(CodeLanguage::LlvmIr);
  llvm.setPlainText(QString::fromLatin1(kLlvmIr));
  const views::CodeColors c = views::codeColors(llvm.palette());
  QCOMPARE(colorAt(llvm, 0, 2), c.comment); // ; ModuleID
  QCOMPARE(colorAt(llvm, 1, 0), c.keyword); // define
  QCOMPARE(colorAt(llvm, 1, 7), c.type);    // void
  QCOMPARE(colorAt(llvm, 1, 13), c.symbol); // @fused_conv_relu_0
  QCOMPARE(colorAt(llvm, 3, 2), c.value);   // %2
  QCOMPARE(colorAt(llvm, 3, 7), c.keyword); // load
  QCOMPARE(colorAt(llvm, 2, 0), c.label);   // entry:

  CodeEditor assembly;
  assembly.setLanguage(CodeLanguage::Assembly);
  assembly.setPlainText(QString::fromLatin1(kAssembly));
  QCOMPARE(colorAt(assembly, 0, 0), c.label);  // fused_conv_relu_0:
  QCOMPARE(colorAt(assembly, 1, 1), c.op);     // vmovups
  QCOMPARE(colorAt(assembly, 1, 10), c.value); // %rdi
  const QString load = assembly.document()->findBlockByNumber(1).text();
  QCOMPARE(colorAt(assembly, 1, static_cast<int>(load.indexOf(QLatin1Char('#')))), c.comment);
  const QString mov = assembly.document()->findBlockByNumber(2).text();
  // AArch64 immediate, not a comment.
  QCOMPARE(colorAt(assembly, 2, static_cast<int>(mov.indexOf(QLatin1Char('#')))), c.number);
  QCOMPARE(colorAt(assembly, 2, static_cast<int>(mov.indexOf(QLatin1String("x0")))), c.value);
  QCOMPARE(colorAt(assembly, 3, 1), c.keyword); // .p2align
}

void TestCodePanes::colorsReadableOnLightAndDark() {
  QPalette light;
  light.setColor(QPalette::Base, Qt::white);
  light.setColor(QPalette::Text, Qt::black);
  QPalette dark;
  dark.setColor(QPalette::Base, QColor(0x1e, 0x1f, 0x22));
  dark.setColor(QPalette::Text, QColor(0xdd, 0xdd, 0xdd));
  QVERIFY(!views::isDarkPalette(light));
  QVERIFY(views::isDarkPalette(dark));
  for (const QPalette& p : {light, dark}) {
    const views::CodeColors c = views::codeColors(p);
    const QColor base = p.color(QPalette::Base);
    for (const QColor& fg :
         {c.keyword, c.type, c.number, c.string, c.comment, c.value, c.symbol, c.op, c.label})
      QVERIFY2(contrast(fg, base) >= 3.5, qPrintable(fg.name() + " on " + base.name()));
    // Tinted diff lines keep the text readable too.
    for (const QColor& bg : {c.removedLine, c.addedLine, c.removedSpan, c.addedSpan})
      QVERIFY2(contrast(p.color(QPalette::Text), bg) >= 4.5, qPrintable(bg.name()));
  }
}

void TestCodePanes::gutterGrowsWithLineCount() {
  CodeEditor editor;
  editor.setPlainText(QStringLiteral("a\nb\nc"));
  const int small = editor.gutterWidth();
  QStringList many;
  for (int i = 0; i < 12345; ++i)
    many << QStringLiteral("line");
  editor.setPlainText(many.join(QLatin1Char('\n')));
  const int large = editor.gutterWidth();
  QVERIFY(large > small);
  QCOMPARE(large - small, 3 * editor.fontMetrics().horizontalAdvance(QLatin1Char('9')));
  QCOMPARE(editor.gutter()->width(), large);
  // Custom numbers (the diff's filler rows print none) size the gutter by their largest.
  editor.setLineNumbers({1, 0, 2});
  QCOMPARE(editor.gutterWidth(), small);
}

void TestCodePanes::lineMarksPaintUnderText() {
  CodeEditor editor;
  editor.resize(300, 200);
  editor.setPlainText(QStringLiteral("x\ny\nz"));
  const QColor tint(255, 0, 0);
  editor.setLineMarks({{}, {tint, {}, 0, 0}});
  editor.show();
  QVERIFY(QTest::qWaitForWindowExposed(&editor));
  const QImage image = editor.viewport()->grab().toImage();
  // cursorRect: viewport coordinates of a line, public where block geometry is not.
  const auto middleOf = [&editor](int line) {
    return editor.cursorRect(QTextCursor(editor.document()->findBlockByNumber(line))).center().y();
  };
  const int x = image.width() - 5; // right of the text: only the tint
  const double dpr = image.devicePixelRatio();
  QCOMPARE(image.pixelColor(x, static_cast<int>(middleOf(1) * dpr)).rgb(), tint.rgb());
  // Line 0 has no mark.
  const int y0 = middleOf(0);
  QVERIFY(image.pixelColor(x, static_cast<int>(y0 * dpr)).rgb() != tint.rgb());
}

QTEST_MAIN(TestCodePanes)
#include "tst_code_panes.moc"
