#include "app/workbench/step_through.h"

#include "engine/api/explain.h"
#include "views/common/code_view.h"

#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QSplitter>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace lathe::workbench {

namespace {

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

// The node named `name` in `graph`, or null (an unnamed node is never found).
const api::NodeSummary* nodeNamed(const api::GraphSnapshot* graph, const std::string& name) {
  if (!graph || name.empty())
    return nullptr;
  for (const api::NodeSummary& n : graph->nodes)
    if (n.name == name)
      return &n;
  return nullptr;
}

} // namespace

std::vector<CompileStep> compileStepsOf(const api::ModelReport& model,
                                        const api::CompileReport* compiled, int finalNode) {
  std::vector<CompileStep> steps;
  if (finalNode < 0 || finalNode >= static_cast<int>(model.final.nodes.size()))
    return steps;
  const api::NodeSummary& node = model.final.nodes[static_cast<std::size_t>(finalNode)];
  using views::CodeLanguage;

  // 1. As the file has it.
  const api::NodeSummary* authored = nodeNamed(&model.imported, node.name);
  steps.push_back(
      {QObject::tr("ONNX node"),
       authored ? QObject::tr("%1 as the ONNX file has it: a %2 node.")
                      .arg(qs(node.name), qs(authored->opType))
                : QObject::tr("The file has no node named %1: a pass made it.").arg(qs(node.name)),
       authored ? qs(authored->irLine) : QString(), CodeLanguage::LatheIr, "import", "stage"});

  // 2. Each pass that changed its line (or made it).
  const api::GraphSnapshot* before = &model.imported;
  for (const api::PassRecord& pass : model.passes) {
    const api::GraphSnapshot* after = pass.graphAfter ? pass.graphAfter.get() : before;
    const api::NodeSummary* was = nodeNamed(before, node.name);
    const api::NodeSummary* is = nodeNamed(after, node.name);
    if (is && (!was || was->irLine != is->irLine)) {
      const QString summary =
          !was ? QObject::tr("%1 made this node (a %2).").arg(qs(pass.name), qs(is->opType))
               : QObject::tr("%1 changed it: %2").arg(qs(pass.name), qs(pass.description));
      const QString code =
          (was ? QObject::tr("# before %1\n%2\n").arg(qs(pass.name), qs(was->irLine)) : QString()) +
          QObject::tr("# after %1\n%2").arg(qs(pass.name), qs(is->irLine));
      steps.push_back({QObject::tr("Pass %1").arg(qs(pass.name)), summary, code,
                       CodeLanguage::LatheIr, pass.name, "pass"});
    }
    before = after;
  }

  // 3. Its fused group.
  if (node.group >= 0 && node.group < static_cast<int>(model.final.groups.size())) {
    const api::GroupSummary& group = model.final.groups[static_cast<std::size_t>(node.group)];
    QString members;
    for (int n : group.nodes)
      if (n >= 0 && n < static_cast<int>(model.final.nodes.size()))
        members += qs(model.final.nodes[static_cast<std::size_t>(n)].irLine) + "\n";
    steps.push_back(
        {QObject::tr("Fused group %1").arg(qs(group.name)),
         QObject::tr("Computed in one kernel with the ops after it: %1.").arg(qs(group.pattern)),
         members, CodeLanguage::LatheIr, "fuse-elementwise", "pass"});
  }

  // 4. Its kernel, when compiled.
  const api::KernelReport* kernel = nullptr;
  if (compiled)
    for (const api::KernelReport& k : compiled->kernels)
      for (const std::string& n : k.nodes)
        if (!kernel && n == node.name)
          kernel = &k;
  if (!kernel) {
    steps.push_back({QObject::tr("Kernel"),
                     compiled ? QObject::tr("No kernel computes this node: it was folded into "
                                            "constants or runs on the host.")
                              : QObject::tr("Compile the model (Build \u2192 Compile, Ctrl+B), "
                                            "then step through again to follow this node into "
                                            "its loops, LLVM IR and assembly."),
                     QString(), CodeLanguage::Plain, "lowering", "stage"});
    return steps;
  }
  const QString target =
      !compiled || compiled->target == "llvm" ? QObject::tr("this machine") : qs(compiled->target);
  const bool traced = !kernel->schedule.empty();
  steps.push_back(
      {QObject::tr("Loop nest of %1").arg(qs(kernel->name)),
       traced ? QObject::tr("Kernel %1 computes it as nested loops: the plain nest "
                            "as lowered, before its schedule.")
                    .arg(qs(kernel->name))
              : QObject::tr("Kernel %1 computes it as nested loops (the default "
                            "lowering).")
                    .arg(qs(kernel->name)),
       qs(traced && !kernel->naiveLoopIr.empty() ? kernel->naiveLoopIr : kernel->loopIr),
       CodeLanguage::LatheIr, "lowering", "stage"});
  if (traced) {
    const QString which =
        kernel->tunedTrials > 0
            ? QObject::tr("the schedule tuning found (%1 trials)").arg(kernel->tunedTrials)
        : kernel->schedule == kernel->defaultTrace ? QObject::tr("the default schedule")
                                                   : QObject::tr("your kept schedule");
    const QStringList lines = qs(kernel->schedule).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    if (kernel->traceLoopIrs.size() == static_cast<std::size_t>(lines.size())) {
      // One step per primitive: the loop nest after it, and what the primitive does.
      for (int i = 0; i < lines.size(); ++i) {
        const QString line = lines[i].trimmed();
        steps.push_back({QObject::tr("Step %1: %2").arg(i + 1).arg(line),
                         QObject::tr("Step %1 of %2 of %3: the loops after %4.")
                             .arg(i + 1)
                             .arg(lines.size())
                             .arg(which, line),
                         qs(kernel->traceLoopIrs[static_cast<std::size_t>(i)]),
                         CodeLanguage::LatheIr,
                         line.left(line.indexOf(QLatin1Char('('))).toStdString(), "primitive"});
      }
    } else {
      steps.push_back(
          {QObject::tr("Schedule"),
           QObject::tr("%1 was replayed on the loops.").arg(which.left(1).toUpper() + which.mid(1)),
           qs(kernel->schedule), CodeLanguage::LatheIr, "schedule", "stage"});
    }
  }
  if (!kernel->llvmIr.empty()) {
    steps.push_back({QObject::tr("LLVM IR"),
                     QObject::tr("The loops as LLVM IR, before optimisation."), qs(kernel->llvmIr),
                     CodeLanguage::LlvmIr, "llvm-ir", "stage"});
    steps.push_back({QObject::tr("Optimised LLVM IR"), QObject::tr("After LLVM's O3 pipeline."),
                     qs(kernel->llvmIrOptimized), CodeLanguage::LlvmIr, "llvm-ir-optimised",
                     "stage"});
    steps.push_back(
        {QObject::tr("Assembly"),
         kernel->codeBytes > 0
             ? QObject::tr("Machine code for %1: %2 bytes.").arg(target).arg(kernel->codeBytes)
             : QObject::tr("Machine code for %1.").arg(target),
         qs(kernel->assembly), CodeLanguage::Assembly, "assembly", "stage"});
  }
  return steps;
}

