#pragma once
// QSyntaxHighlighter subclasses for the code Lathe shows: its graph IR and loop IR, LLVM IR,
// and assembly (x86-64 AT&T, AArch64, PTX). Line-local regular-expression rules: every
// listing Lathe prints is line oriented, so no multi-line state is needed.

#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>
#include <vector>

namespace lathe::views {

struct CodeColors;

enum class CodeLanguage { Plain, LatheIr, LlvmIr, Assembly };

// Applies its rules in order; a later rule overrides an earlier one on the same characters.
class RuleHighlighter : public QSyntaxHighlighter {
  Q_OBJECT

public:
  // Rules read colours from `palette` (light or dark) once; rebuild on a palette change.
  RuleHighlighter(QTextDocument* document, CodeLanguage language, const QPalette& palette);
  CodeLanguage language() const { return language_; }

protected:
  void highlightBlock(const QString& text) override;

private:
  struct Rule {
    QRegularExpression pattern;
    QTextCharFormat format;
    int group = 0; // capture group to colour
  };
  void addRule(const QString& pattern, const QColor& color, bool bold = false, int group = 0,
               bool italic = false);
  void buildLatheIr(const CodeColors& c);
  void buildLlvmIr(const CodeColors& c);
  void buildAssembly(const CodeColors& c);

  CodeLanguage language_;
  std::vector<Rule> rules_;
};

} // namespace lathe::views
