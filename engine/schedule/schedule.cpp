#include "engine/schedule/schedule.h"

#include "engine/loop_ir/simplify.h"
#include "engine/schedule/primitives.h"
#include "engine/support/diagnostics.h"

#include <algorithm>

namespace lathe::schedule {

const char* primitiveName(Primitive primitive) {
  switch (primitive) {
  case Primitive::Split:
    return "split";
  case Primitive::Tile:
    return "tile";
  case Primitive::Reorder:
    return "reorder";
  case Primitive::Fuse:
    return "fuse";
  case Primitive::Vectorize:
    return "vectorize";
  case Primitive::Unroll:
    return "unroll";
  case Primitive::Parallel:
    return "parallel";
  case Primitive::CacheWrite:
    return "cache_write";
  case Primitive::ComputeInline:
    return "compute_inline";
  case Primitive::ComputeAt:
    return "compute_at";
  case Primitive::Pack:
    return "pack";
  }
  return "?";
}

const std::vector<Primitive>& allPrimitives() {
  static const std::vector<Primitive> all{
      Primitive::Split,         Primitive::Tile,      Primitive::Reorder,  Primitive::Fuse,
      Primitive::Vectorize,     Primitive::Unroll,    Primitive::Parallel, Primitive::CacheWrite,
      Primitive::ComputeInline, Primitive::ComputeAt, Primitive::Pack};
  return all;
}

Signature signatureOf(Primitive primitive) {
  switch (primitive) {
  case Primitive::Split:
    return {1, 1};
  case Primitive::Tile:
    return {2, 2};
  case Primitive::Reorder:
    return {-1, 0};
  case Primitive::Fuse:
  case Primitive::ComputeAt:
  case Primitive::Pack:
    return {2, 0};
  case Primitive::Vectorize:
  case Primitive::Unroll:
  case Primitive::Parallel:
  case Primitive::CacheWrite:
  case Primitive::ComputeInline:
    return {1, 0};
  }
  return {0, 0};
}

std::optional<Primitive> primitiveFromName(const std::string& name) {
  for (Primitive p : allPrimitives())
    if (name == primitiveName(p))
      return p;
  return std::nullopt;
}

namespace {

std::string example(Primitive primitive) {
  switch (primitive) {
  case Primitive::Split:
    return "split(x, 8)";
  case Primitive::Tile:
    return "tile(y, x, 4, 16)";
  case Primitive::Reorder:
    return "reorder(x.o, y, x.i)";
  case Primitive::Fuse:
    return "fuse(c, y)";
  default:
    return std::string(primitiveName(primitive)) + "(x)";
  }
}

} // namespace

void checkSignature(const Step& step, const std::string& where) {
  const Signature sig = signatureOf(step.primitive);
  const bool loopsOk = sig.loops < 0 ? step.loops.size() >= 2
                                     : step.loops.size() == static_cast<std::size_t>(sig.loops);
  if (loopsOk && step.factors.size() == static_cast<std::size_t>(sig.factors))
    return;
  throw Error(ErrorKind::Invalid,
              where + ": " + primitiveName(step.primitive) + " takes " +
                  (sig.loops < 0 ? "two or more loops" : std::to_string(sig.loops) + " loop(s)") +
                  (sig.factors ? " then " + std::to_string(sig.factors) + " integer(s)" : "") +
                  ", as in " + example(step.primitive));
}

const Schedule* ScheduleSet::find(const std::string& kernel) const {
  for (const Schedule& s : schedules)
    if (s.kernel == kernel)
      return &s;
  return nullptr;
}

std::string toString(const Step& step) {
  std::string text = std::string(primitiveName(step.primitive)) + "(";
  bool first = true;
  auto arg = [&](const std::string& a) {
    text += (first ? "" : ", ") + a;
    first = false;
  };
  for (const std::string& loop : step.loops)
    arg(loop);
  for (std::int64_t factor : step.factors)
    arg(std::to_string(factor));
  return text + ")";
}

std::string traceText(const Schedule& schedule) {
  std::string text;
  for (const Step& step : schedule.steps)
    text += toString(step) + "\n";
  return text;
}

namespace {

loop::Stmt applyStep(const loop::Stmt& body, const Step& step) {
  const auto& l = step.loops;
  const auto& f = step.factors;
  switch (step.primitive) {
  case Primitive::Split:
    return detail::split(body, l[0], f[0]);
  case Primitive::Tile:
    return detail::tile(body, l[0], l[1], f[0], f[1]);
  case Primitive::Reorder:
    return detail::reorder(body, l);
  case Primitive::Fuse:
    return detail::fuse(body, l[0], l[1]);
  case Primitive::Vectorize:
    return detail::vectorize(body, l[0]);
  case Primitive::Unroll:
    return detail::unroll(body, l[0]);
  case Primitive::Parallel:
    return detail::parallel(body, l[0]);
  case Primitive::CacheWrite:
    return detail::cacheWrite(body, l[0]);
  case Primitive::ComputeInline:
    return detail::computeInline(body, l[0]);
  case Primitive::ComputeAt:
    return detail::computeAt(body, l[0], l[1]);
  case Primitive::Pack:
    return detail::pack(body, l[0], l[1]);
  }
  return body;
}

} // namespace

loop::Kernel apply(const loop::Kernel& kernel, const Schedule& schedule, const std::string& source,
                   std::size_t* refused) {
  loop::Kernel result = kernel;
  for (std::size_t i = 0; i < schedule.steps.size(); ++i) {
    const Step& step = schedule.steps[i];
    std::string where = source.empty() ? "schedule" : source;
    if (step.line > 0)
      where += ":" + std::to_string(step.line);
    if (refused)
      *refused = i;
    checkSignature(step, where);
    try {
      result.body = applyStep(result.body, step);
    } catch (const Error& e) {
      throw Error(ErrorKind::Invalid, where + ": kernel " + kernel.name + ", step " +
                                          std::to_string(i + 1) + " " + toString(step) + ": " +
                                          e.reason());
    }
  }
  return loop::simplify(result);
}

void checkKernelsExist(const ScheduleSet& set, const std::vector<std::string>& kernels) {
  for (const Schedule& s : set.schedules)
    if (std::find(kernels.begin(), kernels.end(), s.kernel) == kernels.end())
      throw Error(ErrorKind::Invalid,
                  (set.source.empty() ? std::string("schedule") : set.source) +
                      ": there is no kernel named '" + s.kernel +
                      "' (lathe compile --dump DIR lists the kernels and their loops)");
}

} // namespace lathe::schedule
