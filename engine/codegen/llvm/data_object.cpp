#include "engine/codegen/llvm/data_object.h"

#include "engine/codegen/llvm/llvm_backend.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Object/SymbolSize.h>
#include <llvm/Support/MemoryBuffer.h>

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

std::uint64_t objectCodeBytes(std::string_view object) {
  const llvm::MemoryBufferRef buffer(llvm::StringRef(object.data(), object.size()), "object");
  auto file = llvm::object::ObjectFile::createObjectFile(buffer);
  if (!file) {
    llvm::consumeError(file.takeError());
    return 0;
  }
  std::uint64_t bytes = 0;
  for (const llvm::object::SectionRef& section : (*file)->sections())
    if (section.isText())
      bytes += section.getSize();
  return bytes;
}

std::map<std::string, std::uint64_t> functionSizes(std::string_view object) {
  std::map<std::string, std::uint64_t> sizes;
  const llvm::MemoryBufferRef buffer(llvm::StringRef(object.data(), object.size()), "object");
  auto file = llvm::object::ObjectFile::createObjectFile(buffer);
  if (!file) {
    llvm::consumeError(file.takeError());
    return sizes;
  }
  for (const auto& [symbol, size] : llvm::object::computeSymbolSizes(**file)) {
    auto type = symbol.getType();
    auto name = symbol.getName();
    if (!type || !name) {
      if (!type)
        llvm::consumeError(type.takeError());
      if (!name)
        llvm::consumeError(name.takeError());
      continue;
    }
    if (*type == llvm::object::SymbolRef::ST_Function)
      sizes[name->str()] += size;
  }
  return sizes;
}

} // namespace lathe::codegen
