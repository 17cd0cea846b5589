#pragma once
// Internal to engine/schedule: the producer of a scratch buffer, as compute_inline and
// compute_at need it: one unguarded store inside loops (within the buffer's allocation)
// that enumerate the buffer exactly once in row-major order, in any loop order.

#include "engine/loop_ir/ir.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lathe::schedule::detail {

struct Producer {
  const loop::Allocate* allocation = nullptr;
  const loop::Store* store = nullptr;
  std::vector<const loop::For*> loops; // around the store, inside the allocation
  struct Dim {
    std::string var;
    std::int64_t stride, extent;
  };
  std::vector<Dim> dims; // one per loop, by stride from largest to 1
};

// Throws (with the primitive's name in the reason where it helps) when `buffer` has no
// such producer.
Producer findProducer(const loop::Stmt& body, const std::string& buffer, const char* primitive);

// The names of the buffers `s` stores to.
std::vector<std::string> buffersWritten(const loop::Stmt& s);
// Whether `e` loads from the buffer `name`.
bool readsBuffer(const loop::Expr& e, const std::string& name);

} // namespace lathe::schedule::detail
