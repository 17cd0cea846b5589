#pragma once
// Teaching mode: one node of the model followed through its compilation, stage by stage —
// as the ONNX file has it, each graph pass that changed it (its IR line before and after),
// the fused group it ended in, its kernel's loop nest and schedule, LLVM IR, optimised LLVM IR
// and assembly — each with its explanation (docs/explain), Previous and Next.

#include "engine/api/session.h"
#include "views/code/code_editor.h"

#include <QDialog>
#include <QString>
#include <string>
#include <vector>

class QLabel;
class QListWidget;
class QPushButton;
class QTextBrowser;

namespace lathe::workbench {

struct CompileStep {
  QString title;   // "Pass fold-batchnorm", "Assembly"
  QString summary; // one sentence on what happened to this node here
  QString code;    // what the stage holds for the node
  views::CodeLanguage language = views::CodeLanguage::Plain;
  std::string explainName, explainKind; // its explanation (engine/api/explain.h)
};

// The steps of node `finalNode` (an index into model.final.nodes); `compiled` may be null
// (the steps then end with how to get the code). Empty for an index out of range.
std::vector<CompileStep> compileStepsOf(const api::ModelReport& model,
                                        const api::CompileReport* compiled, int finalNode);

class StepThroughDialog : public QDialog {
  Q_OBJECT

public:
  explicit StepThroughDialog(QWidget* parent = nullptr);

  // Shows the steps of `node` (its name in the title), from the first.
  void setSteps(const QString& node, std::vector<CompileStep> steps);
  int stepCount() const { return static_cast<int>(steps_.size()); }
  int currentStep() const { return current_; }
  const CompileStep& step(int index) const { return steps_[static_cast<std::size_t>(index)]; }
  void showStep(int index);
  QString codeText() const;
  QString explanationText() const;

private:
  std::vector<CompileStep> steps_;
  int current_ = -1;
  QListWidget* list_;
  QLabel* heading_;
  QLabel* summary_;
  views::CodeEditor* code_;
  QTextBrowser* explanation_;
  QPushButton* previous_;
  QPushButton* next_;
};

} // namespace lathe::workbench
