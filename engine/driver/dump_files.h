#pragma once
// What `lathe compile --dump DIR` writes.
#include "engine/codegen/llvm/compiler.h"
#include "engine/lowering/lowered_model.h"

#include <string>
#include <vector>

namespace lathe::driver {

// Per kernel: KERNEL.loop (the default lowering's choices and the replayed trace as
// comments, then the loop IR), KERNEL.naive.loop (the nest the trace replayed on, when a
// trace was), and when `code` has it, .ll, .opt.ll and .s. Also schedule_template.txt: a
// `kernel NAME:` block per kernel with the loops of its nest as lowered in comments and the
// trace replayed on it as steps, a schedule file that changes nothing until edited.
void writeDumpFiles(const std::string& dir, const std::string& modelName,
                    const lowering::LoweredModel& lowered,
                    const std::vector<codegen::KernelCode>& code);

} // namespace lathe::driver
