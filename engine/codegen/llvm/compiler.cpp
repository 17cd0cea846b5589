#include "engine/codegen/llvm/compiler.h"

#include "engine/codegen/llvm/codegen.h"
#include "engine/codegen/llvm/data_object.h"
#include "engine/codegen/llvm/kernel_emitter.h"
#include "engine/codegen/llvm/llvm_backend.h"
#include "engine/codegen/llvm/soft_float.h"
#include "engine/runtime/runtime_abi.h"
#include "engine/support/diagnostics.h"

#include <cstdlib>
#include <llvm/IR/AssemblyAnnotationWriter.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/FormattedStream.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <optional>
#include <regex>
#include <sstream>

namespace lathe::codegen {
namespace {

struct BuiltModule {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  std::vector<KernelCode> code;
};

// Marks each instruction's line with its loop IR line (from its debug location), for
// kernelFunctionsText to turn into a line map.
class LoopLineMarker : public llvm::AssemblyAnnotationWriter {
public:
  void emitInstructionAnnot(const llvm::Instruction* instruction,
                            llvm::formatted_raw_ostream& out) override {
    if (const llvm::DebugLoc& loc = instruction->getDebugLoc())
      out << kMarker << loc.getLine() << "\n";
  }
  static constexpr const char* kMarker = ";lathe-loop-line ";
};

// The text of the functions that belong to `kernel` (itself, its body, outlined loops),
// without the debug-location references (`, !dbg !12`) that only lead to metadata not shown;
// `loopLines` gets, per line of it, the loop IR line it came from (0: none).
std::string kernelFunctionsText(const llvm::Module& module, const std::string& kernel,
                                std::vector<int>* loopLines = nullptr) {
  std::string text;
  llvm::raw_string_ostream out(text);
  LoopLineMarker marker;
  for (const llvm::Function& f : module) {
    const llvm::StringRef name = f.getName();
    if (!f.isDeclaration() && (name == kernel || name.starts_with(kernel + "_body")))
      f.print(out, &marker);
  }
  out.flush();
  static const std::regex dbg(R"((,)? !dbg !\d+)");
  std::string shown;
  std::istringstream in(text);
  std::string line;
  int pending = 0;
  const std::string markerText = LoopLineMarker::kMarker;
  while (std::getline(in, line)) {
    const auto at = line.find(markerText);
    if (at != std::string::npos) {
      pending = std::atoi(line.c_str() + at + markerText.size());
      continue;
    }
    shown += std::regex_replace(line, dbg, "") + "\n";
    if (loopLines)
      loopLines->push_back(pending);
    pending = 0;
  }
  return shown;
}

// The assembly of `kernel`'s functions: from each function's label to its end marker, without
// the debug directives; `loopLines` gets, per line kept, the loop IR line its `.loc` named
// (0: none).
std::string kernelAssembly(const std::string& assembly, const std::string& kernel,
                           std::vector<int>* loopLines) {
  std::string out;
  std::istringstream in(assembly);
  std::string line;
  bool inside = false;
  int current = 0;
  static const std::regex loc(R"(^\s*\.loc\s+\d+\s+(\d+))");
  static const std::regex tmpLabel(R"(^\.L(tmp|func_begin)\d+:\s*$)");
  while (std::getline(in, line)) {
    if (!inside) {
      const auto colon = line.find(':');
      if (colon != std::string::npos && line[0] != '\t' && line[0] != '.' && line[0] != '#') {
        const std::string label = line.substr(0, colon);
        inside = label == kernel || label.rfind(kernel + "_body", 0) == 0;
        current = 0;
      }
    }
    if (!inside)
      continue;
    std::smatch m;
    if (std::regex_search(line, m, loc)) {
      current = std::stoi(m[1].str());
      continue;
    }
    if (std::regex_match(line, tmpLabel) || line.find("\t.file\t") == 0)
      continue;
    out += line + "\n";
    if (loopLines)
      loopLines->push_back(current);
    if (line.rfind(".Lfunc_end", 0) == 0)
      inside = false;
  }
  return out;
}

// Emits every kernel into one module, verifies and optimises it.
BuiltModule build(const std::vector<loop::Kernel>& kernels, const CodegenOptions& options,
                  llvm::TargetMachine& machine) {
  BuiltModule built;
  built.context = std::make_unique<llvm::LLVMContext>();
  built.module = std::make_unique<llvm::Module>("lathe_kernels", *built.context);
  built.module->setDataLayout(machine.createDataLayout());
  built.module->setTargetTriple(machine.getTargetTriple().str());
  // With the texts kept, instructions carry their loop IR lines (the assembly's .loc).
  std::optional<KernelDebugInfo> debug;
  if (options.keepText)
    debug.emplace(*built.module);
  for (const loop::Kernel& k : kernels) {
    loop::StmtLines lines;
    if (debug)
      loop::toString(k, &lines);
    emitKernel(k, *built.module, debug ? &*debug : nullptr, debug ? &lines : nullptr);
  }
  if (debug)
    debug->finalize();
  std::string problems;
  llvm::raw_string_ostream out(problems);
  if (llvm::verifyModule(*built.module, &out))
    throw Error(ErrorKind::Internal, "the generated LLVM IR is invalid: " + problems);
  std::vector<std::string> before;
  std::vector<std::vector<int>> beforeLines;
  if (options.keepText)
    for (const loop::Kernel& k : kernels)
      before.push_back(kernelFunctionsText(*built.module, k.name, &beforeLines.emplace_back()));
  optimizeModule(*built.module, machine, options.target.optLevel);
  if (softFloatTarget(machine)) // what the instruction selector cannot lower there
    expandFloatMinMax(*built.module);
  std::string assembly;
  if (options.keepText) {
    auto copy = llvm::CloneModule(*built.module);
    assembly = emitAssembly(*copy, machine);
  }
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    KernelCode code;
    code.name = kernels[i].name;
    if (options.keepText) {
      code.llvmIr = before[i];
      code.llvmIrLoopLines = std::move(beforeLines[i]);
      code.llvmIrOptimized =
          kernelFunctionsText(*built.module, kernels[i].name, &code.llvmIrOptimizedLoopLines);
      code.assembly = kernelAssembly(assembly, kernels[i].name, &code.assemblyLoopLines);
    }
    built.code.push_back(std::move(code));
  }
  return built;
}

// Fills each kernel's code size from the function sizes of the object it was compiled into.
void fillCodeBytes(std::vector<KernelCode>& code, std::string_view object) {
  const std::map<std::string, std::uint64_t> sizes = functionSizes(object);
  for (KernelCode& k : code)
    for (auto it = sizes.lower_bound(k.name); it != sizes.end(); ++it) {
      if (it->first == k.name || it->first.rfind(k.name + "_body", 0) == 0)
        k.codeBytes += it->second;
      else if (it->first.rfind(k.name, 0) != 0)
        break;
    }
}

class JitKernelsImpl : public JitKernels {
public:
  JitKernelsImpl(const std::vector<loop::Kernel>& kernels, const CodegenOptions& options)
      : jit_(options.target) {
    auto machine = createTargetMachine(options.target);
    BuiltModule built = build(kernels, options, *machine);
    code_ = std::move(built.code);
    // The JIT compiles the module to an object before linking it: its symbols give each
    // kernel's code size.
    jit_.observeObjects([this](std::string_view object) { fillCodeBytes(code_, object); });
    jit_.defineSymbol("lathe_parallel_for", reinterpret_cast<void*>(&lathe_parallel_for));
    jit_.defineSymbol("lathe_alloc", reinterpret_cast<void*>(&lathe_alloc));
    jit_.defineSymbol("lathe_free", reinterpret_cast<void*>(&lathe_free));
    jit_.addModule(std::move(built.module), std::move(built.context));
    for (const loop::Kernel& k : kernels)
      functions_[k.name] = reinterpret_cast<KernelFunction>(jit_.lookup(k.name));
  }

  KernelFunction function(const std::string& name) const override {
    auto it = functions_.find(name);
    LATHE_CHECK(it != functions_.end(), "no compiled kernel named " + name);
    return it->second;
  }

private:
  LlvmJit jit_;
  std::unordered_map<std::string, KernelFunction> functions_;
};

} // namespace

std::unique_ptr<JitKernels> jitKernels(const std::vector<loop::Kernel>& kernels,
                                       const CodegenOptions& options) {
  if (!options.target.isHost())
    throw Error(ErrorKind::Unsupported,
                "kernels for \"" + options.target.text() + "\" cannot run on this machine");
  return std::make_unique<JitKernelsImpl>(kernels, options);
}

ObjectCode compileToObject(const std::vector<loop::Kernel>& kernels,
                           const CodegenOptions& options) {
  auto machine = createTargetMachine(options.target);
  BuiltModule built = build(kernels, options, *machine);
  ObjectCode out;
  out.object = emitObject(*built.module, *machine);
  out.code = std::move(built.code);
  fillCodeBytes(out.code, out.object);
  return out;
}

} // namespace lathe::codegen
