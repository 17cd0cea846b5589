#include "engine/codegen/llvm/kernel_emitter.h"

#include "engine/codegen/llvm/llvm_math.h"
#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/ir_visitor.h"
#include "engine/support/diagnostics.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/MDBuilder.h>
#include <map>
#include <set>
#include <unordered_map>

namespace lathe::codegen {
namespace {

using loop::Expr;
using loop::ExprKind;
using loop::Stmt;
using loop::StmtKind;

[[noreturn]] void unsupported(const std::string& what) {
  throw Error(ErrorKind::Unsupported, "code generation: " + what);
}

// Collects the names of variables and buffers a statement refers to.
class FreeNames : public loop::IRVisitor {
public:
  std::set<std::string> vars, buffers;

protected:
  void visitVar(const loop::Var* op) override { vars.insert(op->name); }
  void visitLoad(const loop::Load* op) override {
    buffers.insert(op->buffer.name());
    loop::IRVisitor::visitLoad(op);
  }
  void visitStore(const loop::Store* op) override {
    buffers.insert(op->buffer.name());
    loop::IRVisitor::visitStore(op);
  }
};

class Emitter {
public:
  Emitter(llvm::Module& module, KernelDebugInfo* debug, const loop::StmtLines* lines)
      : module_(module), ctx_(module.getContext()), b_(ctx_), debug_(debug), lines_(lines) {}

  // A CUDA kernel: the parameters are the buffers' device addresses, and the function is
  // marked as an entry point for NVPTX.
  void emitGpu(const loop::Kernel& kernel) {
    gpu_ = true;
    const std::vector<loop::Buffer> params = kernel.parameters();
    std::vector<llvm::Type*> paramTypes(params.size(), b_.getPtrTy());
    auto* type = llvm::FunctionType::get(b_.getVoidTy(), paramTypes, false);
    auto* fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, kernel.name, module_);
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    for (std::size_t i = 0; i < params.size(); ++i) {
      fn->addParamAttr(static_cast<unsigned>(i), llvm::Attribute::NoAlias);
      fn->getArg(static_cast<unsigned>(i))->setName(params[i].name());
      buffers_[params[i].name()] = {params[i], fn->getArg(static_cast<unsigned>(i))};
    }
    fn_ = fn;
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn));
    emitStmt(kernel.body);
    b_.CreateRetVoid();
    llvm::NamedMDNode* annotations = module_.getOrInsertNamedMetadata("nvvm.annotations");
    annotations->addOperand(llvm::MDNode::get(
        ctx_, {llvm::ValueAsMetadata::get(fn), llvm::MDString::get(ctx_, "kernel"),
               llvm::ConstantAsMetadata::get(b_.getInt32(1))}));
  }

  void emit(const loop::Kernel& kernel) {
    if (debug_)
      file_ = debug_->builder().createFile(kernel.name + ".loop", "lathe");
    const std::vector<loop::Buffer> params = kernel.parameters();
    // The body lives in <name>_body(ptr noalias ...), inlined into the void**-ABI wrapper:
    // inlining turns the noalias parameters into alias scopes the vectoriser can use.
    std::vector<llvm::Type*> paramTypes(params.size(), b_.getPtrTy());
    auto* bodyType = llvm::FunctionType::get(b_.getVoidTy(), paramTypes, false);
    auto* body = llvm::Function::Create(bodyType, llvm::Function::InternalLinkage,
                                        kernel.name + "_body", module_);
    body->addFnAttr(llvm::Attribute::AlwaysInline);
    body->addFnAttr(llvm::Attribute::NoUnwind);
    for (std::size_t i = 0; i < params.size(); ++i) {
      body->addParamAttr(static_cast<unsigned>(i), llvm::Attribute::NoAlias);
      body->getArg(static_cast<unsigned>(i))->setName(params[i].name());
    }
    fn_ = body;
    enterFunction(body, 1);
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", body));
    for (std::size_t i = 0; i < params.size(); ++i)
      buffers_[params[i].name()] = {params[i], body->getArg(static_cast<unsigned>(i))};
    emitStmt(kernel.body);
    b_.CreateRetVoid();

    auto* wrapperType = llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy()}, false);
    auto* wrapper =
        llvm::Function::Create(wrapperType, llvm::Function::ExternalLinkage, kernel.name, module_);
    wrapper->addFnAttr(llvm::Attribute::NoUnwind);
    enterFunction(wrapper, 1); // the call to the body must have a location to be inlined
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", wrapper));
    std::vector<llvm::Value*> args;
    for (std::size_t i = 0; i < params.size(); ++i) {
      llvm::Value* slot = b_.CreateConstGEP1_64(b_.getPtrTy(), wrapper->getArg(0), i);
      args.push_back(b_.CreateLoad(b_.getPtrTy(), slot, params[i].name()));
    }
    b_.CreateCall(body, args);
    b_.CreateRetVoid();
  }