StepThroughDialog::StepThroughDialog(QWidget* parent)
    : QDialog(parent), list_(new QListWidget(this)), heading_(new QLabel(this)),
      summary_(new QLabel(this)), code_(views::createCodeView(this)),
      explanation_(new QTextBrowser(this)), previous_(new QPushButton(tr("\u2190 Previous"), this)),
      next_(new QPushButton(tr("Next \u2192"), this)) {
  setObjectName(QStringLiteral("stepThroughDialog"));
  list_->setObjectName(QStringLiteral("stepList"));
  list_->setMaximumWidth(230);
  heading_->setObjectName(QStringLiteral("stepHeading"));
  QFont big = heading_->font();
  big.setPointSizeF(big.pointSizeF() * 1.25);
  big.setBold(true);
  heading_->setFont(big);
  summary_->setObjectName(QStringLiteral("stepSummary"));
  summary_->setWordWrap(true);
  code_->setObjectName(QStringLiteral("stepCode"));
  explanation_->setObjectName(QStringLiteral("stepExplanation"));
  explanation_->setWordWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
  previous_->setObjectName(QStringLiteral("stepPrevious"));
  next_->setObjectName(QStringLiteral("stepNext"));
  next_->setDefault(true);
  connect(list_, &QListWidget::currentRowChanged, this, &StepThroughDialog::showStep);
  connect(previous_, &QPushButton::clicked, this, [this] { showStep(current_ - 1); });
  connect(next_, &QPushButton::clicked, this, [this] { showStep(current_ + 1); });
  auto* close = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(close, &QDialogButtonBox::rejected, this, &QDialog::close);

  auto* right = new QSplitter(Qt::Vertical, this);
  right->addWidget(code_);
  right->addWidget(explanation_);
  right->setStretchFactor(0, 3);
  right->setStretchFactor(1, 2);
  auto* content = new QVBoxLayout;
  content->addWidget(heading_);
  content->addWidget(summary_);
  content->addWidget(right, 1);
  auto* body = new QHBoxLayout;
  body->addWidget(list_);
  body->addLayout(content, 1);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(previous_);
  buttons->addWidget(next_);
  buttons->addStretch(1);
  buttons->addWidget(close);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(body, 1);
  layout->addLayout(buttons);
  resize(980, 640);
}

void StepThroughDialog::setSteps(const QString& node, std::vector<CompileStep> steps) {
  steps_ = std::move(steps);
  setWindowTitle(tr("Step Through: %1").arg(node));
  const QSignalBlocker blocker(list_);
  list_->clear();
  for (std::size_t i = 0; i < steps_.size(); ++i)
    list_->addItem(QStringLiteral("%1. %2").arg(i + 1).arg(steps_[i].title));
  current_ = -1;
  showStep(0);
}

void StepThroughDialog::showStep(int index) {
  if (index < 0 || index >= stepCount() || index == current_)
    return;
  current_ = index;
  const CompileStep& s = step(index);
  {
    const QSignalBlocker blocker(list_);
    list_->setCurrentRow(index);
  }
  heading_->setText(s.title);
  summary_->setText(s.summary);
  code_->setLanguage(s.language);
  code_->setPlainText(s.code);
  code_->setVisible(!s.code.isEmpty());
  const api::Explanation* e = api::findExplanation(s.explainName, s.explainKind);
  // A smaller heading than the window's own: the explanation supports the stage shown.
  QString text = e ? QString::fromStdString(e->text) : QString();
  if (text.startsWith(QLatin1String("# ")))
    text.insert(0, QStringLiteral("##"));
  explanation_->setMarkdown(text);
  explanation_->setVisible(e != nullptr);
  previous_->setEnabled(index > 0);
  next_->setEnabled(index + 1 < stepCount());
}

QString StepThroughDialog::codeText() const {
  return code_->toPlainText();
}

QString StepThroughDialog::explanationText() const {
  return explanation_->toPlainText();
}

} // namespace lathe::workbench
