#include "engine/api/bundle_io.h"

#include "engine/api/dump_files.h"
#include "engine/codegen/llvm/codegen.h"
#include "engine/export/bundle.h"
#include "engine/export/manifest_check.h"
#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/ir_printer.h"
#include "engine/support/checked_int.h"
#include "engine/support/diagnostics.h"

#include <dlfcn.h>
#include <filesystem>
#include <fstream>

namespace lathe::api {

namespace fs = std::filesystem;

namespace {

const char* roleName(lowering::SlotKind kind) {
  switch (kind) {
  case lowering::SlotKind::Input:
    return "input";
  case lowering::SlotKind::Output:
    return "output";
  case lowering::SlotKind::Constant:
    return "constant";
  case lowering::SlotKind::Intermediate:
    return "intermediate";
  }
  return "?";
}

runtime::SlotRole roleFromName(const std::string& role, const std::string& source) {
  if (role == "input")
    return runtime::SlotRole::Input;
  if (role == "output")
    return runtime::SlotRole::Output;
  if (role == "constant")
    return runtime::SlotRole::Constant;
  if (role == "intermediate")
    return runtime::SlotRole::Intermediate;
  throw Error(ErrorKind::Invalid, "unknown tensor role '" + role + "' in the manifest",
              {source, {}, {}});
}

// The bytes a kernel parameter spans: (the last element's flat index + 1) elements.
std::uint64_t parameterBytes(const loop::Kernel& kernel, const loop::Buffer& buffer) {
  std::optional<std::int64_t> last = 0;
  for (int i = 0; i < buffer.rank(); ++i) {
    const std::optional<std::int64_t> extent = loop::asConstInt(buffer.shape()[i]);
    const std::optional<std::int64_t> stride = loop::asConstInt(buffer.strides()[i]);
    LATHE_CHECK(extent && stride && *extent >= 0 && *stride >= 0,
                "kernel " + kernel.name + " parameter " + buffer.name() +
                    " has a shape or strides that are not constant");
    if (*extent == 0)
      return 0;
    const std::optional<std::int64_t> step = checkedMul(*extent - 1, *stride);
    last = step && last ? checkedAdd(*last, *step) : std::nullopt;
  }
  const auto bytes = last ? checkedMul(*last + 1, buffer.elementType().bytes()) : std::nullopt;
  LATHE_CHECK(bytes, "kernel " + kernel.name + " parameter " + buffer.name() + " overflows");
  return static_cast<std::uint64_t>(*bytes);
}

// What each kernel's code reads and writes, for checking the calls when a bundle is loaded.
exporter::BundleKernel kernelSignature(const loop::Kernel& kernel) {
  exporter::BundleKernel signature{kernel.name, {}};
  for (const loop::Buffer& b : kernel.inputs)
    signature.params.push_back({"input", b.elementType().toString(), parameterBytes(kernel, b)});
  for (const loop::Buffer& b : kernel.outputs)
    signature.params.push_back({"output", b.elementType().toString(), parameterBytes(kernel, b)});
  return signature;
}

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

void writeCompiledBundle(const lowering::LoweredModel& lowered, const target::Target& target,
                         const std::string& modelPath, const std::string& path,
                         const std::string& dumpDir, const std::vector<double>& callFlops,
                         CompileReport& report) {
  for (const lowering::KernelCall& c : lowered.calls)
    if (c.hostNode)
      throw Error(ErrorKind::Unsupported,
                  "bundles cannot hold control flow yet; run the model directly (lathe run "
                  "model.onnx) instead",
                  {{}, c.hostNode->name, c.hostNode->opType()});
  codegen::CodegenOptions options;
  options.target = target;
  options.keepText = !dumpDir.empty();
  const codegen::ObjectCode object = codegen::compileToObject(lowered.kernels, options);
  const target::Target resolved = codegen::resolveTarget(target);

  exporter::BundleManifest manifest;
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
  std::string weights;
  for (const lowering::TensorSlot& s : lowered.slots) {
    exporter::BundleSlot b;
    b.name = s.name;
    b.role = roleName(s.kind);
    b.dtype = std::string(graph::dtypeName(s.dtype));
    b.shape = s.shape;
    b.bytes = static_cast<std::uint64_t>(s.byteSize());
    if (s.kind == lowering::SlotKind::Constant) {
      weights.resize((weights.size() + 63) / 64 * 64, '\0');
      b.weightsOffset = weights.size();
      weights.append(reinterpret_cast<const char*>(s.constant->data()), s.constant->byteSize());
    }
    manifest.slots.push_back(std::move(b));
  }
  for (const loop::Kernel& k : lowered.kernels)
    manifest.kernels.push_back(kernelSignature(k));
  for (std::size_t i = 0; i < lowered.calls.size(); ++i) {
    const lowering::KernelCall& c = lowered.calls[i];
    manifest.calls.push_back({c.kernel, c.args, c.nodes, i < callFlops.size() ? callFlops[i] : 0});
  }
  manifest.inputs = lowered.inputs;
  manifest.outputs = lowered.outputs;
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
  report.bundleBytes = fs::file_size(path);
}

std::unique_ptr<CompiledModel> loadCompiledBundle(const std::string& path, int threads) {
  auto loaded = exporter::readBundle(path);
  const exporter::BundleManifest& m = loaded->manifest;
  const std::string hostTriple = codegen::resolveTarget(target::parseTarget("llvm")).triple;
  if (m.library != "kernels.so" ||
      m.triple.substr(0, m.triple.find('-')) != hostTriple.substr(0, hostTriple.find('-')))
    throw Error(ErrorKind::Invalid,
                "the bundle was compiled for " + m.triple + " (\"" + m.target +
                    "\"); this machine is " + hostTriple,
                {path, {}, {}});
  auto compiled = std::make_unique<CompiledModel>();
  compiled->jit = std::make_unique<BundleKernels>(loaded->libraryPath);
  runtime::ExecutionPlan plan;
  for (const exporter::BundleSlot& s : m.slots) {
    runtime::PlanSlot p;
    p.name = s.name;
    p.role = roleFromName(s.role, path);
    const auto type = runtime::parseElementType(s.dtype);
    if (!type)
      throw Error(ErrorKind::Invalid, "unknown element type '" + s.dtype + "'", {path, {}, {}});
    p.type = *type;
    p.shape = s.shape;
    if (p.byteSize() != s.bytes)
      throw Error(ErrorKind::Invalid, "tensor '" + s.name + "' has an inconsistent size",
                  {path, {}, {}});
    if (p.role == runtime::SlotRole::Constant)
      p.constantData = loaded->weights.data() + s.weightsOffset;
    plan.slots.push_back(std::move(p));
  }
  for (const exporter::BundleCall& c : m.calls)
    plan.calls.push_back({c.kernel, compiled->jit->function(c.kernel), c.args, nullptr});
  plan.inputs = m.inputs;
  plan.outputs = m.outputs;
  compiled->executor = std::make_unique<runtime::Executor>(std::move(plan), threads);
  compiled->bundle = std::move(loaded); // keeps the extracted library until the model goes
  return compiled;
}

} // namespace lathe::api
