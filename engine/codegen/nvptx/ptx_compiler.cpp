#include "engine/codegen/nvptx/ptx_compiler.h"

#include "engine/codegen/llvm/kernel_emitter.h"
#include "engine/codegen/llvm/llvm_backend.h"
#include "engine/codegen/nvptx/gpu_launches.h"
#include "engine/codegen/nvptx/ptxas.h"
#include "engine/support/diagnostics.h"

#include <llvm/IR/Instructions.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <map>
#include <set>
#include <sstream>

namespace lathe::codegen::nvptx {

namespace {

// NVPTX has no instructions for these and Lathe's math library only covers f32: LLVM would
// stop the process ("Cannot select"), so they are refused first, naming the kernel.
void requireSelectableCalls(const llvm::Module& module,
                            const std::map<std::string, std::string>& kernelOf) {
  static const char* const kNoGpuIntrinsic[] = {
      "llvm.exp.", "llvm.exp2.", "llvm.exp10.", "llvm.log.", "llvm.log2.", "llvm.log10.",
      "llvm.pow.", "llvm.sin.",  "llvm.cos.",   "llvm.tan.", "llvm.tanh.", "llvm.powi."};
  for (const llvm::Function& f : module) {
    if (!f.isDeclaration() || f.use_empty())
      continue;
    const std::string name = f.getName().str();
    std::string why;
    if (!f.isIntrinsic())
      why = "it calls '" + name + "', which has no GPU version";
    for (const char* prefix : kNoGpuIntrinsic)
      if (name.rfind(prefix, 0) == 0)
        why = "'" + name + "' (double-precision math) has no GPU version in Lathe";
    if (why.empty())
      continue;
    std::string kernel = "?";
    for (const llvm::User* user : f.users())
      if (const auto* call = llvm::dyn_cast<llvm::CallBase>(user))
        if (const auto it = kernelOf.find(call->getFunction()->getName().str());
            it != kernelOf.end())
          kernel = it->second;
    throw Error(ErrorKind::Unsupported, "CUDA code for kernel " + kernel + ": " + why);
  }
}

// The LLVM IR of the named functions.
std::string functionsText(const llvm::Module& module, const std::vector<std::string>& names) {
  std::string text;
  llvm::raw_string_ostream out(text);
  for (const std::string& n : names)
    if (const llvm::Function* f = module.getFunction(n))
      f->print(out);
  out.flush();
  return text;
}

// The PTX of the named entry functions: from `.visible .entry NAME(` to the closing brace.
std::string entriesText(const std::string& ptx, const std::set<std::string>& names) {
  std::string text, line;
  std::istringstream in(ptx);
  bool inside = false;
  while (std::getline(in, line)) {
    if (!inside) {
      const auto at = line.find(".entry ");
      if (at == std::string::npos)
        continue;
      const auto open = line.find('(', at);
      const std::string name =
          line.substr(at + 7, open == std::string::npos ? open : open - at - 7);
      inside = names.count(name) > 0;
    }
    if (inside) {
      text += line + "\n";
      if (line == "}") {
        text += "\n";
        inside = false;
      }
    }
  }
  return text;
}

} // namespace

PtxModule compileToPtx(const std::vector<loop::Kernel>& kernels, const CodegenOptions& options) {
  PtxModule result;
  llvm::LLVMContext context;
  auto module = std::make_unique<llvm::Module>("lathe_kernels", context);
  std::map<std::string, std::string> kernelOf;
  std::vector<std::vector<std::string>> functions;
  for (const loop::Kernel& kernel : kernels) {
    const GpuKernelPlan plan = planLaunches(kernel);
    KernelCode code;
    code.name = kernel.name;
    std::vector<std::string> names;
    for (const GpuLaunch& launch : plan.launches) {
      emitGpuKernel(launch.kernel, *module);
      GpuFunctionCode f;
      f.name = launch.kernel.name;
      for (std::size_t i = 0; i < 3; ++i) {
        f.grid[i] = launch.grid[i];
        f.block[i] = launch.block[i];
      }
      code.gpuFunctions.push_back(f);
      names.push_back(f.name);
      kernelOf[f.name] = kernel.name;
    }
    for (const GpuScratch& s : plan.scratch)
      code.gpuScratch.emplace_back(s.name, s.bytes);
    result.code.push_back(std::move(code));
    functions.push_back(std::move(names));
  }
  std::string broken;
  llvm::raw_string_ostream why(broken);
  if (llvm::verifyModule(*module, &why))
    throw Error(ErrorKind::Internal, "invalid NVPTX IR: " + broken);
  if (options.keepText)
    for (std::size_t k = 0; k < kernels.size(); ++k)
      result.code[k].llvmIr = functionsText(*module, functions[k]);
  std::unique_ptr<llvm::TargetMachine> machine = createTargetMachine(options.target);
  optimizeModule(*module, *machine, options.target.optLevel);
  requireSelectableCalls(*module, kernelOf);
  if (options.keepText)
    for (std::size_t k = 0; k < kernels.size(); ++k)
      result.code[k].llvmIrOptimized = functionsText(*module, functions[k]);
  result.ptx = emitAssembly(*module, *machine);

  const PtxasResult ptxas = runPtxas(result.ptx, options.target.arch);
  result.cubin = ptxas.cubin;
  result.ptxasLog = ptxas.log;
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    KernelCode& code = result.code[k];
    code.assembly =
        entriesText(result.ptx, std::set<std::string>(functions[k].begin(), functions[k].end()));
    if (!ptxas.ran)
      code.ptxasLog = ptxas.log;
    for (GpuFunctionCode& f : code.gpuFunctions) {
      const auto it = ptxas.functions.find(f.name);
      if (it == ptxas.functions.end())
        continue;
      f.registers = it->second.registers;
      f.sharedBytes = it->second.sharedBytes;
      f.stackBytes = it->second.stackBytes;
      f.spillStores = it->second.spillStores;
      f.spillLoads = it->second.spillLoads;
    }
  }
  return result;
}

} // namespace lathe::codegen::nvptx
