#include "engine/codegen/llvm/llvm_backend.h"

#include "engine/codegen/llvm/codegen.h"
#include "engine/support/diagnostics.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ObjectTransformLayer.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>
#include <mutex>
#include <sstream>

namespace lathe::codegen {

void initializeLlvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    llvm::InitializeAllAsmParsers();
  });
}

std::string llvmVersion() {
  return LLVM_VERSION_STRING;
}
std::string hostTriple() {
  return llvm::sys::getDefaultTargetTriple();
}
std::string hostCpuName() {
  return llvm::sys::getHostCPUName().str();
}

std::string hostCpuFeatures() {
  // What this CPU has and what it lacks: the CPU model's name alone implies extensions a
  // virtual machine may not pass through (znver5 implies movdiri, pku, ...). Sorted, so that
  // the string is the same in every run. Asked once: every compile and runsOnHost use it.
  static const std::string features = [] {
    std::vector<std::string> names;
    for (const auto& [name, enabled] : llvm::sys::getHostCPUFeatures())
      names.push_back((enabled ? "+" : "-") + name.str());
    std::sort(names.begin(), names.end());
    std::string out;
    for (const std::string& f : names)
      out += (out.empty() ? "" : ",") + f;
    return out;
  }();
  return features;
}

target::Target resolveTarget(const target::Target& t) {
  target::Target r = t;
  if (r.kind == target::Kind::Cuda) {
    r.triple = "nvptx64-nvidia-cuda";
    r.cpu = r.arch;
    return r;
  }
  const bool host = r.triple.empty();
  if (host)
    r.triple = hostTriple();
  if (r.cpu.empty())
    r.cpu = host ? hostCpuName() : "generic";
  if (host && r.features.empty() && r.cpu == hostCpuName())
    r.features = hostCpuFeatures();
  return r;
}

namespace {

// Why LLVM would not know the CPU or a feature the target string `t` names (not those filled
// in for the host) for `target`, or "". LLVM only warns
// about an unknown CPU and then generates for a CPU without an FPU, which on some targets
// aborts the process ("Do not know how to soften ..."): unknown names are refused first.
std::string unknownCpuOrFeature(const llvm::Target& target, const std::string& triple,
                                const target::Target& t) {
  std::unique_ptr<llvm::MCSubtargetInfo> info(target.createMCSubtargetInfo(triple, "", ""));
  if (!info)
    return {};
  const auto listed = [](const auto& table) {
    std::string names;
    std::size_t count = 0;
    for (const auto& entry : table) {
      if (count++ == 14) {
        names += ", ...";
        break;
      }
      names += (names.empty() ? "" : ", ") + std::string(entry.Key);
    }
    return names;
  };
  if (!t.cpu.empty() && t.cpu != "generic" && t.cpu != "native" && !info->isCPUStringValid(t.cpu))
    return "LLVM knows no CPU \"" + t.cpu + "\" for " + triple +
           " (some it knows: " + listed(info->getAllProcessorDescriptions()) + ")";
  std::istringstream features(t.features);
  std::string feature;
  while (std::getline(features, feature, ',')) {
    if (feature.size() < 2 || (feature[0] != '+' && feature[0] != '-'))
      continue;
    const std::string name = feature.substr(1);
    bool known = false;
    for (const auto& entry : info->getAllProcessorFeatures())
      known = known || name == entry.Key;
    if (!known)
      return "LLVM knows no feature \"" + name + "\" for " + triple +
             " (some it knows: " + listed(info->getAllProcessorFeatures()) + ")";
  }
  return {};
}

} // namespace

bool runsOnHost(const target::Target& t) {
  if (!t.isHost())
    return false;
  initializeLlvm();
  const target::Target r = resolveTarget(t);
  const std::string hostCpu = hostCpuName();
  if (r.cpu == hostCpu && (r.features.empty() || r.features == hostCpuFeatures()))
    return true;
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(r.triple, error);
  if (!target)
    return false;
  if (!unknownCpuOrFeature(*target, r.triple, t).empty())
    return false;
  // This CPU's model with extensions asked for on top: what the host lacks stays off unless
  // asked for.
  const std::string features =
      r.cpu == hostCpu ? hostCpuFeatures() + (r.features.empty() ? "" : "," + r.features)
                       : r.features;
  std::unique_ptr<llvm::MCSubtargetInfo> wanted(
      target->createMCSubtargetInfo(r.triple, r.cpu, features));
  if (!wanted)
    return false;
  // Every instruction set extension the code may use is one this CPU has. The CPU's feature
  // bits also hold tuning flags (x86-64-v3 has some a newer CPU lacks): only the names the
  // host's feature list has are instruction sets.
  const llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
  for (const llvm::SubtargetFeatureKV& feature : wanted->getAllProcessorFeatures()) {
    if (!wanted->getFeatureBits()[feature.Value])
      continue;
    const auto it = host.find(feature.Key);
    if (it != host.end() && !it->second)
      return false;
  }
  return true;
}

