#include "engine/driver/bundle_io.h"

#include "engine/codegen/llvm/codegen.h"
#include "engine/codegen/nvptx/ptx_compiler.h"
#include "engine/driver/dump_files.h"
#include "engine/driver/execution_plan.h"
#include "engine/export/bundle.h"
#include "engine/export/export_sources.h"
#include "engine/export/manifest_check.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/support/diagnostics.h"

#include <dlfcn.h>
#include <filesystem>
#include <fstream>

namespace lathe::driver {

namespace fs = std::filesystem;

namespace {

// dlopen'ed kernels; closing the library when the model goes away.
class BundleKernels : public codegen::JitKernels {
public:
  explicit BundleKernels(const std::string& library) {
    handle_ = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_)
      throw Error(ErrorKind::Invalid,
                  std::string("cannot load the bundle's kernels: ") + ::dlerror());
  }
  ~BundleKernels() override {
    if (handle_)
      ::dlclose(handle_);
  }
  codegen::KernelFunction function(const std::string& name) const override {
    void* f = ::dlsym(handle_, name.c_str());
    if (!f)
      throw Error(ErrorKind::Invalid, "the bundle's library has no kernel '" + name + "'");
    return reinterpret_cast<codegen::KernelFunction>(f);
  }

private:
  void* handle_ = nullptr;
};

} // namespace

namespace {

// A CUDA bundle: one PTX module with every kernel's launches, which the manifest lists.
std::uint64_t writeCudaBundle(const lowering::LoweredModel& lowered,
                              const exporter::BundleManifest& layout, const target::Target& target,
                              const std::string& modelPath, const std::string& path,
                              const std::string& dumpDir, const codegen::CodegenOptions& options,
                              std::vector<codegen::KernelCode>* code) {
  const codegen::nvptx::PtxModule ptx = codegen::nvptx::compileToPtx(lowered.kernels, options);
  exporter::BundleManifest manifest = layout;
  manifest.model = fs::path(modelPath).filename().string();
  manifest.target = target.text();
  manifest.triple = codegen::resolveTarget(target).triple;
  manifest.library = "kernels.ptx";
  for (exporter::BundleKernel& k : manifest.kernels)
    for (const codegen::KernelCode& code : ptx.code) {
      if (code.name != k.name)
        continue;
      for (const codegen::GpuFunctionCode& f : code.gpuFunctions)
        k.launches.push_back(
            {f.name, {f.grid[0], f.grid[1], f.grid[2]}, {f.block[0], f.block[1], f.block[2]}});
      for (const auto& [name, bytes] : code.gpuScratch)
        k.scratch.push_back(static_cast<std::uint64_t>(bytes));
    }
  const std::string weights = packWeights(lowered, [&](std::size_t slot, std::uint64_t offset) {
    manifest.slots[slot].weightsOffset = offset;
  });
  manifest.librarySeal = exporter::sealOf(ptx.ptx);
  manifest.weightsSeal = exporter::sealOf(weights);
  std::vector<std::pair<std::string, std::string>> extra;
  if (!ptx.cubin.empty()) { // ptxas ran: the module assembled for the target's GPU
    manifest.cubin = "kernels." + codegen::resolveTarget(target).cpu + ".cubin";
    manifest.cubinSeal = exporter::sealOf(ptx.cubin);
    extra.push_back({manifest.cubin, ptx.cubin});
  }
  try { // what is written must load: a failure here is a bug in Lathe, not in the model
    exporter::validateManifest(manifest, path);
  } catch (const Error& e) {
    throw Error(ErrorKind::Internal, std::string("the bundle's manifest is invalid: ") + e.what());
  }
  exporter::writeBundle(path, manifest, ptx.ptx, weights, extra);
  if (!dumpDir.empty())
    writeDumpFiles(dumpDir, manifest.model, lowered, ptx.code);
  if (code)
    *code = ptx.code;
  return fs::file_size(path);
}

} // namespace

