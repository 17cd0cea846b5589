#pragma once
// Internal to engine/schedule: one function per primitive, each in its own file. Each takes
// a kernel body and returns the rewritten body, or throws lathe::Error (Invalid) with the
// reason (apply() adds the kernel and step).

#include "engine/loop_ir/ir.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lathe::schedule::detail {

using loop::Stmt;

Stmt split(const Stmt& body, const std::string& loop, std::int64_t factor);
Stmt tile(const Stmt& body, const std::string& y, const std::string& x, std::int64_t fy,
          std::int64_t fx);
Stmt reorder(const Stmt& body, const std::vector<std::string>& order);
Stmt fuse(const Stmt& body, const std::string& outer, const std::string& inner);
Stmt vectorize(const Stmt& body, const std::string& loop);
Stmt unroll(const Stmt& body, const std::string& loop);
Stmt parallel(const Stmt& body, const std::string& loop);
Stmt cacheWrite(const Stmt& body, const std::string& loop);
Stmt registerTile(const Stmt& body, const std::string& top, const std::string& reduction);
Stmt computeInline(const Stmt& body, const std::string& buffer);
Stmt computeAt(const Stmt& body, const std::string& buffer, const std::string& loop);
Stmt pack(const Stmt& body, const std::string& buffer, const std::string& loop);
Stmt partition(const Stmt& body, const std::string& top);
Stmt rfactor(const Stmt& body, const std::string& loop, std::int64_t lanes);
// `axis` is one of blockIdx.x/y/z, threadIdx.x/y/z.
Stmt bind(const Stmt& body, const std::string& loop, const std::string& axis);

} // namespace lathe::schedule::detail
