#include "engine/driver/export_module.h"

#include "engine/codegen/llvm/codegen.h"
#include "engine/codegen/llvm/compiler.h"
#include "engine/codegen/llvm/data_object.h"
#include "engine/driver/bundle_io.h"
#include "engine/driver/execution_plan.h"
#include "engine/export/export_sources.h"
#include "engine/loop_ir/ir_visitor.h"
#include "engine/runtime/executor.h"
#include "engine/support/atomic_file.h"
#include "engine/support/diagnostics.h"

#include <filesystem>

namespace lathe::driver {

namespace fs = std::filesystem;

namespace {

void writeFile(const fs::path& folder, const std::string& name, const std::string& bytes) {
  AtomicFile file(folder / name);
  file.write(bytes);
  file.commit();
}

// The most bytes of heap temporaries a kernel holds at once (lathe_alloc, in the nesting
// order the runtime's scratch stack serves them: each block rounded to 64 bytes plus a
// 64-byte header). A temporary whose size is not a constant is refused.
class HeapNeeds : public loop::IRVisitor {
public:
  std::uint64_t peak = 0;
  void visitAllocate(const loop::Allocate* op) override {
    if (op->scope != loop::MemoryScope::Heap)
      return IRVisitor::visitAllocate(op);
    std::uint64_t bytes = static_cast<std::uint64_t>(op->buffer.elementType().bytes());
    for (const loop::Expr& d : op->buffer.shape()) {
      const loop::IntImm* size = d.as<loop::IntImm>();
      if (!size || size->value < 0)
        throw Error(ErrorKind::Unsupported,
                    "a temporary of " + op->buffer.name() + " has a size known only at run time");
      bytes *= static_cast<std::uint64_t>(size->value);
    }
    const std::uint64_t block = (bytes + 63) / 64 * 64 + 64;
    live_ += block;
    peak = std::max(peak, live_);
    IRVisitor::visitAllocate(op);
    live_ -= block;
  }

private:
  std::uint64_t live_ = 0;
};

std::uint64_t heapScratchBytes(const std::vector<loop::Kernel>& kernels) {
  std::uint64_t most = 0;
  for (const loop::Kernel& k : kernels) {
    HeapNeeds needs;
    needs.visit(k.body);
    most = std::max(most, needs.peak);
  }
  return most;
}

} // namespace

ExportSummary writeExport(const lowering::LoweredModel& lowered,
                          const exporter::BundleManifest& layout, const target::Target& target,
                          const std::string& modelPath, const std::string& folder,
                          const std::string& name) {
  if (target.kind != target::Kind::Llvm)
    throw Error(ErrorKind::Unsupported,
                "lathe export writes CPU code; " + target.text() + " is not a CPU target");
  for (const lowering::KernelCall& c : lowered.calls)
    if (c.hostNode)
      throw Error(ErrorKind::Unsupported,
                  "the C runtime cannot run control flow yet; this node would need it",
                  {modelPath, c.hostNode->name, c.hostNode->opType()});
  const target::Target resolved = codegen::resolveTarget(target);
  const exporter::ExportToolchain toolchain =
      exporter::toolchainFor(resolved.triple, resolved.cpu, codegen::hostTriple());

  exporter::ExportLayout source;
  source.manifest = layout;
  source.manifest.model = fs::path(modelPath).filename().string();
  source.manifest.target = target.text();
  source.manifest.triple = resolved.triple;
  source.modelFile = source.manifest.model;
  source.name = exporter::cIdentifier(name.empty() ? fs::path(modelPath).stem().string() : name);
  // Kernel symbols start with the model's C name too, so that two exported models link into
  // one program (their kernels would share names like fused_conv_relu_0 otherwise).
  std::vector<loop::Kernel> kernels = lowered.kernels;
  for (loop::Kernel& k : kernels)
    k.name = source.name + "_" + k.name;
  for (exporter::BundleKernel& k : source.manifest.kernels)
    k.name = source.name + "_" + k.name;
  for (exporter::BundleCall& c : source.manifest.calls)
    c.kernel = source.name + "_" + c.kernel;

  // Intermediates where the executor would put them; constants packed as in a bundle.
  const runtime::PlanLayout memory = runtime::layOut(buildExecutionPlan(
      layout, [](std::size_t, const exporter::BundleSlot&) { return nullptr; }, nullptr));
  source.offsets = memory.offsets;
  source.arenaBytes = memory.arenaBytes;
  const std::string weights = packWeights(
      lowered, [&](std::size_t slot, std::uint64_t offset) { source.offsets[slot] = offset; });
  source.weightBytes = weights.size();
  source.scratchBytes = heapScratchBytes(lowered.kernels);
  const std::vector<exporter::SourceFile> sources = exporter::exportSources(source, toolchain);

  codegen::CodegenOptions options;
  options.target = target;
  codegen::ObjectCode compiled = codegen::compileToObject(kernels, options);
  const std::string kernelsObject = std::move(compiled.object);
  const std::string weightsObject =
      codegen::dataObject(target, source.name + "_weights", weights, 64);

  std::error_code ec;
  fs::create_directories(folder, ec);
  if (!fs::is_directory(folder))
    throw Error(ErrorKind::Io, "cannot create the folder" + (ec ? ": " + ec.message() : ""),
                {folder, {}, {}});
  ExportSummary summary;
  summary.folder = folder;
  summary.triple = resolved.triple;
  summary.codeBytes = codegen::objectCodeBytes(kernelsObject);
  for (std::size_t k = 0; k < compiled.code.size(); ++k) // by the kernel's name in Lathe
    summary.kernelCodeBytes.push_back({lowered.kernels[k].name, compiled.code[k].codeBytes});
  summary.scratchBytes = source.scratchBytes;
  summary.ioBytes = exporter::ioBytes(layout);
  if (toolchain.board) {
    summary.board = toolchain.board->machine + ": " + toolchain.board->description;
    summary.boardFlashBytes = toolchain.board->flashBytes;
    summary.boardRamBytes = toolchain.board->ramBytes;
    summary.stackBytes = toolchain.board->stackBytes;
  }
  summary.weightBytes = weights.size();
  summary.arenaBytes = source.arenaBytes;
  const auto add = [&](const std::string& file, const std::string& bytes, const std::string& what) {
    writeFile(folder, file, bytes);
    summary.files.push_back({file, what, bytes.size()});
  };
  add("kernels.o", kernelsObject,
      std::to_string(lowered.kernels.size()) + " kernels for " + resolved.triple);
  add("weights.o", weightsObject, std::to_string(weights.size()) + " bytes of weights");
  for (const exporter::SourceFile& f : sources)
    add(f.name, f.text, f.description);
  summary.buildCommand = "make -C " + folder;
  if (toolchain.platform == exporter::ExportPlatform::Linux)
    summary.runCommand =
        (toolchain.emulator.empty() ? "" : toolchain.emulator + " ") + folder + "/model";
  else if (toolchain.platform == exporter::ExportPlatform::BareMetal && toolchain.board)
    summary.runCommand = "make -C " + folder + " run ARGS=\"-o DIR input_0.npy\"";
  else if (toolchain.platform == exporter::ExportPlatform::Wasm)
    summary.runCommand = "node " + folder + "/main.js";
  return summary;
}

} // namespace lathe::driver