int vectorBits(const target::Target& t) {
  if (t.kind != target::Kind::Llvm)
    return 0;
  initializeLlvm();
  const target::Target r = resolveTarget(t);
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(r.triple, error);
  if (!target || !unknownCpuOrFeature(*target, r.triple, t).empty())
    return 0; // compiling says why, once
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target->createMCSubtargetInfo(r.triple, r.cpu, r.features));
  if (!info)
    return 0;
  auto has = [&](const char* feature) { return info->checkFeatures(std::string("+") + feature); };
  const llvm::Triple triple(r.triple);
  if (triple.isX86())
    return has("avx512f") ? 512 : has("avx") ? 256 : has("sse2") ? 128 : 0;
  if (triple.isAArch64())
    return has("neon") ? 128 : 0;
  if (triple.isWasm())
    return has("simd128") ? 128 : 0;
  // The vector extension guarantees 128-bit registers (Zvl128b), which LLVM uses to lower
  // fixed-length vectors.
  if (triple.isRISCV())
    return has("v") ? 128 : 0;
  return 0;
}

bool targetAvailable(const target::Target& t, std::string* why) {
  initializeLlvm();
  const target::Target r = resolveTarget(t);
  if (t.kind == target::Kind::Cuda) {
    // ptxas from CUDA 13 assembles sm_75 and newer.
    const std::string& arch = t.arch;
    const bool newEnough = arch.size() >= 5 && arch.rfind("sm_", 0) == 0 &&
                           std::isdigit(static_cast<unsigned char>(arch[3])) &&
                           std::atoi(arch.c_str() + 3) >= 75;
    if (!newEnough) {
      if (why)
        *why = "CUDA arch \"" + arch + "\": Lathe generates code for sm_75 and newer " +
               "(sm_75, sm_80, sm_86, sm_89, sm_90)";
      return false;
    }
  }
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(r.triple, error);
  if (!target) {
    if (why)
      *why = error;
    return false;
  }
  if (const std::string unknown =
          unknownCpuOrFeature(*target, r.triple, t.kind == target::Kind::Cuda ? r : t);
      !unknown.empty()) {
    if (why)
      *why = unknown;
    return false;
  }
  return true;
}

// The same for object files and the JIT.
static llvm::TargetOptions targetOptions() {
  llvm::TargetOptions options;
  options.UnsafeFPMath = false; // results must match ONNX Runtime
  // a * b + c may become one fused multiply-add (one rounding instead of two), as ONNX
  // Runtime's kernels do: twice the arithmetic per instruction in every conv and matmul.
  options.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  return options;
}

std::unique_ptr<llvm::TargetMachine> createTargetMachine(const target::Target& t) {
  initializeLlvm();
  const target::Target r = resolveTarget(t);
  std::string error;
  // "thumbv8m.main-none-eabihf" as written parses with no OS and no environment (so soft
  // float); normalised, it is thumbv8m.main-unknown-none-eabihf.
  const std::string normalized = llvm::Triple::normalize(r.triple);
  const llvm::Triple triple(normalized);
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(normalized, error);
  if (!target)
    throw Error(ErrorKind::Unsupported, "target \"" + t.text() + "\": " + error);
  if (const std::string unknown =
          unknownCpuOrFeature(*target, normalized, t.kind == target::Kind::Cuda ? r : t);
      !unknown.empty())
    throw Error(ErrorKind::Unsupported, "target \"" + t.text() + "\": " + unknown);
  if (std::string why; r.kind == target::Kind::Cuda && !targetAvailable(t, &why))
    throw Error(ErrorKind::Unsupported, "target \"" + t.text() + "\": " + why);
  const llvm::TargetOptions options = targetOptions();
  const llvm::CodeGenOptLevel level = r.optLevel >= 3   ? llvm::CodeGenOptLevel::Aggressive
                                      : r.optLevel == 2 ? llvm::CodeGenOptLevel::Default
                                      : r.optLevel == 1 ? llvm::CodeGenOptLevel::Less
                                                        : llvm::CodeGenOptLevel::None;
  // Bare metal is linked at fixed addresses: no GOT to place in a linker script.
  const llvm::Reloc::Model reloc = triple.getOS() == llvm::Triple::UnknownOS && !triple.isWasm()
                                       ? llvm::Reloc::Static
                                       : llvm::Reloc::PIC_;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      normalized, r.cpu, r.features, options, reloc, std::nullopt, level));
  if (!machine)
    throw Error(ErrorKind::Unsupported,
                "LLVM cannot create a target machine for \"" + t.text() + "\"");
  return machine;
}

