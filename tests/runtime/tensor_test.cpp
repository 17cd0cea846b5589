#include "engine/runtime/element_type.h"
#include "engine/runtime/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <limits>
#include <set>

namespace lathe::runtime {
namespace {

TEST(ElementType, NamesRoundTripAndSizes) {
  for (ElementType type : kAllElementTypes) {
    const auto parsed = parseElementType(elementTypeName(type));
    ASSERT_TRUE(parsed.has_value()) << elementTypeName(type);
    EXPECT_EQ(*parsed, type);
  }
  EXPECT_FALSE(parseElementType("f8").has_value());
  EXPECT_EQ(elementSize(ElementType::F32), 4u);
  EXPECT_EQ(elementSize(ElementType::BF16), 2u);
  EXPECT_EQ(elementSize(ElementType::U64), 8u);
  EXPECT_EQ(elementSize(ElementType::Bool), 1u);
  EXPECT_TRUE(isFloatingPoint(ElementType::BF16));
  EXPECT_TRUE(isSignedInteger(ElementType::I16));
  EXPECT_TRUE(isUnsignedInteger(ElementType::U32));
  EXPECT_FALSE(isSignedInteger(ElementType::Bool));
  EXPECT_FALSE(isUnsignedInteger(ElementType::Bool));
}

TEST(Float16, KnownValues) {
  EXPECT_EQ(Float16::fromFloat(1.0f).bits, 0x3C00);
  EXPECT_EQ(Float16::fromFloat(-2.0f).bits, 0xC000);
  EXPECT_EQ(Float16::fromFloat(65504.0f).bits, 0x7BFF);   // largest finite
  EXPECT_EQ(Float16::fromFloat(65520.0f).bits, 0x7C00);   // rounds to infinity
  EXPECT_EQ(Float16::fromFloat(0x1.0p-24f).bits, 0x0001); // smallest subnormal
  EXPECT_EQ(Float16::fromFloat(0x1.0p-26f).bits, 0x0000); // below half of it
  EXPECT_EQ(Float16::fromFloat(-0.0f).bits, 0x8000);
  EXPECT_EQ(Float16::fromFloat(1.0f + 0x1.0p-11f).bits, 0x3C00);     // tie to even (down)
  EXPECT_EQ(Float16::fromFloat(1.0f + 3 * 0x1.0p-11f).bits, 0x3C02); // tie to even (up)
  EXPECT_TRUE(std::isnan(Float16::fromFloat(std::nanf("")).toFloat()));
  EXPECT_EQ(Float16{0x7C00}.toFloat(), std::numeric_limits<float>::infinity());
  EXPECT_EQ(Float16{0x0001}.toFloat(), 0x1.0p-24f);
}

TEST(Float16, EveryNonNanValueRoundTrips) {
  for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const Float16 half{static_cast<std::uint16_t>(bits)};
    const float value = half.toFloat();
    if (std::isnan(value))
      continue;
    ASSERT_EQ(Float16::fromFloat(value).bits, half.bits) << "bits " << bits;
  }
}

TEST(BFloat16, RoundsToNearestEvenAndKeepsNan) {
  EXPECT_EQ(BFloat16::fromFloat(1.0f).bits, 0x3F80);
  EXPECT_EQ(BFloat16::fromFloat(-3.5f).toFloat(), -3.5f);
  EXPECT_EQ(BFloat16::fromFloat(1.0f + 0x1.0p-8f).bits, 0x3F80);     // tie, down to even
  EXPECT_EQ(BFloat16::fromFloat(1.0f + 3 * 0x1.0p-8f).bits, 0x3F82); // tie, up to even
  EXPECT_EQ(BFloat16::fromFloat(1.0f + 0x1.8p-8f).bits, 0x3F81);     // above the tie
  EXPECT_TRUE(std::isnan(BFloat16::fromFloat(std::nanf("")).toFloat()));
  // A NaN whose payload would round into the exponent must not become infinity.
  float payloadNan;
  const std::uint32_t nanBits = 0x7F80FFFFu;
  std::memcpy(&payloadNan, &nanBits, sizeof payloadNan);
  EXPECT_TRUE(std::isnan(BFloat16::fromFloat(payloadNan).toFloat()));
}

TEST(Tensor, DefaultIsEmpty) {
  Tensor t;
  EXPECT_EQ(t.numElements(), 0);
  EXPECT_EQ(t.byteSize(), 0u);
  EXPECT_EQ(describe(t), "f32[0]");
}

TEST(Tensor, AllocateIsAlignedZeroedAndTyped) {
  Tensor t = Tensor::allocate(ElementType::F32, {2, 3, 5});
  EXPECT_EQ(t.rank(), 3);
  EXPECT_EQ(t.numElements(), 30);
  EXPECT_EQ(t.byteSize(), 120u);
  EXPECT_TRUE(t.ownsStorage());
  EXPECT_TRUE(t.isAligned(kTensorAlignment));
  for (float v : t.values<float>())
    EXPECT_EQ(v, 0.0f);
  EXPECT_EQ(describe(t), "f32[2,3,5]");
  EXPECT_THROW(t.data<double>(), Error);

  Tensor scalar = Tensor::allocate(ElementType::I64, {});
  EXPECT_EQ(scalar.numElements(), 1);
  EXPECT_EQ(formatShape(scalar.shape()), "[]");
  Tensor empty = Tensor::allocate(ElementType::U8, {4, 0});
  EXPECT_EQ(empty.numElements(), 0);
  EXPECT_NE(empty.rawData(), nullptr);
  EXPECT_THROW(Tensor::allocate(ElementType::F32, {2, -1}), Error);
}

TEST(Tensor, ManyAllocationsAreAligned) {
  for (std::int64_t n = 0; n < 300; n += 7) {
    Tensor t = Tensor::allocate(ElementType::I8, {n});
    EXPECT_TRUE(t.isAligned(64)) << n;
  }
}

TEST(Tensor, ViewsShareCloneCopies) {
  Tensor owner = Tensor::allocate(ElementType::I32, {4});
  Tensor view = owner.view();
  EXPECT_FALSE(view.ownsStorage());
  view.data<std::int32_t>()[2] = 7;
  EXPECT_EQ(owner.data<std::int32_t>()[2], 7);

  Tensor copy = owner.clone();
  EXPECT_TRUE(copy.ownsStorage());
  EXPECT_NE(copy.rawData(), owner.rawData());
  EXPECT_TRUE(bitwiseEqual(copy, owner));
  copy.data<std::int32_t>()[2] = 8;
  EXPECT_FALSE(bitwiseEqual(copy, owner));

  // Moving the owner keeps the data where it is, so views stay valid.
  const void* before = owner.rawData();
  Tensor moved = std::move(owner);
  EXPECT_EQ(moved.rawData(), before);
  EXPECT_EQ(owner.numElements(), 0); // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_EQ(view.data<std::int32_t>()[2], 7);

  alignas(64) std::int16_t arena[8] = {};
  Tensor external = Tensor::view(ElementType::I16, {2, 4}, arena);
  external.fillOnes();
  EXPECT_EQ(arena[7], 1);
  EXPECT_THROW(Tensor::view(ElementType::I16, {2}, reinterpret_cast<char*>(arena) + 1), Error);
  EXPECT_THROW(Tensor::view(ElementType::I16, {2}, nullptr), Error);
}

TEST(Tensor, FillOnesEveryType) {
  for (ElementType type : kAllElementTypes) {
    Tensor t = Tensor::allocate(type, {3});
    t.fillOnes();
    for (std::int64_t i = 0; i < 3; ++i)
      EXPECT_EQ(t.elementAsDouble(i), 1.0) << elementTypeName(type);
    t.fillZeros();
    EXPECT_EQ(t.elementAsDouble(1), 0.0);
  }
}

TEST(Tensor, FillRandomRangesAndDeterminism) {
  for (ElementType type : kAllElementTypes) {
    Tensor a = Tensor::allocate(type, {4096});
    Tensor b = Tensor::allocate(type, {4096});
    Tensor c = Tensor::allocate(type, {4096});
    a.fillRandom(42);
    b.fillRandom(42);
    c.fillRandom(43);
    EXPECT_TRUE(bitwiseEqual(a, b)) << elementTypeName(type);
    EXPECT_FALSE(bitwiseEqual(a, c)) << elementTypeName(type);
    std::set<double> distinct;
    for (std::int64_t i = 0; i < a.numElements(); ++i) {
      const double v = a.elementAsDouble(i);
      distinct.insert(v);
      if (isFloatingPoint(type)) {
        ASSERT_GE(v, -1.0) << elementTypeName(type);
        ASSERT_LT(v, 1.0) << elementTypeName(type);
      } else if (isSignedInteger(type)) {
        ASSERT_GE(v, -8.0);
        ASSERT_LT(v, 8.0);
      } else if (isUnsignedInteger(type)) {
        ASSERT_GE(v, 0.0);
        ASSERT_LT(v, 16.0);
      } else {
        ASSERT_TRUE(v == 0.0 || v == 1.0);
      }
    }
    // Uses the whole range, not a corner of it.
    if (type == ElementType::Bool)
      EXPECT_EQ(distinct.size(), 2u);
    else if (!isFloatingPoint(type))
      EXPECT_EQ(distinct.size(), 16u) << elementTypeName(type);
    else
      EXPECT_GT(distinct.size(), 200u) << elementTypeName(type);
    if (isFloatingPoint(type)) {
      EXPECT_LT(std::fabs(summarize(a).mean), 0.05) << elementTypeName(type);
    }
  }
}

TEST(Tensor, FillRandomIsStableAcrossReleases) {
  // Pinned so that "random inputs, seed 0" means the same tensor in every build and in
  // saved tuning/benchmark records.
  Tensor t = Tensor::allocate(ElementType::F32, {3});
  t.fillRandom(0);
  const std::span<const float> v = t.values<float>();
  Tensor again = Tensor::allocate(ElementType::F32, {3});
  again.fillRandom(0);
  EXPECT_TRUE(bitwiseEqual(t, again));
  // SplitMix64(0) starts 0xE220A8397B1DCDAF: top 24 bits 0xE220A8 -> 2*k/2^24 - 1.
  EXPECT_FLOAT_EQ(v[0], static_cast<float>(2.0 * 0xE220A8 / 16777216.0 - 1.0));
}

TEST(Tensor, SummaryIgnoresNanAndInf) {
  Tensor t = Tensor::allocate(ElementType::F32, {6});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const float values[] = {1.0f, -3.0f, nan, 2.0f, inf, 6.0f};
  std::copy(std::begin(values), std::end(values), t.data<float>());
  const TensorSummary s = summarize(t);
  EXPECT_EQ(s.count, 6);
  EXPECT_EQ(s.nanCount, 1);
  EXPECT_EQ(s.infCount, 1);
  EXPECT_EQ(s.min, -3.0);
  EXPECT_EQ(s.max, 6.0);
  EXPECT_DOUBLE_EQ(s.mean, 1.5);
  EXPECT_EQ(formatSummary(s), "min -3 max 6 mean 1.5 (1 NaN, 1 inf)");

  Tensor allNan = Tensor::allocate(ElementType::F16, {2});
  allNan.data<Float16>()[0] = Float16{0x7E00};
  allNan.data<Float16>()[1] = Float16{0x7E00};
  EXPECT_TRUE(std::isnan(summarize(allNan).mean));

  Tensor ints = Tensor::allocate(ElementType::U8, {3});
  ints.data<std::uint8_t>()[0] = 255;
  ints.data<std::uint8_t>()[2] = 3;
  EXPECT_EQ(summarize(ints).max, 255.0);
  EXPECT_DOUBLE_EQ(summarize(ints).mean, 86.0);
}

TEST(Tensor, LargestSkipsNanAndKeepsTiesInIndexOrder) {
  Tensor t = Tensor::allocate(ElementType::F32, {6});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float values[] = {1.0f, 5.0f, nan, 5.0f, -2.0f, 3.0f};
  std::copy(std::begin(values), std::end(values), t.data<float>());
  using Top = std::vector<std::pair<std::int64_t, double>>;
  EXPECT_EQ(largest(t, 3), (Top{{1, 5.0}, {3, 5.0}, {5, 3.0}}));
  EXPECT_EQ(largest(t, 10).size(), 5u); // all but the NaN
  EXPECT_TRUE(largest(t, 0).empty());
}

TEST(Tensor, FillFromConvertsToEveryElementType) {
  for (ElementType type : kAllElementTypes) {
    Tensor t = Tensor::allocate(type, {4});
    double v = 0;
    t.fillFrom([&] { return v++; }); // 0, 1, 2, 3
    EXPECT_EQ(t.elementAsDouble(0), 0.0) << elementTypeName(type);
    EXPECT_EQ(t.elementAsDouble(1), 1.0) << elementTypeName(type);
    EXPECT_EQ(t.elementAsDouble(3), type == ElementType::Bool ? 1.0 : 3.0) << elementTypeName(type);
  }
}

} // namespace
} // namespace lathe::runtime
