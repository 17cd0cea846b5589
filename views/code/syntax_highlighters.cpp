#include "views/code/syntax_highlighters.h"

#include "views/code/code_colors.h"

namespace lathe::views {

RuleHighlighter::RuleHighlighter(QTextDocument* document, CodeLanguage language,
                                 const QPalette& palette)
    : QSyntaxHighlighter(document), language_(language) {
  const CodeColors colors = codeColors(palette);
  switch (language) {
  case CodeLanguage::Plain:
    break;
  case CodeLanguage::LatheIr:
    buildLatheIr(colors);
    break;
  case CodeLanguage::LlvmIr:
    buildLlvmIr(colors);
    break;
  case CodeLanguage::Assembly:
    buildAssembly(colors);
    break;
  }
}

void RuleHighlighter::addRule(const QString& pattern, const QColor& color, bool bold, int group,
                              bool italic) {
  Rule rule{QRegularExpression(pattern), {}, group};
  rule.pattern.optimize();
  rule.format.setForeground(color);
  if (bold)
    rule.format.setFontWeight(QFont::Bold);
  if (italic)
    rule.format.setFontItalic(true);
  rules_.push_back(std::move(rule));
}

void RuleHighlighter::highlightBlock(const QString& text) {
  for (const Rule& rule : rules_) {
    QRegularExpressionMatchIterator it = rule.pattern.globalMatch(text);
    while (it.hasNext()) {
      const QRegularExpressionMatch m = it.next();
      if (m.capturedLength(rule.group) > 0)
        setFormat(static_cast<int>(m.capturedStart(rule.group)),
                  static_cast<int>(m.capturedLength(rule.group)), rule.format);
    }
  }
}

// Graph IR (`graph @g opset 17 { %y: f32[1,4] = Conv(%x, %w) {...} @name }`) and loop IR
// (`parallel for (co, 0, 4) { out[i] = max(acc[0], 0.0f) }`) share one rule set: the
// printers use the same sigils, type names and `#` comments.
void RuleHighlighter::buildLatheIr(const CodeColors& c) {
  addRule(QStringLiteral("\\b-?(?:\\d+\\.?\\d*(?:[eE][-+]?\\d+)?f?|inf|nan)\\b"), c.number);
  addRule(QStringLiteral("\\b(?:graph|opset|input|output|const|group|kernel|for|parallel|"
                         "vectorized|unrolled|allocate|on|stack|heap|if|else|let|evaluate|"
                         "elided|from|produce|realize)\\b"),
          c.keyword, true);
  addRule(QStringLiteral("\\b(?:ramp|broadcast|select|max|min|abs|sqrt|exp|log|tanh|erf|floor|"
                         "ceil|round|sigmoid|pow|likely)(?=\\()"),
          c.op);
  addRule(QStringLiteral("\\b(?:f16|bf16|f32|f64|i8|i16|i32|i64|u8|u16|u32|u64|bool|index)"
                         "(?:x\\d+)?\\b"),
          c.type);
  addRule(QStringLiteral("\\b[A-Z][A-Za-z0-9_]*(?=\\()"), c.op, true);
  addRule(QStringLiteral("\\b(\\w+)\\s*=(?!=)"), c.type, false, 1); // attribute names in {...}
  addRule(QStringLiteral("\"(?:[^\"\\\\]|\\\\.)*\""), c.string);
  // Names may be quoted (`%"/stem/conv/Conv"`); `nm%4` in loop IR is a modulo, not a name.
  addRule(QStringLiteral("(?<![\\w)\\]])%(?:\"[^\"]*\"|[\\w.:/\\-]+)"), c.value);
  addRule(QStringLiteral("@(?:\"[^\"]*\"|[\\w.:/\\-]+)"), c.symbol);
  addRule(QStringLiteral("#.*$"), c.comment, false, 0, true);
}

void RuleHighlighter::buildLlvmIr(const CodeColors& c) {
  addRule(QStringLiteral("\\b-?(?:0x[0-9A-Fa-f]+|\\d+\\.?\\d*(?:[eE][-+]?\\d+)?)\\b|\\b(?:true|"
                         "false|null|undef|poison|zeroinitializer)\\b"),
          c.number);
  addRule(QStringLiteral(
              "\\b(?:define|declare|ret|br|switch|unreachable|call|tail|musttail|load|store|"
              "alloca|getelementptr|inbounds|phi|icmp|fcmp|add|fadd|sub|fsub|mul|fmul|udiv|"
              "sdiv|fdiv|urem|srem|frem|fneg|and|or|xor|shl|lshr|ashr|select|zext|sext|trunc|"
              "fptrunc|fpext|bitcast|sitofp|uitofp|fptosi|fptoui|ptrtoint|inttoptr|"
              "extractelement|insertelement|shufflevector|extractvalue|insertvalue|to|align|"
              "nsw|nuw|exact|fast|contract|reassoc|nnan|ninf|nsz|arcp|afn|private|internal|"
              "external|dso_local|global|constant|attributes|target|datalayout|triple|"
              "source_filename|noalias|nocapture|readonly|writeonly|nonnull|local_unnamed_addr|"
              "unnamed_addr|eq|ne|ugt|uge|ult|ule|sgt|sge|slt|sle|oeq|one|ogt|oge|olt|ole|ord|"
              "uno|ueq|une|x)\\b"),
          c.keyword);
  addRule(QStringLiteral("\\b(?:i\\d+|half|bfloat|float|double|fp128|void|ptr|label|metadata)\\b"),
          c.type);
  addRule(QStringLiteral("%[\\w.$\\-]+"), c.value);
  addRule(QStringLiteral("@[\\w.$\\-]+"), c.symbol, true);
  addRule(QStringLiteral("![\\w.\\-]+|#\\d+"), c.comment);
  addRule(QStringLiteral("^[\\w.$\\-]+:"), c.label, true);
  addRule(QStringLiteral("c?\"(?:[^\"\\\\]|\\\\.)*\""), c.string);
  addRule(QStringLiteral(";.*$"), c.comment, false, 0, true);
}

// x86-64 AT&T (`vmovups (%rdi), %ymm0`), AArch64 (`fmla v0.4s, v1.4s, v2.4s`) and PTX
// (`ld.global.f32 %f1, [%rd4];`) as LLVM prints them.
void RuleHighlighter::buildAssembly(const CodeColors& c) {
  addRule(QStringLiteral("[$#]?-?\\b(?:0x[0-9A-Fa-f]+|\\d+(?:\\.\\d+)?)\\b"), c.number);
  addRule(QStringLiteral("^\\s*([a-z][\\w.]*)"), c.op, true, 1);
  addRule(QStringLiteral("%[a-z][\\w.]*|\\b(?:[xwvqdsbh]\\d{1,2}(?:\\.\\d*[bhsd])?|sp|xzr|wzr|"
                         "lr|fp)\\b"),
          c.value);
  addRule(QStringLiteral("^\\s*(\\.[\\w.]+)"), c.keyword, false, 1);
  addRule(QStringLiteral("^\\s*([\\w.$]+):"), c.label, true, 1);
  addRule(QStringLiteral("\"(?:[^\"\\\\]|\\\\.)*\""), c.string);
  // `#` starts a comment only before a space or at the end: AArch64 writes immediates `#4`.
  addRule(QStringLiteral("(?://|;|#(?=\\s|$)).*$|^\\s*#.*$"), c.comment, false, 0, true);
}

} // namespace lathe::views
