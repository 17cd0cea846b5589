// Session::constantStats: min/max/mean/std and a histogram of one constant's values.
#include "engine/api/session.h"
#include "engine/api/session_state.h"
#include "engine/api/value_stats.h"
#include "engine/graph/tensor_data.h"

namespace lathe::api {
namespace {

template <typename T, typename ToDouble>
void accumulate(std::span<const T> values, ToDouble toDouble, int bins, ConstantStats& s) {
  accumulateStats(
      static_cast<std::int64_t>(values.size()),
      [&](std::int64_t i) { return toDouble(values[static_cast<std::size_t>(i)]); }, bins, s);
}

template <typename T>
void accumulate(const graph::TensorData& data, int bins, ConstantStats& s) {
  accumulate(data.values<T>(), [](T v) { return static_cast<double>(v); }, bins, s);
}

} // namespace

std::optional<ConstantStats> Session::constantStats(const std::string& valueName, int bins) const {
  const std::shared_ptr<graph::Graph> g = state_->graph;
  if (!g || bins < 1)
    return std::nullopt;
  const graph::Value* value = g->findValue(valueName);
  if (!value || !value->isConstant() || value->constant().isElided())
    return std::nullopt;
  const graph::TensorData& data = value->constant();

  ConstantStats s;
  s.name = valueName;
  s.dtype = std::string(graph::dtypeName(data.dtype()));
  s.shape = data.dims();
  using graph::DType;
  switch (data.dtype()) {
  case DType::F32:
    accumulate<float>(data, bins, s);
    break;
  case DType::F64:
    accumulate<double>(data, bins, s);
    break;
  case DType::F16:
    accumulate(data.values<std::uint16_t>(), graph::halfToFloat, bins, s);
    break;
  case DType::BF16:
    accumulate(data.values<std::uint16_t>(), graph::bfloat16ToFloat, bins, s);
    break;
  case DType::I8:
    accumulate<std::int8_t>(data, bins, s);
    break;
  case DType::I16:
    accumulate<std::int16_t>(data, bins, s);
    break;
  case DType::I32:
    accumulate<std::int32_t>(data, bins, s);
    break;
  case DType::I64:
    accumulate<std::int64_t>(data, bins, s);
    break;
  case DType::U8:
  case DType::Bool: // stored as one byte, 0 or 1
    accumulate<std::uint8_t>(data, bins, s);
    break;
  case DType::U16:
    accumulate<std::uint16_t>(data, bins, s);
    break;
  case DType::U32:
    accumulate<std::uint32_t>(data, bins, s);
    break;
  case DType::U64:
    accumulate<std::uint64_t>(data, bins, s);
    break;
  case DType::Undefined:
    return std::nullopt;
  }
  return s;
}

} // namespace lathe::api
