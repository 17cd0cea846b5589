#pragma once
// The "Kernels" tab: the compiled model's kernels on the left; the loop IR, LLVM IR and
// assembly of the selected one on the right (for a CUDA target: its PTX, and its launches with
// ptxas's registers and spills); a one-line summary of the compile above.

#include "engine/api/session.h"

#include <QWidget>
#include <memory>
#include <string>
#include <vector>

class QLabel;
class QPlainTextEdit;
class QSortFilterProxyModel;
class QSplitter;
class QStackedWidget;
class QTabWidget;
class QTableView;
class QTableWidget;

namespace lathe::views {
class KernelListModel;
}

namespace lathe::workbench {

class KernelsPanel : public QWidget {
  Q_OBJECT

public:
  enum class Code { LoopIr, LlvmIr, LlvmIrOptimized, Assembly, GpuLaunches };

  explicit KernelsPanel(QWidget* parent = nullptr);

  // nullptr: the model has not been compiled (yet).
  void setReport(std::shared_ptr<const api::CompileReport> report);
  const std::shared_ptr<const api::CompileReport>& report() const;
  // While true, the empty panel says a compile is running instead of how to start one.
  void setCompiling(bool compiling);
  // A warning above the kernels that they no longer match what the window would compile
  // (another target was picked); empty hides it.
  void setStale(const QString& note);
  QString staleNote() const;
  // Index into report()->kernels; false if there is no such kernel.
  bool selectKernel(int kernel);
  // Selects the kernel that computes the ONNX node named `node`; false if none does.
  bool selectKernelForNode(const std::string& node);
  int selectedKernel() const { return selected_; }
  // Linked lines (Compiler Explorer's colours): the cursor on a loop IR line tints the LLVM IR
  // and assembly lines made from it, the cursor on one of those tints its loop IR line. The
  // assembly lines and the loop IR line tinted now, 1-based.
  std::vector<int> linkedAssemblyLines() const { return linkedAssembly_; }
  int linkedLoopLine() const { return linkedLoop_; }
  void showCode(Code code);
  // Puts the loop IR's cursor on the selected kernel's `parallel for` of `iterations` (the
  // first parallel loop when none has that extent), which tints the code made from it, and
  // says which iterations [first, end) a chunk ran. False if the kernel has no parallel loop.
  bool showParallelLoop(std::int64_t iterations, std::int64_t first, std::int64_t end);
  QString chunkNote() const;
  // CUDA targets: the selected kernel's launches with ptxas's figures, a row each.
  QTableWidget* gpuLaunchTable() const { return gpuLaunches_; }
  QSplitter* splitter() const { return splitter_; }

signals:
  void kernelSelected(int kernel); // -1 when the selection is cleared

private:
  void linkFromLoopIr();
  void linkToLoopIr(QPlainTextEdit* view, const std::vector<int>* lines);
  void showKernel(int kernel);
  void updatePlaceholder();
  void showGpuLaunches(const api::KernelReport* k);

  QStackedWidget* stack_;
  QLabel* placeholder_;
  QLabel* summary_;
  QLabel* stale_;
  QLabel* chunkNote_;
  QTableView* table_;
  QTabWidget* codeTabs_;
  QPlainTextEdit* loopIr_;
  QPlainTextEdit* llvmIr_;
  QPlainTextEdit* llvmIrOptimized_;
  QPlainTextEdit* assembly_;
  QTableWidget* gpuLaunches_;
  QSplitter* splitter_;
  views::KernelListModel* model_;
  QSortFilterProxyModel* proxy_;
  bool compiling_ = false;
  int selected_ = -1;
  int tracePrefixLines_ = 0; // lines the schedule trace adds above the loop IR
  std::vector<int> linkedAssembly_;
  int linkedLoop_ = 0;
};

} // namespace lathe::workbench