private:
  // Gives `f` a debug scope of its own and makes its instructions start at `line`.
  void enterFunction(llvm::Function* f, int line) {
    if (!debug_)
      return;
    llvm::DIBuilder& dib = debug_->builder();
    auto* type = dib.createSubroutineType(dib.getOrCreateTypeArray({}));
    scope_ = dib.createFunction(
        file_, f->getName(), f->getName(), file_, static_cast<unsigned>(line), type,
        static_cast<unsigned>(line), llvm::DINode::FlagPrototyped,
        llvm::DISubprogram::SPFlagDefinition | llvm::DISubprogram::SPFlagOptimized);
    f->setSubprogram(scope_);
    b_.SetCurrentDebugLocation(llvm::DILocation::get(ctx_, static_cast<unsigned>(line), 1, scope_));
  }

  // The line of loop IR `s` starts on, or 0.
  int lineOf(const Stmt& s) const {
    if (!lines_ || !s.defined())
      return 0;
    const auto it = lines_->find(s.get());
    return it == lines_->end() ? 0 : it->second;
  }

  struct BufferInfo {
    loop::Buffer buffer;
    llvm::Value* base;
  };

  // --- types ---
  llvm::Type* scalarType(loop::Type t) {
    switch (t.code()) {
    case loop::TypeCode::Float:
      return t.bits() == 16 ? b_.getHalfTy() : t.bits() == 64 ? b_.getDoubleTy() : b_.getFloatTy();
    case loop::TypeCode::Bool:
      return b_.getInt1Ty();
    default:
      return b_.getIntNTy(static_cast<unsigned>(t.bits()));
    }
  }
  llvm::Type* llvmType(loop::Type t) {
    llvm::Type* s = scalarType(t.element());
    return t.isVector() ? llvm::FixedVectorType::get(s, static_cast<unsigned>(t.lanes())) : s;
  }
  // In memory, bool is a byte.
  llvm::Type* memoryType(loop::Type t) {
    if (!t.isBool())
      return llvmType(t);
    return t.isVector()
               ? llvm::FixedVectorType::get(b_.getInt8Ty(), static_cast<unsigned>(t.lanes()))
               : static_cast<llvm::Type*>(b_.getInt8Ty());
  }

  // --- expressions ---
  llvm::Value* emitExpr(const Expr& e) {
    const loop::Type t = e.type();
    switch (e.kind()) {
    case ExprKind::IntImm: {
      const auto* op = e.as<loop::IntImm>();
      if (t.isBool())
        return b_.getInt1(op->value != 0);
      return llvm::ConstantInt::get(scalarType(t), static_cast<std::uint64_t>(op->value),
                                    t.isInt());
    }
    case ExprKind::FloatImm:
      return llvm::ConstantFP::get(scalarType(t), e.as<loop::FloatImm>()->value);
    case ExprKind::Var: {
      auto it = vars_.find(e.as<loop::Var>()->name);
      if (it == vars_.end())
        unsupported("variable '" + e.as<loop::Var>()->name + "' is used outside its scope");
      return it->second;
    }
    case ExprKind::Add:
      return arith(e, llvm::Instruction::Add, llvm::Instruction::FAdd);
    case ExprKind::Sub:
      return arith(e, llvm::Instruction::Sub, llvm::Instruction::FSub);
    case ExprKind::Mul:
      return arith(e, llvm::Instruction::Mul, llvm::Instruction::FMul);
    case ExprKind::Div:
      if (!t.isFloat())
        return intDivMod(e, true);
      return arith(e, llvm::Instruction::UDiv, llvm::Instruction::FDiv);
    case ExprKind::Mod:
      if (!t.isFloat())
        return intDivMod(e, false);
      return arith(e, llvm::Instruction::URem, llvm::Instruction::FRem);
    case ExprKind::FloorDiv:
      return floorDivMod(e, true);
    case ExprKind::FloorMod:
      return floorDivMod(e, false);
    case ExprKind::Min:
      return minMax(e, true);
    case ExprKind::Max:
      return minMax(e, false);
    case ExprKind::EQ:
    case ExprKind::NE:
    case ExprKind::LT:
    case ExprKind::LE:
    case ExprKind::GT:
    case ExprKind::GE:
      return compare(e);
    case ExprKind::And: {
      const auto* op = static_cast<const loop::BinaryExprNode*>(e.get());
      return b_.CreateAnd(emitExpr(op->a), emitExpr(op->b));
    }
    case ExprKind::Or: {
      const auto* op = static_cast<const loop::BinaryExprNode*>(e.get());
      return b_.CreateOr(emitExpr(op->a), emitExpr(op->b));
    }
    case ExprKind::Not:
      return b_.CreateNot(emitExpr(e.as<loop::Not>()->a));
    case ExprKind::Select: {
      const auto* op = e.as<loop::Select>();
      return b_.CreateSelect(emitExpr(op->condition), emitExpr(op->trueValue),
                             emitExpr(op->falseValue));
    }
    case ExprKind::Cast:
      return cast(e.as<loop::Cast>()->value, t);
    case ExprKind::Load:
      return load(*e.as<loop::Load>());
    case ExprKind::Ramp: {
      const auto* op = e.as<loop::Ramp>();
      llvm::Value* base =
          b_.CreateVectorSplat(static_cast<unsigned>(op->lanes), emitExpr(op->base));
      llvm::Value* stride =
          b_.CreateVectorSplat(static_cast<unsigned>(op->lanes), emitExpr(op->stride));
      std::vector<llvm::Constant*> steps;
      for (int i = 0; i < op->lanes; ++i)
        steps.push_back(
            llvm::ConstantInt::get(scalarType(t.element()), static_cast<std::uint64_t>(i)));
      return b_.CreateAdd(base, b_.CreateMul(stride, llvm::ConstantVector::get(steps)));
    }
    case ExprKind::Broadcast: {
      const auto* op = e.as<loop::Broadcast>();
      return b_.CreateVectorSplat(static_cast<unsigned>(op->lanes), emitExpr(op->value));
    }
    case ExprKind::Call:
      return call(*e.as<loop::Call>());
    case ExprKind::Let: {
      const auto* op = e.as<loop::Let>();
      llvm::Value* value = emitExpr(op->value);
      auto saved = bind(op->name(), value);
      llvm::Value* result = emitExpr(op->body);
      restore(op->name(), saved);
      return result;
    }
    }
    unsupported(std::string("expression ") + loop::exprKindName(e.kind()));
  }

  llvm::Value* arith(const Expr& e, llvm::Instruction::BinaryOps intOp,
                     llvm::Instruction::BinaryOps floatOp) {
    const auto* op = static_cast<const loop::BinaryExprNode*>(e.get());
    llvm::Value* a = emitExpr(op->a);
    llvm::Value* b = emitExpr(op->b);
    return b_.CreateBinOp(e.type().isFloat() ? floatOp : intOp, a, b);
  }

  // Integer division that never traps: a divisor of 0 gives 0 (quotient and remainder, as
  // numpy does), and the signed MIN / -1 wraps to MIN with remainder 0, where the hardware
  // would raise SIGFPE on data from a model or its inputs. With a constant divisor (all
  // index arithmetic) LLVM folds the guards away.
  struct QuotientRemainder {
    llvm::Value* q;
    llvm::Value* r;
  };
  QuotientRemainder safeDivRem(llvm::Value* a, llvm::Value* b, bool isUnsigned) {
    llvm::Type* type = a->getType();
    llvm::Value* zero = llvm::Constant::getNullValue(type);
    llvm::Value* one = llvm::ConstantInt::get(type, 1);
    llvm::Value* isZero = b_.CreateICmpEQ(b, zero);
    if (isUnsigned) {
      llvm::Value* safe = b_.CreateSelect(isZero, one, b);
      return {b_.CreateSelect(isZero, zero, b_.CreateUDiv(a, safe)),
              b_.CreateSelect(isZero, zero, b_.CreateURem(a, safe))};
    }
    llvm::Value* isMinusOne = b_.CreateICmpEQ(b, llvm::ConstantInt::get(type, -1, true));
    llvm::Value* special = b_.CreateOr(isZero, isMinusOne);
    llvm::Value* safe = b_.CreateSelect(special, one, b);
    llvm::Value* q = b_.CreateSelect(isMinusOne, b_.CreateSub(zero, a), b_.CreateSDiv(a, safe));
    return {b_.CreateSelect(isZero, zero, q),
            b_.CreateSelect(special, zero, b_.CreateSRem(a, safe))};
  }

  llvm::Value* intDivMod(const Expr& e, bool div) {
    const auto* op = static_cast<const loop::BinaryExprNode*>(e.get());
    const QuotientRemainder qr =
        safeDivRem(emitExpr(op->a), emitExpr(op->b), e.type().isUInt() || e.type().isBool());
    return div ? qr.q : qr.r;
  }

  // Division rounding toward -inf (index arithmetic with negative values).
  llvm::Value* floorDivMod(const Expr& e, bool div) {
    const auto* op = static_cast<const loop::BinaryExprNode*>(e.get());
    llvm::Value* a = emitExpr(op->a);
    llvm::Value* b = emitExpr(op->b);
    if (e.type().isFloat()) {
      llvm::Value* q = b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, b_.CreateFDiv(a, b));
      return div ? q : b_.CreateFSub(a, b_.CreateFMul(q, b));
    }
    const QuotientRemainder qr = safeDivRem(a, b, e.type().isUInt());
    if (e.type().isUInt())
      return div ? qr.q : qr.r;
    llvm::Value* q = qr.q;
    llvm::Value* r = qr.r;
    llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
    // Adjust when the remainder is non-zero and its sign differs from the divisor's.
    llvm::Value* adjust =
        b_.CreateAnd(b_.CreateICmpNE(r, zero),
                     b_.CreateICmpNE(b_.CreateICmpSLT(r, zero), b_.CreateICmpSLT(b, zero)));
    if (div)
      return b_.CreateSub(q, b_.CreateZExt(adjust, q->getType()));
    return b_.CreateSelect(adjust, b_.CreateAdd(r, b), r);
  }

  llvm::Value* minMax(const Expr& e, bool isMin) {
    const auto* op = static_cast<const loop::BinaryExprNode*>(e.get());
    llvm::Value* a = emitExpr(op->a);
    llvm::Value* b = emitExpr(op->b);
    const loop::Type t = op->a.type();
    if (t.isFloat()) {
      // NaN propagates, as numpy.minimum/maximum and ONNX Min/Max do.
      return b_.CreateBinaryIntrinsic(isMin ? llvm::Intrinsic::minimum : llvm::Intrinsic::maximum,
                                      a, b);
    }
    llvm::Value* less = t.isUInt() ? b_.CreateICmpULT(a, b) : b_.CreateICmpSLT(a, b);
    if (t.isBool())
      less = b_.CreateICmpULT(a, b);
    return isMin ? b_.CreateSelect(less, a, b) : b_.CreateSelect(less, b, a);
  }

  llvm::Value* compare(const Expr& e) {
    const auto* op = static_cast<const loop::BinaryExprNode*>(e.get());
    llvm::Value* a = emitExpr(op->a);
    llvm::Value* b = emitExpr(op->b);
    const loop::Type t = op->a.type();
    using P = llvm::CmpInst::Predicate;
    P p;
    if (t.isFloat()) {
      switch (e.kind()) {
      case ExprKind::EQ:
        p = P::FCMP_OEQ;
        break;
      case ExprKind::NE:
        p = P::FCMP_UNE;
        break;
      case ExprKind::LT:
        p = P::FCMP_OLT;
        break;
      case ExprKind::LE:
        p = P::FCMP_OLE;
        break;
      case ExprKind::GT:
        p = P::FCMP_OGT;
        break;
      default:
        p = P::FCMP_OGE;
        break;
      }
      return b_.CreateFCmp(p, a, b);
    }
    const bool u = t.isUInt() || t.isBool();
    switch (e.kind()) {
    case ExprKind::EQ:
      p = P::ICMP_EQ;
      break;
    case ExprKind::NE:
      p = P::ICMP_NE;
      break;
    case ExprKind::LT:
      p = u ? P::ICMP_ULT : P::ICMP_SLT;
      break;
    case ExprKind::LE:
      p = u ? P::ICMP_ULE : P::ICMP_SLE;
      break;
    case ExprKind::GT:
      p = u ? P::ICMP_UGT : P::ICMP_SGT;
      break;
    default:
      p = u ? P::ICMP_UGE : P::ICMP_SGE;
      break;
    }
    return b_.CreateICmp(p, a, b);
  }

  llvm::Value* cast(const Expr& valueExpr, loop::Type to) {
    const loop::Type from = valueExpr.type();
    llvm::Value* v = emitExpr(valueExpr);
    llvm::Type* target = llvmType(to);
    if (from == to)
      return v;
    if (to.isBool()) {
      llvm::Value* zero = llvm::Constant::getNullValue(v->getType());
      return from.isFloat() ? b_.CreateFCmpUNE(v, zero) : b_.CreateICmpNE(v, zero);
    }
    if (from.isBool())
      return to.isFloat() ? b_.CreateUIToFP(v, target) : b_.CreateZExt(v, target);
    if (from.isFloat() && to.isFloat())
      return b_.CreateFPCast(v, target);
    if (from.isFloat())
      return to.isUInt() ? b_.CreateFPToUI(v, target) : b_.CreateFPToSI(v, target);
    if (to.isFloat())
      return from.isUInt() ? b_.CreateUIToFP(v, target) : b_.CreateSIToFP(v, target);
    return b_.CreateIntCast(v, target, from.isInt());
  }

  // A Ramp with stride 1 is a contiguous vector access.
  static bool isDenseRamp(const Expr& index) {
    const auto* ramp = index.as<loop::Ramp>();
    if (!ramp)
      return false;
    const auto* stride = ramp->stride.as<loop::IntImm>();
    return stride && stride->value == 1;
  }

  // The stride of a Ramp index with a small constant stride (2 to 4), else 0.
  static std::int64_t smallStride(const Expr& index) {
    const auto* ramp = index.as<loop::Ramp>();
    const auto* stride = ramp ? ramp->stride.as<loop::IntImm>() : nullptr;
    return stride && stride->value >= 2 && stride->value <= 4 ? stride->value : 0;
  }

  // A load of every stride-th element: one contiguous load of the span they cover (masked,
  // so that it reads no element past the last one) and a shuffle, instead of a gather.
  llvm::Value* stridedLoad(const loop::Load& op, std::int64_t stride) {
    const loop::Type t = op.type;
    llvm::Type* elementMem = memoryType(t.element());
    const unsigned lanes = static_cast<unsigned>(t.lanes());
    const unsigned wide = lanes * static_cast<unsigned>(stride);
    const unsigned span = (lanes - 1) * static_cast<unsigned>(stride) + 1;
    std::vector<llvm::Constant*> mask;
    for (unsigned i = 0; i < wide; ++i)
      mask.push_back(b_.getInt1(i < span));
    auto* wideType = llvm::FixedVectorType::get(elementMem, wide);
    llvm::Value* ptr = address(op.buffer, op.index.as<loop::Ramp>()->base, elementMem);
    llvm::Value* all = b_.CreateMaskedLoad(wideType, ptr, llvm::Align(t.element().bytes()),
                                           llvm::ConstantVector::get(mask));
    std::vector<int> picks;
    for (unsigned i = 0; i < lanes; ++i)
      picks.push_back(static_cast<int>(i * static_cast<unsigned>(stride)));
    return b_.CreateShuffleVector(all, picks);
  }

  llvm::Value* address(const loop::Buffer& buffer, const Expr& scalarIndex, llvm::Type* element) {
    const BufferInfo& info = bufferInfo(buffer);
    return b_.CreateInBoundsGEP(element, info.base, emitExpr(scalarIndex));
  }

  llvm::Value* load(const loop::Load& op) {
    const loop::Type t = op.type;
    llvm::Type* elementMem = memoryType(t.element());
    llvm::Value* value;
    if (t.isScalar()) {
      value = b_.CreateLoad(elementMem, address(op.buffer, op.index, elementMem));
    } else if (isDenseRamp(op.index)) {
      // Buffers are only known to be aligned to their element size.
      value = b_.CreateAlignedLoad(memoryType(t),
                                   address(op.buffer, op.index.as<loop::Ramp>()->base, elementMem),
                                   llvm::Align(t.element().bytes()));
    } else if (const std::int64_t stride = smallStride(op.index); stride > 1) {
      value = stridedLoad(op, stride);
    } else { // general vector index: a gather
      llvm::Value* ptrs =
          b_.CreateInBoundsGEP(elementMem, bufferInfo(op.buffer).base, emitExpr(op.index));
      value = b_.CreateMaskedGather(memoryType(t), ptrs, llvm::Align(t.element().bytes()));
    }
    if (t.isBool())
      value = b_.CreateICmpNE(value, llvm::Constant::getNullValue(value->getType()));
    return value;
  }

  llvm::Value* call(const loop::Call& op) {
    std::vector<llvm::Value*> args;
    for (const Expr& a : op.args)
      args.push_back(emitExpr(a));
    using I = loop::Intrinsic;
    const bool isFloat = op.type.isFloat();
    switch (op.op) {
    case I::Sqrt:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, args[0]);
    case I::Rsqrt:
      return b_.CreateFDiv(llvm::ConstantFP::get(args[0]->getType(), 1.0),
                           b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, args[0]));
    case I::Abs:
      if (isFloat)
        return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, args[0]);
      return b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, args[0], b_.getFalse());
    case I::Floor:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, args[0]);
    case I::Ceil:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, args[0]);
    case I::Round:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, args[0]);
    case I::Trunc:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, args[0]);
    case I::Fma:
      return b_.CreateIntrinsic(llvm::Intrinsic::fma, {args[0]->getType()}, args);
    case I::Extern: {
      if (op.name == loop::kBitcast)
        return b_.CreateBitCast(args[0], llvmType(op.type));
      if (gpu_)
        unsupported("a call to '" + op.name + "', which has no GPU version");
      std::vector<llvm::Type*> types;
      for (llvm::Value* a : args)
        types.push_back(a->getType());
      auto callee = module_.getOrInsertFunction(
          op.name, llvm::FunctionType::get(llvmType(op.type), types, false));
      return b_.CreateCall(callee, args);
    }
    default:
      return math::emitIntrinsic(b_, loop::intrinsicName(op.op), args);
    }
  }

  // --- statements ---
  void emitStmt(const Stmt& s) {
    if (!s.defined())
      return;
    // The statement's instructions carry its loop IR line; what follows it (a loop's latch)
    // goes back to the enclosing statement's.
    const llvm::DebugLoc outer = b_.getCurrentDebugLocation();
    if (const int line = debug_ ? lineOf(s) : 0; line > 0 && s.kind() != StmtKind::Block)
      b_.SetCurrentDebugLocation(
          llvm::DILocation::get(ctx_, static_cast<unsigned>(line), 1, scope_));
    emitStmtAt(s);
    b_.SetCurrentDebugLocation(outer);
  }

  void emitStmtAt(const Stmt& s) {
    switch (s.kind()) {
    case StmtKind::For:
      emitFor(*s.as<loop::For>());
      return;
    case StmtKind::Store:
      emitStore(*s.as<loop::Store>());
      return;
    case StmtKind::Allocate:
      emitAllocate(*s.as<loop::Allocate>());
      return;
    case StmtKind::Block:
      for (const Stmt& child : s.as<loop::Block>()->stmts)
        emitStmt(child);
      return;
    case StmtKind::IfThenElse:
      emitIf(*s.as<loop::IfThenElse>());
      return;
    case StmtKind::LetStmt: {
      const auto* op = s.as<loop::LetStmt>();
      auto saved = bind(op->name(), emitExpr(op->value));
      emitStmt(op->body);
      restore(op->name(), saved);
      return;
    }
    case StmtKind::Evaluate:
      emitExpr(s.as<loop::Evaluate>()->value);
      return;
    case StmtKind::Barrier:
      if (!gpu_)
        unsupported("a block barrier, which only CUDA targets have");
      b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
      return;
    }
  }

  void emitStore(const loop::Store& op) {
    const loop::Type t = op.value.type();
    llvm::Value* value = emitExpr(op.value);
    if (t.isBool())
      value = b_.CreateZExt(value, memoryType(t));
    llvm::Type* elementMem = memoryType(t.element());
    if (t.isScalar()) {
      b_.CreateStore(value, address(op.buffer, op.index, elementMem));
    } else if (isDenseRamp(op.index)) {
      b_.CreateAlignedStore(value, address(op.buffer, op.index.as<loop::Ramp>()->base, elementMem),
                            llvm::Align(t.element().bytes()));
    } else {
      llvm::Value* ptrs =
          b_.CreateInBoundsGEP(elementMem, bufferInfo(op.buffer).base, emitExpr(op.index));
      b_.CreateMaskedScatter(value, ptrs, llvm::Align(t.element().bytes()));
    }
  }

  void emitAllocate(const loop::Allocate& op) {
    llvm::Value* count = b_.getInt64(1);
    for (const Expr& d : op.buffer.shape())
      count = b_.CreateMul(count, emitExpr(d));
    llvm::Type* element = memoryType(op.buffer.elementType());
    llvm::Value* base;
    if (op.scope == loop::MemoryScope::Shared) {
      // Static shared memory: a global in NVPTX's address space 3, one per block. Used
      // through a generic pointer; LLVM's address-space inference gives back ld/st.shared.
      if (!gpu_)
        unsupported("the shared buffer '" + op.buffer.name() + "', which only CUDA targets have");
      const auto* n = llvm::dyn_cast<llvm::ConstantInt>(count);
      if (!n)
        unsupported("shared buffer '" + op.buffer.name() + "' needs a constant size");
      auto* type = llvm::ArrayType::get(element, n->getZExtValue());
      auto* global = new llvm::GlobalVariable(
          module_, type, false, llvm::GlobalValue::InternalLinkage, llvm::UndefValue::get(type),
          fn_->getName() + "." + op.buffer.name(), nullptr, llvm::GlobalValue::NotThreadLocal,
          /*AddressSpace=*/3);
      global->setAlignment(llvm::Align(16));
      base = b_.CreateAddrSpaceCast(global, b_.getPtrTy());
    } else if (op.scope == loop::MemoryScope::Stack) {
      // Allocas in the entry block are promoted and not re-allocated per iteration.
      llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
      if (!llvm::isa<llvm::ConstantInt>(count))
        unsupported("stack allocation '" + op.buffer.name() + "' needs a constant size");
      auto* a = entry.CreateAlloca(element, count, op.buffer.name());
      a->setAlignment(llvm::Align(64));
      base = a;
    } else {
      if (gpu_)
        unsupported("the heap buffer '" + op.buffer.name() + "' inside a GPU launch (only " +
                    "buffers allocated around a kernel's nests become device memory)");
      auto alloc = module_.getOrInsertFunction(
          "lathe_alloc", llvm::FunctionType::get(b_.getPtrTy(), {b_.getInt64Ty()}, false));
      llvm::Value* bytes = b_.CreateMul(count, b_.getInt64(element->getPrimitiveSizeInBits() / 8));
      base = b_.CreateCall(alloc, {bytes}, op.buffer.name());
    }
    auto saved = buffers_.find(op.buffer.name());
    std::optional<BufferInfo> previous;
    if (saved != buffers_.end())
      previous = saved->second;
    buffers_[op.buffer.name()] = {op.buffer, base};
    emitStmt(op.body);
    if (op.scope == loop::MemoryScope::Heap) {
      auto release = module_.getOrInsertFunction(
          "lathe_free", llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy()}, false));
      b_.CreateCall(release, {base});
    }
    if (previous)
      buffers_[op.buffer.name()] = *previous;
    else
      buffers_.erase(op.buffer.name());
  }

  void emitIf(const loop::IfThenElse& op) {
    llvm::Value* cond = emitExpr(op.condition);
    auto* thenBlock = llvm::BasicBlock::Create(ctx_, "then", fn_);
    auto* elseBlock = op.elseCase.defined() ? llvm::BasicBlock::Create(ctx_, "else", fn_) : nullptr;
    auto* after = llvm::BasicBlock::Create(ctx_, "endif", fn_);
    b_.CreateCondBr(cond, thenBlock, elseBlock ? elseBlock : after);
    b_.SetInsertPoint(thenBlock);
    emitStmt(op.thenCase);
    b_.CreateBr(after);
    if (elseBlock) {
      b_.SetInsertPoint(elseBlock);
      emitStmt(op.elseCase);
      b_.CreateBr(after);
    }
    b_.SetInsertPoint(after);
  }

  void emitFor(const loop::For& op) {
    if (loop::isGpuBound(op.forKind)) {
      if (!gpu_)
        unsupported("the loop '" + op.name() + "' is bound to " + loop::forKindName(op.forKind) +
                    ", which only CUDA targets have");
      emitBoundLoop(op);
      return;
    }
    if (op.forKind == loop::ForKind::Parallel) {
      if (gpu_)
        unsupported("the parallel loop '" + op.name() + "': parallel is for CPU threads; " +
                    "bind the loop to blockIdx/threadIdx on a GPU");
      emitParallelFor(op);
      return;
    }
    llvm::Value* lo = emitExpr(op.min);
    llvm::Value* hi = b_.CreateAdd(lo, emitExpr(op.extent));
    emitLoop(op.name(), lo, hi, op.body, op.forKind, op.extent);
  }

  // The launch has exactly extent blocks or threads on the loop's axis: each runs the body
  // once with the loop's variable at min + its index.
  void emitBoundLoop(const loop::For& op) {
    static constexpr llvm::Intrinsic::ID kIds[] = {
        llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
        llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x,
        llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y,   llvm::Intrinsic::nvvm_read_ptx_sreg_tid_z};
    const int which = (loop::isGpuBlock(op.forKind) ? 0 : 3) + loop::gpuAxis(op.forKind);
    llvm::Value* id = b_.CreateIntrinsic(kIds[which], {}, {});
    llvm::Value* value = b_.CreateAdd(emitExpr(op.min), b_.CreateZExt(id, b_.getInt64Ty()),
                                      op.name(), /*HasNUW=*/false, /*HasNSW=*/true);
    auto saved = bind(op.name(), value);
    emitStmt(op.body);
    restore(op.name(), saved);
  }

  // for (name = lo; name < hi; ++name) body
  void emitLoop(const std::string& name, llvm::Value* lo, llvm::Value* hi, const Stmt& body,
                loop::ForKind kind, const Expr& extent) {
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* header = llvm::BasicBlock::Create(ctx_, name + ".loop", fn_);
    auto* exit = llvm::BasicBlock::Create(ctx_, name + ".end", fn_);
    b_.CreateCondBr(b_.CreateICmpSLT(lo, hi), header, exit);
    b_.SetInsertPoint(header);
    llvm::PHINode* i = b_.CreatePHI(lo->getType(), 2, name);
    i->addIncoming(lo, pre);
    auto saved = bind(name, i);
    emitStmt(body);
    restore(name, saved);
    llvm::Value* next =
        b_.CreateAdd(i, llvm::ConstantInt::get(i->getType(), 1), name + ".next", true, true);
    i->addIncoming(next, b_.GetInsertBlock());
    auto* latch = b_.CreateCondBr(b_.CreateICmpSLT(next, hi), header, exit);
    addLoopMetadata(latch, kind, extent);
    b_.SetInsertPoint(exit);
  }

  void addLoopMetadata(llvm::Instruction* latch, loop::ForKind kind, const Expr& extent) {
    std::vector<llvm::Metadata*> ops{nullptr}; // the self reference
    auto flag = [&](const char* name, llvm::Metadata* value) {
      ops.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, name), value}));
    };
    if (kind == loop::ForKind::Vectorized) {
      flag("llvm.loop.vectorize.enable", llvm::ConstantAsMetadata::get(b_.getTrue()));
      if (const auto* e = extent.as<loop::IntImm>())
        flag("llvm.loop.vectorize.width",
             llvm::ConstantAsMetadata::get(b_.getInt32(static_cast<std::uint32_t>(e->value))));
    } else if (kind == loop::ForKind::Unrolled) {
      ops.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.unroll.full")}));
    } else {
      return;
    }
    llvm::MDNode* node = llvm::MDNode::getDistinct(ctx_, ops);
    node->replaceOperandWith(0, node);
    latch->setMetadata(llvm::LLVMContext::MD_loop, node);
  }

  // The body becomes `void <kernel>_par<k>(i64 begin, i64 end, ptr closure)`, called through
  // lathe_parallel_for with every variable and buffer it uses packed into the closure.
  void emitParallelFor(const loop::For& op) {
    FreeNames names;
    names.visit(op.body);
    struct Capture {
      std::string name;
      llvm::Value* value;
      bool isBuffer;
    };
    std::vector<Capture> captures;
    for (const std::string& v : names.vars)
      if (v != op.name() && vars_.count(v))
        captures.push_back({v, vars_.at(v), false});
    for (const std::string& bname : names.buffers)
      if (buffers_.count(bname))
        captures.push_back({bname, buffers_.at(bname).base, true});

    llvm::Value* lo = emitExpr(op.min);
    llvm::Value* extent = emitExpr(op.extent);
    // Pack the closure: one 8-byte slot per capture.
    llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
    auto* closure =
        entry.CreateAlloca(b_.getInt64Ty(), b_.getInt64(captures.size() + 1), "closure");
    b_.CreateStore(lo, b_.CreateConstGEP1_64(b_.getInt64Ty(), closure, 0));
    for (std::size_t k = 0; k < captures.size(); ++k) {
      llvm::Value* v = captures[k].value;
      if (!captures[k].isBuffer && v->getType()->getPrimitiveSizeInBits() > 64)
        unsupported("a vector value captured by a parallel loop");
      b_.CreateStore(v, b_.CreateConstGEP1_64(b_.getInt64Ty(), closure, k + 1));
    }

    auto* parType = llvm::FunctionType::get(
        b_.getVoidTy(), {b_.getInt64Ty(), b_.getInt64Ty(), b_.getPtrTy()}, false);
    auto* par =
        llvm::Function::Create(parType, llvm::Function::InternalLinkage,
                               fn_->getName() + "_par" + std::to_string(parallelCount_++), module_);
    par->addFnAttr(llvm::Attribute::NoUnwind);

    // Emit the outlined body with its own scope.
    llvm::Function* savedFn = fn_;
    llvm::BasicBlock* savedBlock = b_.GetInsertBlock();
    llvm::DISubprogram* savedScope = scope_;
    const llvm::DebugLoc savedLoc = b_.getCurrentDebugLocation();
    enterFunction(par, savedLoc ? static_cast<int>(savedLoc.getLine()) : 1);
    auto savedVars = vars_;
    auto savedBuffers = buffers_;
    fn_ = par;
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", par));
    llvm::Value* env = par->getArg(2);
    llvm::Value* parLo =
        b_.CreateLoad(b_.getInt64Ty(), b_.CreateConstGEP1_64(b_.getInt64Ty(), env, 0));
    vars_.clear();
    for (std::size_t k = 0; k < captures.size(); ++k) {
      llvm::Value* slot = b_.CreateConstGEP1_64(b_.getInt64Ty(), env, k + 1);
      if (captures[k].isBuffer) {
        // Buffers keep their no-alias promise inside the outlined body.
        llvm::Value* base = b_.CreateLoad(b_.getPtrTy(), slot, captures[k].name);
        buffers_[captures[k].name].base = base;
      } else {
        vars_[captures[k].name] =
            b_.CreateLoad(captures[k].value->getType(), slot, captures[k].name);
      }
    }
    llvm::Value* begin = b_.CreateAdd(parLo, par->getArg(0));
    llvm::Value* end = b_.CreateAdd(parLo, par->getArg(1));
    emitLoop(op.name(), begin, end, op.body, loop::ForKind::Serial, op.extent);
    b_.CreateRetVoid();
    fn_ = savedFn;
    vars_ = std::move(savedVars);
    buffers_ = std::move(savedBuffers);
    b_.SetInsertPoint(savedBlock);
    scope_ = savedScope;
    b_.SetCurrentDebugLocation(savedLoc);

    auto parallelFor = module_.getOrInsertFunction(
        "lathe_parallel_for",
        llvm::FunctionType::get(b_.getInt32Ty(), {b_.getInt64Ty(), b_.getPtrTy(), b_.getPtrTy()},
                                false));
    b_.CreateCall(parallelFor, {extent, par, closure});
  }

  // --- scopes ---
  std::optional<llvm::Value*> bind(const std::string& name, llvm::Value* value) {
    std::optional<llvm::Value*> previous;
    if (auto it = vars_.find(name); it != vars_.end())
      previous = it->second;
    vars_[name] = value;
    return previous;
  }
  void restore(const std::string& name, const std::optional<llvm::Value*>& previous) {
    if (previous)
      vars_[name] = *previous;
    else
      vars_.erase(name);
  }
  const BufferInfo& bufferInfo(const loop::Buffer& buffer) {
    auto it = buffers_.find(buffer.name());
    if (it == buffers_.end())
      unsupported("buffer '" + buffer.name() + "' is neither a parameter nor allocated");
    return it->second;
  }

  llvm::Module& module_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  KernelDebugInfo* debug_ = nullptr;
  const loop::StmtLines* lines_ = nullptr;
  llvm::DIFile* file_ = nullptr;
  llvm::DISubprogram* scope_ = nullptr;
  llvm::Function* fn_ = nullptr;
  std::unordered_map<std::string, llvm::Value*> vars_;
  std::unordered_map<std::string, BufferInfo> buffers_;
  int parallelCount_ = 0;
  bool gpu_ = false;
};

} // namespace

KernelDebugInfo::KernelDebugInfo(llvm::Module& module) : builder_(module) {
  unit_ =
      builder_.createCompileUnit(llvm::dwarf::DW_LANG_C, builder_.createFile("kernels", "lathe"),
                                 "lathe", /*isOptimized=*/true, "", 0);
  module.addModuleFlag(llvm::Module::Warning, "Debug Info Version", llvm::DEBUG_METADATA_VERSION);
  module.addModuleFlag(llvm::Module::Warning, "Dwarf Version", 4);
}

void KernelDebugInfo::finalize() {
  builder_.finalize();
}

void emitKernel(const loop::Kernel& kernel, llvm::Module& module, KernelDebugInfo* debug,
                const loop::StmtLines* lines) {
  Emitter(module, debug, lines).emit(kernel);
}

void emitGpuKernel(const loop::Kernel& kernel, llvm::Module& module) {
  Emitter(module, nullptr, nullptr).emitGpu(kernel);
}

} // namespace lathe::codegen
