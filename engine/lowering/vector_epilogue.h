#pragma once
// The fused epilogue on vectors: schedules that keep results in vector registers apply it to
// a whole register before storing it, instead of a second scalar pass over the output.
#include "engine/lowering/op_rules.h"

#include <map>
#include <string>

namespace lathe::lowering {

// `finish` (the fused epilogue, or a rule's own finish such as Gemm's alpha and C) built once
// on scalar placeholders and widened to `lanes` consecutive outputs along the last index:
// that index becomes a ramp, and what does not depend on it (bias, Clip bounds, operands
// broadcast along it) is broadcast.
class VectorEpilogue {
public:
  VectorEpilogue(KernelBuilder& kb, const Epilogue& finish, graph::DType dtype, std::size_t rank,
                 int lanes);

  // False when the epilogue has no vector form (an extern call); use the scalar one then.
  bool defined() const { return widened_.defined(); }
  // The stored vector for `value` (lanes wide) at outputs outIndex .. outIndex + lanes - 1
  // along the last index.
  Expr operator()(const Expr& value, const std::vector<Expr>& outIndex) const;

private:
  Expr widened_;
  Expr value_;                     // the vector placeholder of the value
  int valueUses_ = 0;              // how many times the widened epilogue reads it
  std::vector<std::string> index_; // scalar placeholders of the index (the last: the first lane)
};

} // namespace lathe::lowering
