#include "engine/codegen/llvm/soft_float.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <vector>

namespace lathe::codegen {

bool softFloatTarget(const llvm::TargetMachine& machine) {
  const llvm::Triple& triple = machine.getTargetTriple();
  if (!triple.isARM() && !triple.isThumb())
    return false;
  const llvm::MCSubtargetInfo* info = machine.getMCSubtargetInfo();
  return !info || !info->checkFeatures("+vfp2sp");
}

void expandFloatMinMax(llvm::Module& module) {
  std::vector<llvm::IntrinsicInst*> calls;
  for (llvm::Function& f : module)
    for (llvm::BasicBlock& block : f)
      for (llvm::Instruction& inst : block)
        if (auto* call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst))
          if ((call->getIntrinsicID() == llvm::Intrinsic::maximum ||
               call->getIntrinsicID() == llvm::Intrinsic::minimum) &&
              call->getType()->isFloatingPointTy())
            calls.push_back(call);
  for (llvm::IntrinsicInst* call : calls) {
    llvm::IRBuilder<> b(call);
    const bool isMax = call->getIntrinsicID() == llvm::Intrinsic::maximum;
    llvm::Value* x = call->getArgOperand(0);
    llvm::Value* y = call->getArgOperand(1);
    llvm::Type* bits = b.getIntNTy(call->getType()->getPrimitiveSizeInBits());
    // Equal values differ only for zeros: max(+0, -0) is +0 (sign bits and-ed), min is -0.
    llvm::Value* xb = b.CreateBitCast(x, bits);
    llvm::Value* yb = b.CreateBitCast(y, bits);
    llvm::Value* tie =
        b.CreateBitCast(isMax ? b.CreateAnd(xb, yb) : b.CreateOr(xb, yb), call->getType());
    llvm::Value* pick = b.CreateSelect(isMax ? b.CreateFCmpOGT(x, y) : b.CreateFCmpOLT(x, y), x, y);
    llvm::Value* ordered = b.CreateSelect(b.CreateFCmpOEQ(x, y), tie, pick);
    llvm::Value* result = b.CreateSelect(b.CreateFCmpUNO(x, y), b.CreateFAdd(x, y), ordered);
    call->replaceAllUsesWith(result);
    call->eraseFromParent();
  }
}

} // namespace lathe::codegen
