#include "app/workbench/tour_dialog.h"

#include "app/workbench/main_window.h"

#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace lathe::workbench {

namespace {

int panel(MainWindow::Panel p) {
  return static_cast<int>(p);
}

} // namespace

TourDialog::TourDialog(QWidget* parent)
    : QDialog(parent), heading_(new QLabel(this)), position_(new QLabel(this)),
      text_(new QTextBrowser(this)), previous_(new QPushButton(tr("\u2190 Previous"), this)),
      next_(new QPushButton(tr("Next \u2192"), this)) {
  setObjectName(QStringLiteral("tourDialog"));
  setWindowTitle(tr("Guided Tour of Lathe"));
  pages_ = {
      {tr("What Lathe does"),
       tr("A neural network saved as an **ONNX file** is a graph of operations (convolutions, "
          "matrix multiplies, activations). Lathe is a **compiler**: it turns that graph into "
          "machine code for a CPU, step by step, and shows you every step.\n\n"
          "1. the graph as the file has it,\n2. the graph rewritten by *passes*,\n3. each group "
          "of operations as *loops* (a kernel),\n4. the loops reordered and vectorized by a "
          "*schedule*,\n5. LLVM's intermediate code, optimised,\n6. the assembly a CPU runs.\n\n"
          "Then it runs the code, times it, and compares its numbers with a reference. Press "
          "**Next** to walk through the window; each page brings its panel to the front."),
       -1},
      {tr("The graph"),
       tr("The middle of the window draws the model: one box per operation, arrows for the "
          "tensors between them, labelled with their shapes (1\u00d73\u00d764\u00d764 is one "
          "image of 3 colour channels, 64 by 64 pixels).\n\n"
          "A model opens **as authored**, exactly as the file has it. The banner above the "
          "graph switches to the **optimised graph**: what is left after the passes, with "
          "dashed frames around the operations that will be computed together in one "
          "kernel. Double-click a frame to collapse it. Search with Ctrl+F, save the picture "
          "with **Save Image\u2026**; the small map in the corner shows where you are."),
       -1},
      {tr("Model and Properties"),
       tr("The **Model** tree lists the inputs, the outputs and the optimised graph's nodes, "
          "grouped by kernel. Selecting a node (there or in the graph) shows its "
          "**Properties**: its operation, attributes, inputs and outputs, and the statistics "
          "and histogram of its weights."),
       panel(MainWindow::Panel::Model)},
      {tr("Passes"),
       tr("A **pass** rewrites the graph without changing what it computes: it removes "
          "operations that do nothing at inference, computes constant parts once, folds a "
          "BatchNormalization into the convolution before it, fuses an activation into the "
          "operation that feeds it.\n\n"
          "Select a pass to see the intermediate representation (IR) before and after it, "
          "side by side, and the graph after it with the changed nodes outlined. **Why?** "
          "explains the pass."),
       panel(MainWindow::Panel::Passes)},
      {tr("Code"),
       tr("**Compile** (Ctrl+B) turns each group of the optimised graph into a **kernel**. "
          "The Code panel lists them with their size; pick one to read it at each level:\n\n"
          "- **Loop IR**: nested `for` loops over the tensors, Lathe's own notation;\n"
          "- **LLVM IR**: the same for LLVM, the code generator Lathe uses;\n"
          "- **LLVM IR (optimised)**: after LLVM's optimisations;\n"
          "- **Assembly**: the CPU's instructions.\n\n"
          "The target box in the toolbar picks the CPU: choose AArch64 or WebAssembly to see "
          "the same kernel compiled for another machine."),
       panel(MainWindow::Panel::Kernels)},
      {tr("Schedule"),
       tr("A **schedule** changes how a kernel's loops run, never what they compute: split a "
          "loop in two, put one inside another, turn one into vector instructions, share one "
          "among threads. Type steps such as `split(x, 8)` and `vectorize(x.i)`, **Apply**, and "
          "compare the new loops, the assembly and the time with the default. A step that "
          "would change the results is refused, with the reason. **Why?** explains the step "
          "on the cursor's line; **Keep** uses the steps in the next Compile."),
       panel(MainWindow::Panel::Schedule)},
      {tr("Run and Profile"),
       tr("**Run** (F5) runs the compiled model on random inputs (or your .npz file) and "
          "shows the outputs and the time of each run. **Pin** a run, change something "
          "(threads, a schedule, the target) and run again to compare. With **Profile "
          "kernels and threads** checked, the Profile panel shows every kernel on a timeline "
          "and its share of the time; the heat map colours the graph by it. A click on a "
          "thread's chunk shows the parallel loop it ran a share of, in the kernel's code."),
       panel(MainWindow::Panel::Run)},
      {tr("Numerics"),
       tr("**Compare** runs the model in Lathe and in a reference (ONNX Runtime, or Lathe's "
          "plain reference kernels) and compares every intermediate tensor. The first one "
          "that differs is selected: that is where a wrong result starts."),
       panel(MainWindow::Panel::Numerics)},
      {tr("Tune"),
       tr("**Tune** searches schedules for this machine: it times many candidates for each "
          "kernel and keeps the fastest in a records file that Compile and Run then apply. "
          "The plot shows the best time found so far as the search goes on."),
       panel(MainWindow::Panel::Tune)},
      {tr("Export and sessions"),
       tr("**File \u2192 Export\u2026** writes the compiled model as C sources and objects "
          "for another machine (a Raspberry Pi class board, a microcontroller, a web page) "
          "with a small runtime, and builds it when the toolchain is installed. **Save "
          "Session** keeps what you set up (inputs, target, schedules, pinned run, layout) "
          "in a .lathe file to come back to."),
       -1},
      {tr("Journey: what did the passes do?"),
       tr("1. Open a model; the graph shows it as authored.\n"
          "2. In **Passes**, tick *Hide unchanged passes* and select each pass in turn.\n"
          "3. Read the IR diff and the outlined nodes in the graph; press **Why?**.\n"
          "4. Click *Show the optimised graph* in the banner to see the end result.\n\n"
          "On the command line: `lathe inspect model.onnx --print-ir-after-all`."),
       panel(MainWindow::Panel::Passes)},
      {tr("Journey: make a kernel faster"),
       tr("1. **Run** with *Profile kernels and threads* checked.\n"
          "2. In **Profile**, click the slowest kernel: Code and Schedule show it.\n"
          "3. In **Schedule**, try steps, **Apply**, compare the time with the default.\n"
          "4. **Keep** the steps that win, **Pin** the last run, **Run** again to compare.\n"
          "5. Or let **Tune** search for you."),
       panel(MainWindow::Panel::Schedule)},
      {tr("Journey: ship a model"),
       tr("1. Pick the target machine in the toolbar; Compile shows its code and sizes.\n"
          "2. **Run** runs it under an emulator (QEMU) or Node when they are installed.\n"
          "3. **File \u2192 Export\u2026**: choose the folder, check what will be written "
          "and its size (and a board's flash and RAM), build it.\n\n"
          "On the command line: `lathe export model.onnx --target \"...\" -o out`."),
       panel(MainWindow::Panel::Kernels)},
      {tr("Journey: learn how a model becomes machine code"),
       tr("1. Select one Conv node in the graph.\n"
          "2. **Passes**: which passes changed it (the outlined nodes), and **Why?**.\n"
          "3. **Code**: its kernel's loops, then LLVM IR, the optimised IR, the assembly.\n"
          "4. **Schedule**: add `vectorize` to a loop and watch the assembly change.\n\n"
          "`lathe explain` lists the explanations of every stage, pass and step."),
       panel(MainWindow::Panel::Kernels)},
  };

  heading_->setObjectName(QStringLiteral("tourHeading"));
  QFont big = heading_->font();
  big.setPointSizeF(big.pointSizeF() * 1.4);
  big.setBold(true);
  heading_->setFont(big);
  position_->setObjectName(QStringLiteral("tourPosition"));
  position_->setForegroundRole(QPalette::PlaceholderText);
  text_->setObjectName(QStringLiteral("tourText"));
  text_->setFrameShape(QFrame::NoFrame);
  text_->document()->setDocumentMargin(4);
  previous_->setObjectName(QStringLiteral("tourPrevious"));
  next_->setObjectName(QStringLiteral("tourNext"));
  next_->setDefault(true);
  connect(previous_, &QPushButton::clicked, this, &TourDialog::previous);
  connect(next_, &QPushButton::clicked, this, &TourDialog::next);
  auto* close = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(close, &QDialogButtonBox::rejected, this, &QDialog::close);

  auto* top = new QHBoxLayout;
  top->addWidget(heading_, 1);
  top->addWidget(position_);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(previous_);
  buttons->addWidget(next_);
  buttons->addStretch(1);
  buttons->addWidget(close);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(text_, 1);
  layout->addLayout(buttons);
  resize(600, 440);
  showPage(0);
}

void TourDialog::showPage(int index) {
  if (index < 0 || index >= pageCount())
    return;
  current_ = index;
  const Page& p = page(index);
  heading_->setText(p.title);
  position_->setText(tr("%1 of %2").arg(index + 1).arg(pageCount()));
  text_->setMarkdown(p.markdown);
  previous_->setEnabled(index > 0);
  next_->setEnabled(index + 1 < pageCount());
  if (p.panel >= 0)
    emit panelRequested(p.panel);
}

void TourDialog::next() {
  showPage(current_ + 1);
}

void TourDialog::previous() {
  showPage(current_ - 1);
}

} // namespace lathe::workbench
