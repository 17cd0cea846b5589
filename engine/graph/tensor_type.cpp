#include "engine/graph/tensor_type.h"

#include "engine/support/diagnostics.h"

namespace lathe::graph {

TensorType TensorType::of(DType dtype, const std::vector<std::int64_t>& dims) {
  TensorType t;
  t.dtype = dtype;
  t.shape.emplace();
  for (std::int64_t d : dims)
    t.shape->push_back(Dim::known(d));
  return t;
}

bool TensorType::isStatic() const {
  if (!shape)
    return false;
  for (const Dim& d : *shape)
    if (!d.isKnown())
      return false;
  return true;
}

std::optional<std::int64_t> TensorType::numElements() const {
  if (!isStatic())
    return std::nullopt;
  std::int64_t n = 1;
  for (const Dim& d : *shape) {
    if (d.value != 0 && n > INT64_MAX / d.value)
      return std::nullopt;
    n *= d.value;
  }
  return n;
}

std::vector<std::int64_t> TensorType::staticDims() const {
  LATHE_CHECK(isStatic(), "staticDims() on a non-static type " + toString(*this));
  std::vector<std::int64_t> dims;
  for (const Dim& d : *shape)
    dims.push_back(d.value);
  return dims;
}

std::string toString(const Dim& dim) {
  if (dim.isKnown())
    return std::to_string(dim.value);
  if (dim.isSymbolic())
    return dim.symbol;
  return "?";
}

std::string toString(const TensorType& type) {
  std::string out(dtypeName(type.dtype));
  if (type.dtype == DType::Undefined && !type.shape)
    return out;
  if (!type.shape)
    return out + "[*]";
  out += '[';
  for (std::size_t i = 0; i < type.shape->size(); ++i) {
    if (i)
      out += ',';
    out += toString((*type.shape)[i]);
  }
  out += ']';
  return out;
}

} // namespace lathe::graph
