#pragma once
// Rewrites for targets without floating-point hardware (Cortex-M0, M3): LLVM 19 cannot
// lower some float intrinsics to library calls there ("Do not know how to soften ...").
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

namespace lathe::codegen {

// True when `machine` does float arithmetic in software (an Arm core without a VFP unit).
bool softFloatTarget(const llvm::TargetMachine& machine);

// Replaces llvm.minimum / llvm.maximum on scalars by compares and selects with the same
// meaning (NaN propagates, -0 < +0).
void expandFloatMinMax(llvm::Module& module);

} // namespace lathe::codegen
