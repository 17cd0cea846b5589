#pragma once
// A kernel's workload key: what two kernels must share for one's tuning records to apply to
// the other. It hashes the kernel's default loop IR with its own name and its parameters'
// names taken out, so that the same computation on the same shapes (ResNet's repeated
// blocks, a model compiled twice) is tuned once.

#include "engine/loop_ir/ir.h"

#include <string>

namespace lathe::tuner {

// 16 lowercase hex digits (the head of a SHA-256).
std::string workloadKey(const loop::Kernel& defaultKernel);

} // namespace lathe::tuner
