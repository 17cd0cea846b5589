#include "engine/driver/dump_files.h"

#include "engine/codegen/nvptx/ptxas.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/loop_ir/ir_visitor.h"
#include "engine/support/atomic_file.h"
#include "engine/support/diagnostics.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace lathe::driver {

namespace fs = std::filesystem;

namespace {

void writeText(const fs::path& p, const std::string& text) {
  writeFileAtomically(p, text);
}

// Each line of `text` behind `prefix`.
std::string commented(const std::string& text, const std::string& prefix) {
  std::istringstream lines(text);
  std::string out;
  for (std::string line; std::getline(lines, line);)
    out += prefix + line + "\n";
  return out;
}

// "c (64) · y (16 from 1) · ...": the kernel's loops in order, with their extents (and
// their first value when it is not 0).
class LoopList : public loop::IRVisitor {
public:
  std::string text;

protected:
  void visitFor(const loop::For* op) override {
    const std::string min = loop::toString(op->min), extent = loop::toString(op->extent);
    text += (text.empty() ? "" : " · ") + op->name() + " (" +
            (min == "0" ? extent : extent + " from " + min) + ")";
    loop::IRVisitor::visitFor(op);
  }
};

} // namespace

void writeDumpFiles(const std::string& dir, const std::string& modelName,
                    const lowering::LoweredModel& lowered,
                    const std::vector<codegen::KernelCode>& code) {
  fs::create_directories(dir);
  std::string templ = "# Schedules for " + modelName +
                      ": add steps under a kernel (split(x, 8), vectorize(x.i), ... see "
                      "docs/schedules.md)\n# and pass this file to lathe compile --schedule. "
                      "Steps replay on the nest as lowered (its loops\n# are listed): a "
                      "kernel's steps below are its default trace, to edit. A kernel without "
                      "steps keeps its default.\n";
  for (std::size_t k = 0; k < lowered.kernels.size(); ++k) {
    const loop::Kernel& kernel = lowered.kernels[k];
    std::string header;
    if (!kernel.strategy.empty())
      header = "# default lowering:\n" + commented(kernel.strategy, "#   ");
    const bool scheduled = k < lowered.scheduleTraces.size() && !lowered.scheduleTraces[k].empty();
    const loop::Kernel& naive = lowered.unscheduledKernel(k);
    if (scheduled) {
      header += "# trace replayed on the nest as lowered (" + kernel.name + ".naive.loop):\n" +
                commented(lowered.scheduleTraces[k], "#   ");
      writeText(fs::path(dir) / (kernel.name + ".naive.loop"), loop::toString(naive));
    }
    writeText(fs::path(dir) / (kernel.name + ".loop"), header + loop::toString(kernel));
    if (k < code.size()) {
      writeText(fs::path(dir) / (kernel.name + ".ll"), code[k].llvmIr);
      writeText(fs::path(dir) / (kernel.name + ".opt.ll"), code[k].llvmIrOptimized);
      const bool gpu = !code[k].gpuFunctions.empty();
      writeText(fs::path(dir) / (kernel.name + (gpu ? ".ptx" : ".s")), code[k].assembly);
      if (gpu)
        writeText(fs::path(dir) / (kernel.name + ".ptxas.txt"),
                  codegen::nvptx::describeGpuFunctions(code[k]));
    }
    LoopList loops;
    loops.visit(naive.body);
    templ += "\nkernel " + kernel.name + ":\n";
    if (!loops.text.empty())
      templ += "  # loops: " + loops.text + "\n";
    if (!kernel.strategy.empty())
      templ += commented(kernel.strategy, "  # default: ");
    if (scheduled)
      templ += commented(lowered.scheduleTraces[k], "  ");
  }
  writeText(fs::path(dir) / "schedule_template.txt", templ);
}

} // namespace lathe::driver