std::uint64_t writeCompiledBundle(const lowering::LoweredModel& lowered,
                                  const exporter::BundleManifest& layout,
                                  const target::Target& target, const std::string& modelPath,
                                  const std::string& path, const std::string& dumpDir,
                                  std::vector<codegen::KernelCode>* code) {
  for (const lowering::KernelCall& c : lowered.calls)
    if (c.hostNode)
      throw Error(ErrorKind::Unsupported,
                  "bundles cannot hold control flow yet; run the model directly (lathe run "
                  "model.onnx) instead",
                  {{}, c.hostNode->name, c.hostNode->opType()});
  codegen::CodegenOptions options;
  options.target = target;
  options.keepText = !dumpDir.empty();
  if (target.kind == target::Kind::Cuda)
    return writeCudaBundle(lowered, layout, target, modelPath, path, dumpDir, options, code);
  const codegen::ObjectCode object = codegen::compileToObject(lowered.kernels, options);
  const target::Target resolved = codegen::resolveTarget(target);

  exporter::BundleManifest manifest = layout;
  manifest.model = fs::path(modelPath).filename().string();
  manifest.target = target.text();
  manifest.triple = resolved.triple;
  std::string library;
  if (exporter::canLinkSharedObject(resolved.triple)) {
    library = exporter::linkSharedObject(object.object, resolved.triple);
    manifest.library = "kernels.so";
  } else {
    library = object.object;
    manifest.library = "kernels.o";
  }
  const std::string weights = packWeights(lowered, [&](std::size_t slot, std::uint64_t offset) {
    manifest.slots[slot].weightsOffset = offset;
  });
  manifest.librarySeal = exporter::sealOf(library);
  manifest.weightsSeal = exporter::sealOf(weights);
  try { // what is written must load: a failure here is a bug in Lathe, not in the model
    exporter::validateManifest(manifest, path);
  } catch (const Error& e) {
    throw Error(ErrorKind::Internal, std::string("the bundle's manifest is invalid: ") + e.what());
  }
  exporter::writeBundle(path, manifest, library, weights);

  if (!dumpDir.empty())
    writeDumpFiles(dumpDir, manifest.model, lowered, object.code);
  if (code)
    *code = object.code;
  return fs::file_size(path);
}

std::string packWeights(const lowering::LoweredModel& lowered,
                        const std::function<void(std::size_t, std::uint64_t)>& placed) {
  std::string weights;
  for (std::size_t i = 0; i < lowered.slots.size(); ++i) {
    const lowering::TensorSlot& s = lowered.slots[i];
    if (s.kind != lowering::SlotKind::Constant)
      continue;
    weights.resize((weights.size() + 63) / 64 * 64, '\0');
    placed(i, weights.size());
    weights.append(reinterpret_cast<const char*>(s.constant->data()), s.constant->byteSize());
  }
  return weights;
}

std::unique_ptr<CompiledModel> loadCompiledBundle(const std::string& path, int threads) {
  auto loaded = exporter::readBundle(path);
  const exporter::BundleManifest& m = loaded->manifest;
  const std::string hostTriple = codegen::resolveTarget(target::parseTarget("llvm")).triple;
  if (m.library == "kernels.ptx")
    throw Error(ErrorKind::Unsupported,
                "the bundle holds PTX for \"" + m.target +
                    "\"; Lathe cannot run CUDA bundles yet (lathe run MODEL.onnx --target "
                    "\"" +
                    m.target + "\" says whether this machine has a CUDA driver)",
                {path, {}, {}});
  if (m.library != "kernels.so" ||
      m.triple.substr(0, m.triple.find('-')) != hostTriple.substr(0, hostTriple.find('-'))) {
    // Say how to run it after all: an export for that target, and the emulator for it here.
    const exporter::ExportToolchain tc = exporter::toolchainFor(m.triple, "", hostTriple);
    const std::string emulator = tc.emulator.substr(0, tc.emulator.find(' '));
    throw Error(
        ErrorKind::Invalid,
        "the bundle was compiled for " + m.triple + " (\"" + m.target + "\"); this machine is " +
            hostTriple +
            ". To run the model there, export it for that target: lathe export MODEL "
            "--target \"" +
            m.target + "\" -o DIR, then make -C DIR" +
            (emulator.empty() ? std::string() : " (and try it here under " + emulator + ")"),
        {path, {}, {}});
  }
  auto compiled = std::make_unique<CompiledModel>();
  compiled->jit = std::make_unique<BundleKernels>(loaded->libraryPath);
  const std::string& weights = loaded->weights;
  const auto constant = [&](std::size_t, const exporter::BundleSlot& s) -> const void* {
    return weights.data() + s.weightsOffset;
  };
  compiled->executor = std::make_unique<runtime::Executor>(
      buildExecutionPlan(m, constant, compiled->jit.get(), {}, path), threads);
  // The executor copied the weights into its own aligned block: this copy would double the
  // model's resident memory (ResNet-50: 408 MiB with it).
  std::string().swap(loaded->weights);
  compiled->layout = m;
  compiled->bundle = std::move(loaded); // keeps the extracted library until the model goes
  return compiled;
}

} // namespace lathe::driver
