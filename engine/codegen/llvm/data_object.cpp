#include "engine/codegen/llvm/data_object.h"

#include "engine/codegen/llvm/llvm_backend.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>

namespace lathe::codegen {

std::string dataObject(const target::Target& target, const std::string& symbol,
                       std::string_view bytes, std::uint64_t alignment) {
  initializeLlvm();
  auto machine = createTargetMachine(target);
  llvm::LLVMContext context;
  llvm::Module module("lathe_data", context);
  module.setDataLayout(machine->createDataLayout());
  module.setTargetTriple(machine->getTargetTriple().str());
  // An empty array still defines the symbol (a model without weights).
  const std::string_view data = bytes.empty() ? std::string_view("\0", 1) : bytes;
  llvm::Constant* init = llvm::ConstantDataArray::getRaw(
      llvm::StringRef(data.data(), data.size()), data.size(), llvm::Type::getInt8Ty(context));
  auto* global = new llvm::GlobalVariable(module, init->getType(), /*isConstant=*/true,
                                          llvm::GlobalValue::ExternalLinkage, init, symbol);
  global->setAlignment(llvm::Align(alignment));
  return emitObject(module, *machine);
}

} // namespace lathe::codegen
