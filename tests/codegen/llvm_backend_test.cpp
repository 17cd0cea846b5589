// The LLVM plumbing on its own: build a small function with IRBuilder, optimise it, run it
// in the JIT, and emit assembly for every cross target Lathe offers.
#include "engine/codegen/llvm/codegen.h"
#include "engine/codegen/llvm/llvm_backend.h"
#include "engine/support/diagnostics.h"

#include <gtest/gtest.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Transforms/Utils/Cloning.h>

namespace lathe::codegen {
namespace {

// void axpy(float* y, const float* x, float a, i64 n) { for i < n: y[i] += a * x[i]; }
std::unique_ptr<llvm::Module> makeAxpy(llvm::LLVMContext& ctx) {
  auto module = std::make_unique<llvm::Module>("axpy", ctx);
  llvm::IRBuilder<> b(ctx);
  auto* ptr = b.getPtrTy();
  auto* fnType =
      llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, b.getFloatTy(), b.getInt64Ty()}, false);
  auto* fn = llvm::Function::Create(fnType, llvm::Function::ExternalLinkage, "axpy", *module);
  fn->addParamAttr(0, llvm::Attribute::NoAlias);
  fn->addParamAttr(1, llvm::Attribute::NoAlias);
  auto* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  auto* loop = llvm::BasicBlock::Create(ctx, "loop", fn);
  auto* done = llvm::BasicBlock::Create(ctx, "done", fn);
  b.SetInsertPoint(entry);
  b.CreateCondBr(b.CreateICmpSGT(fn->getArg(3), b.getInt64(0)), loop, done);
  b.SetInsertPoint(loop);
  auto* i = b.CreatePHI(b.getInt64Ty(), 2, "i");
  i->addIncoming(b.getInt64(0), entry);
  auto* xp = b.CreateGEP(b.getFloatTy(), fn->getArg(1), i);
  auto* yp = b.CreateGEP(b.getFloatTy(), fn->getArg(0), i);
  auto* sum = b.CreateFAdd(b.CreateLoad(b.getFloatTy(), yp),
                           b.CreateFMul(fn->getArg(2), b.CreateLoad(b.getFloatTy(), xp)));
  b.CreateStore(sum, yp);
  auto* next = b.CreateAdd(i, b.getInt64(1));
  i->addIncoming(next, loop);
  b.CreateCondBr(b.CreateICmpSLT(next, fn->getArg(3)), loop, done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
  EXPECT_FALSE(llvm::verifyModule(*module, &llvm::errs()));
  return module;
}

TEST(LlvmBackend, JitRunsOptimisedCode) {
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto module = makeAxpy(*ctx);
  auto machine = createTargetMachine(target::parseTarget("llvm"));
  optimizeModule(*module, *machine, 3);
  const std::string ir = moduleText(*module);
  EXPECT_NE(ir.find("<8 x float>"), std::string::npos) << "the loop should be vectorised";
  LlvmJit jit(target::parseTarget("llvm"));
  jit.addModule(std::move(module), std::move(ctx));
  auto* axpy =
      reinterpret_cast<void (*)(float*, const float*, float, std::int64_t)>(jit.lookup("axpy"));
  std::vector<float> x(1003), y(1003, 1.0f);
  for (std::size_t k = 0; k < x.size(); ++k)
    x[k] = static_cast<float>(k);
  axpy(y.data(), x.data(), 2.0f, static_cast<std::int64_t>(x.size()));
  for (std::size_t k = 0; k < y.size(); ++k)
    ASSERT_EQ(y[k], 1.0f + 2.0f * static_cast<float>(k)) << k;
  EXPECT_THROW(jit.lookup("missing"), Error);
}

struct CrossCase {
  const char* target;
  const char* mnemonic; // an instruction the vectorised loop must contain
};

class CrossTarget : public ::testing::TestWithParam<CrossCase> {};

TEST_P(CrossTarget, EmitsAssemblyAndObjects) {
  llvm::LLVMContext ctx;
  auto module = makeAxpy(ctx);
  const auto t = target::parseTarget(GetParam().target);
  ASSERT_TRUE(targetAvailable(t));
  auto machine = createTargetMachine(t);
  optimizeModule(*module, *machine, 3);
  auto copy = llvm::CloneModule(*module);
  const std::string assembly = emitAssembly(*module, *machine);
  EXPECT_NE(assembly.find(GetParam().mnemonic), std::string::npos) << assembly;
  const std::string object = emitObject(*copy, *machine);
  EXPECT_GT(object.size(), 100u);
}

INSTANTIATE_TEST_SUITE_P(
    Targets, CrossTarget,
    // a*x + y becomes one fused multiply-add where the target has one (AllowFPOpFusion).
    ::testing::Values(CrossCase{"llvm -mtriple=x86_64-linux-gnu -mcpu=haswell", "vfmadd"},
                      CrossCase{"llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512", "vfmadd"},
                      CrossCase{"llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1", "fmla\tv"},
                      // The ARM backend keeps separate vmul/vadd on Cortex-M33's FPU.
                      CrossCase{"llvm -mtriple=thumbv8m.main-none-eabi -mcpu=cortex-m33",
                                "vmul.f32"},
                      CrossCase{"llvm -mtriple=wasm32-unknown-unknown -mattr=+simd128", "f32x4"}));

TEST(Target, ParseAndPrint) {
  const auto t = target::parseTarget("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1 -O2");
  EXPECT_EQ(t.triple, "aarch64-linux-gnu");
  EXPECT_EQ(t.optLevel, 2);
  EXPECT_EQ(target::parseTarget(t.text()).text(), t.text());
  EXPECT_THROW(target::parseTarget("llvm -mfoo=bar"), Error);
  EXPECT_THROW(target::parseTarget("gpu"), Error);
  EXPECT_EQ(target::parseTarget("cuda").arch, "sm_90");
  EXPECT_FALSE(targetAvailable(target::parseTarget("llvm -mtriple=nonsense-unknown-none")));
  EXPECT_FALSE(hostCpuName().empty());
}

} // namespace
} // namespace lathe::codegen
