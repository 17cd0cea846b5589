#pragma once
// Lathe's own elementwise math, emitted as LLVM IR. Generated kernels must not call libm:
// a call stops the loop vectoriser and bare-metal targets have no libm to call. Every
// function below takes a `float` or a fixed `<N x float>` value (one code path for any N)
// and returns a value of the same type, built only from IR that the loop and SLP
// vectorisers handle: arithmetic, fcmp/select, bitcasts and integer ops on the bit
// pattern, and the llvm.fmuladd/fabs/copysign intrinsics (not llvm.floor or llvm.rint,
// which SSE2 lacks: they would become floorf/rintf calls there). There are no loops, calls
// or lookup tables (a table would need gathers).
//
// Polynomials use llvm.fmuladd, not llvm.fma: targets without a fused multiply-add
// (wasm32 SIMD, older x86) lower llvm.fma to a call to libm's fmaf, while fmuladd becomes
// a multiply and an add there. No result depends on fusion: the accuracies below hold
// with and without it (the tests check both on x86 hosts). Fast-math flags set on the
// builder are ignored inside these functions: the exact-rounding tricks rely on IEEE
// semantics.
//
// Measured maximum errors against the double-precision std:: function at the float input,
// over ~1e6 points each (tests/codegen/llvm_math_test.cpp; the larger of x86-64 with and
// without FMA):
//   exp     relative 8.3e-8 on [-87, 88]; +inf from 88.7228; results below 2^-126 underflow
//           gradually (subnormals within one subnormal ulp) unless the FPU flushes them to
//           zero (FTZ mode); 0 below -103.98; NaN gives NaN
//   exp2    relative 8.3e-8 on [-126, 127]; +inf from 128, subnormals as for exp, 0 from -150
//   log     relative 7.8e-8 on [1e-30, 1e30] and for subnormal inputs (unless the FPU treats
//           them as zero, DAZ: then -inf); log(+-0) = -inf, log(x < 0) = NaN, log(inf) = inf
//   log2    relative 9.7e-8, special values as for log; exact at powers of two
//   tanh    absolute 7.8e-8; relative 4.6e-8 for |x| < 1e-3; exactly odd; +-1 for |x| > 9
//   erf     absolute 1.1e-7 (relative 7e-8 for |x| < 0.5); exactly odd; +-1 for |x| > 4
//   sigmoid absolute 8.9e-8, relative 1.5e-7 on [-87, 87]; exactly 0 and 1 at the ends
//   pow     relative 2.0e-7 for x in (0, 1e6], y in [-10, 10]; 2.6e-7 for x < 0 and integer
//           y; C99 special cases (see llvm_math.cpp)
//   sin/cos absolute 8.2e-8 for |x| <= 1e5 (three-part Cody-Waite reduction by pi/2). Beyond
//           1e5 the reduction is no longer exact and the error grows about like |x| 2^-24
//           (6e-3 at 1.5e5, 0.13 at 2e6); |x| > 2^22, inf and NaN give NaN
//
// Includes LLVM headers; only engine/codegen/llvm may include it.

#include <llvm/ADT/ArrayRef.h>
#include <llvm/IR/IRBuilder.h>
#include <string_view>

namespace lathe::codegen::math {

// `x` (and `y`) must be float or <N x float>; anything else is an internal error.
llvm::Value* exp(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* exp2(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* log(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* log2(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* tanh(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* erf(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* sigmoid(llvm::IRBuilder<>& b, llvm::Value* x); // 1 / (1 + exp(-x))
llvm::Value* pow(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y);
llvm::Value* sin(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* cos(llvm::IRBuilder<>& b, llvm::Value* x);

// Whether emitIntrinsic knows `name` ("exp", "exp2", "log", "log2", "tanh", "erf",
// "sigmoid", "pow", "sin", "cos").
bool isKnownIntrinsic(std::string_view name);

// The code generator's entry point: applies the function `name` to `args` (one, or two for
// "pow"), all of one floating-point type, scalar or fixed vector.
//  - float: the functions above.
//  - half and bfloat: computed in float and rounded back.
//  - double: LLVM's own intrinsics (llvm.exp.f64, llvm.tanh.f64, ...), which may become
//    libm calls; acceptable for f64, which ML kernels rarely use. erf has no LLVM
//    intrinsic, so it calls libm's erf one lane at a time; sigmoid is 1 / (1 + llvm.exp(-x)).
// Throws lathe::Error (Unsupported) for an unknown name or an unsupported type.
llvm::Value* emitIntrinsic(llvm::IRBuilder<>& b, std::string_view name,
                           llvm::ArrayRef<llvm::Value*> args);

} // namespace lathe::codegen::math