void optimizeModule(llvm::Module& module, llvm::TargetMachine& machine, int optLevel) {
  module.setDataLayout(machine.createDataLayout());
  module.setTargetTriple(machine.getTargetTriple().str());
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  const llvm::OptimizationLevel level = optLevel >= 3   ? llvm::OptimizationLevel::O3
                                        : optLevel == 2 ? llvm::OptimizationLevel::O2
                                        : optLevel == 1 ? llvm::OptimizationLevel::O1
                                                        : llvm::OptimizationLevel::O0;
  llvm::ModulePassManager passes = optLevel == 0 ? builder.buildO0DefaultPipeline(level)
                                                 : builder.buildPerModuleDefaultPipeline(level);
  passes.run(module, mam);
}

std::string moduleText(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream out(text);
  module.print(out, nullptr);
  return text;
}

static std::string emitFile(llvm::Module& module, llvm::TargetMachine& machine,
                            llvm::CodeGenFileType type) {
  module.setDataLayout(machine.createDataLayout());
  module.setTargetTriple(machine.getTargetTriple().str());
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream out(buffer);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, out, nullptr, type))
    throw Error(ErrorKind::Unsupported,
                "LLVM cannot emit this file type for " + machine.getTargetTriple().str());
  passes.run(module);
  return std::string(buffer.begin(), buffer.end());
}

std::string emitAssembly(llvm::Module& module, llvm::TargetMachine& machine) {
  return emitFile(module, machine, llvm::CodeGenFileType::AssemblyFile);
}

std::string emitObject(llvm::Module& module, llvm::TargetMachine& machine) {
  return emitFile(module, machine, llvm::CodeGenFileType::ObjectFile);
}

LlvmJit::LlvmJit(const target::Target& host) {
  initializeLlvm();
  const target::Target r = resolveTarget(host);
  llvm::orc::JITTargetMachineBuilder machineBuilder{llvm::Triple(r.triple)};
  machineBuilder.setCPU(r.cpu);
  llvm::SubtargetFeatures features(r.features);
  machineBuilder.addFeatures(features.getFeatures());
  machineBuilder.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  machineBuilder.setOptions(targetOptions()); // without it JIT code had no FMA
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(machineBuilder).create();
  if (!jit)
    throw Error(ErrorKind::Internal,
                "cannot create the LLVM JIT: " + llvm::toString(jit.takeError()));
  jit_ = std::move(*jit);
}

LlvmJit::~LlvmJit() = default;

void LlvmJit::defineSymbol(const std::string& name, void* address) {
  llvm::orc::SymbolMap symbols;
  symbols[jit_->mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                                          llvm::JITSymbolFlags::Exported};
  if (auto err = jit_->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(symbols))))
    throw Error(ErrorKind::Internal,
                "cannot define JIT symbol " + name + ": " + llvm::toString(std::move(err)));
}

void LlvmJit::addModule(std::unique_ptr<llvm::Module> module,
                        std::unique_ptr<llvm::LLVMContext> context) {
  if (auto err =
          jit_->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context))))
    throw Error(ErrorKind::Internal, "JIT rejected the module: " + llvm::toString(std::move(err)));
}

void LlvmJit::observeObjects(std::function<void(std::string_view)> observe) {
  jit_->getObjTransformLayer().setTransform(
      [observe = std::move(observe)](std::unique_ptr<llvm::MemoryBuffer> object)
          -> llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> {
        observe(std::string_view(object->getBufferStart(), object->getBufferSize()));
        return object;
      });
}

void* LlvmJit::lookup(const std::string& name) {
  auto address = jit_->lookup(name);
  if (!address)
    throw Error(ErrorKind::Internal,
                "JIT symbol " + name + " not found: " + llvm::toString(address.takeError()));
  return address->toPtr<void*>();
}

} // namespace lathe::codegen
