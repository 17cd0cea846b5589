#include "engine/schedule/schedule.h"

#include "engine/loop_ir/simplify.h"
#include "engine/schedule/primitives.h"
#include "engine/support/diagnostics.h"

#include <algorithm>

namespace lathe::schedule {

namespace {

struct PrimitiveRow {
  Primitive primitive;
  const char* spelling;
  Signature signature;
  const char* example;
};

constexpr PrimitiveRow kRows[] = {
#define PRIMITIVE(name, spelling, loops, factors, example, apply)                                  \
  {Primitive::name, spelling, {loops, factors}, example},
#include "engine/schedule/primitives.def"
};

const PrimitiveRow& rowOf(Primitive primitive) {
  return kRows[static_cast<std::size_t>(primitive)];
}

std::string example(Primitive primitive) {
  return rowOf(primitive).example;
}

} // namespace

const char* primitiveName(Primitive primitive) {
  return rowOf(primitive).spelling;
}

const std::vector<Primitive>& allPrimitives() {
  static const std::vector<Primitive> all = [] {
    std::vector<Primitive> list;
    for (const PrimitiveRow& row : kRows)
      list.push_back(row.primitive);
    return list;
  }();
  return all;
}

Signature signatureOf(Primitive primitive) {
  return rowOf(primitive).signature;
}

std::optional<Primitive> primitiveFromName(const std::string& name) {
  for (const PrimitiveRow& row : kRows)
    if (name == row.spelling)
      return row.primitive;
  return std::nullopt;
}

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
#define PRIMITIVE(name, spelling, loops, factors, example, apply)                                  \
  case Primitive::name:                                                                            \
    return apply;
#include "engine/schedule/primitives.def"
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
