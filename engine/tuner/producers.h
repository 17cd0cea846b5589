#pragma once
// Which kernel calls of a model write the activations a kernel reads. In a model a kernel's
// inputs were written moments before by the kernels that produce them, on the same threads,
// so each part sits in the cache of the core that wrote it. A candidate that splits its work
// across threads differently from its producers reads much of its input from the other
// core; timed alone on inputs fetched from memory, it did not pay for that (at 2 threads,
// ResNet-50 records that won by 1.16-1.21x alone ran at 0.66-0.81x in the model). The
// measurement (measure.h) therefore runs these producers before each timed call.

#include "engine/lowering/lowered_model.h"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace lathe::tuner {

struct ProducerCall {
  std::size_t call = 0; // index into LoweredModel::calls
  // (parameter of the producer, parameter of the consumer): each output of the producer
  // that the consumer reads as an input.
  std::vector<std::pair<std::size_t, std::size_t>> feeds;
};

// For the first call of `kernel`: for each of its f32 inputs that an earlier kernel call
// wrote (not weights, not graph inputs, not control flow's results), the last call that wrote it
// before; each call once, in execution order. Empty when `kernel` is never called.
std::vector<ProducerCall> producersOf(const lowering::LoweredModel& lowered,
                                      const std::string& kernel);

} // namespace lathe::tuner
