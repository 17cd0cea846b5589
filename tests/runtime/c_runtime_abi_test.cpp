// The standalone C runtime (runtime/c) repeats the ABI generated kernels call (it includes
// nothing of the engine). Both headers in one C++ unit: a function declared differently in
// the two is a compile error ("conflicting declaration of C function"), and the types below
// must be the same.
#include "engine/runtime/executor.h"
#include "engine/runtime/runtime_abi.h"
#include "runtime/c/lathe_runtime.h"

#include <gtest/gtest.h>
#include <type_traits>

namespace {

static_assert(std::is_same_v<lathe_kernel, lathe::runtime::KernelFunction>);
static_assert(std::is_same_v<decltype(&lathe_parallel_for),
                             int (*)(std::int64_t, lathe_parallel_body, void*)>);
static_assert(std::is_same_v<decltype(&lathe_alloc), void* (*)(std::int64_t)>);

TEST(CRuntimeAbi, InvalidArgumentCodesAgree) {
  // lathe_runtime.c returns 2 for a negative count or a null body, as the engine's does.
  EXPECT_EQ(LATHE_PARALLEL_FOR_INVALID_ARGUMENT, 2);
  EXPECT_EQ(LATHE_PARALLEL_FOR_OK, 0);
}

} // namespace
