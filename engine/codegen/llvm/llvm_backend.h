#pragma once
// LLVM plumbing shared by the code generator's files: target machines, the optimisation
// pipeline, text/assembly/object emission and the ORC JIT. Includes LLVM headers; only
// engine/codegen/llvm may include it.

#include "engine/target/target.h"

#include <functional>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>
#include <memory>
#include <string>
#include <string_view>

namespace llvm::orc {
class LLJIT;
}

namespace lathe::codegen {

void initializeLlvm(); // idempotent, thread-safe

// Throws lathe::Error (Unsupported) when LLVM has no such target or CPU.
std::unique_ptr<llvm::TargetMachine> createTargetMachine(const target::Target& target);

// Runs LLVM's standard O0..O3 pipeline for the target.
void optimizeModule(llvm::Module& module, llvm::TargetMachine& machine, int optLevel);

std::string moduleText(const llvm::Module& module);
std::string emitAssembly(llvm::Module& module, llvm::TargetMachine& machine);
std::string emitObject(llvm::Module& module, llvm::TargetMachine& machine);

// A JIT for the host. Generated code can call the symbols defined with defineSymbol.
class LlvmJit {
public:
  explicit LlvmJit(const target::Target& host);
  ~LlvmJit();
  void defineSymbol(const std::string& name, void* address);
  void addModule(std::unique_ptr<llvm::Module> module, std::unique_ptr<llvm::LLVMContext> context);
  void* lookup(const std::string& name); // throws lathe::Error if missing
  // `observe` sees each object file the JIT compiles, before it is linked (set it before
  // addModule; it runs on the thread that triggers the compile, e.g. in lookup).
  void observeObjects(std::function<void(std::string_view)> observe);

private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
};

} // namespace lathe::codegen
