#include "engine/tuner/search_space.h"

#include "engine/loop_ir/ir_operators.h"
#include "engine/loop_ir/ir_visitor.h"
#include "engine/schedule/schedule_io.h"
#include "engine/support/diagnostics.h"

#include <algorithm>
#include <map>
#include <set>

namespace lathe::tuner {
namespace {

class LoopCollector : public loop::IRVisitor {
public:
  std::vector<LoopInfo> loops;

protected:
  void visitFor(const loop::For* op) override {
    const std::size_t index = loops.size();
    LoopInfo info;
    info.name = op->name();
    if (const auto e = loop::asConstInt(op->extent))
      info.extent = *e;
    info.kind = op->forKind;
    info.depth = static_cast<int>(stack_.size());
    info.insideParallel = parallelDepth_ > 0;
    if (const auto* child = op->body.as<loop::For>();
        child && child->forKind == loop::ForKind::Serial)
      info.onlyChild = child->name();
    loops.push_back(info);
    stack_.push_back(index);
    const std::size_t before = loops.size();
    parallelDepth_ += op->forKind == loop::ForKind::Parallel;
    loop::IRVisitor::visitFor(op);
    parallelDepth_ -= op->forKind == loop::ForKind::Parallel;
    stack_.pop_back();
    loops[index].innermost = loops.size() == before;
    for (std::size_t i = before; i < loops.size(); ++i)
      if (loops[i].kind == loop::ForKind::Parallel)
        loops[index].containsParallel = true;
  }

private:
  std::vector<std::size_t> stack_;
  int parallelDepth_ = 0;
};

schedule::Step step(schedule::Primitive p, std::vector<std::string> loops,
                    std::vector<std::int64_t> factors = {}) {
  schedule::Step s;
  s.primitive = p;
  s.loops = std::move(loops);
  s.factors = std::move(factors);
  return s;
}

} // namespace

std::vector<LoopInfo> loopsOf(const loop::Kernel& kernel) {
  LoopCollector collector;
  collector.visit(kernel.body);
  return collector.loops;
}

std::vector<std::vector<schedule::Step>> knobsOf(const loop::Kernel& kernel) {
  using schedule::Primitive;
  std::vector<std::vector<schedule::Step>> knobs;
  for (const LoopInfo& l : loopsOf(kernel)) {
    if (l.kind != loop::ForKind::Serial)
      continue;
    if (!l.insideParallel && !l.containsParallel && l.extent >= 2) {
      knobs.push_back({step(Primitive::Parallel, {l.name})});
      for (std::int64_t chunk : {2, 4, 8, 16})
        if (l.extent >= 4 * chunk)
          knobs.push_back({step(Primitive::Split, {l.name}, {chunk}),
                           step(Primitive::Parallel, {l.name + ".o"})});
    }
    if (l.innermost && l.extent >= 2) {
      if (l.extent <= 32)
        knobs.push_back({step(Primitive::Unroll, {l.name})});
      if (l.extent <= 64)
        knobs.push_back({step(Primitive::Vectorize, {l.name})});
      for (std::int64_t width : {4, 8, 16})
        if (l.extent > width && l.extent % width == 0)
          knobs.push_back({step(Primitive::Split, {l.name}, {width}),
                           step(Primitive::Vectorize, {l.name + ".i"})});
    }
    if (!l.onlyChild.empty())
      knobs.push_back({step(Primitive::Reorder, {l.onlyChild, l.name})});
  }
  return knobs;
}

std::vector<Knob> traceKnobsOf(const loop::Kernel& kernel, const schedule::Schedule& defaults) {
  std::vector<Knob> knobs;
  static const std::vector<std::int64_t> kFactors{2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128};
  // The extents of the nest's loops and of those the default's splits make: a split's other
  // factors are the divisors of its loop's extent (a factor that leaves a tail is mostly
  // refused by what follows, such as register_tile and vectorize).
  std::map<std::string, std::int64_t> extents;
  for (const LoopInfo& l : loopsOf(kernel))
    if (l.extent > 0)
      extents[l.name] = l.extent;
  for (std::size_t i = 0; i < defaults.steps.size(); ++i) {
    const schedule::Step& s = defaults.steps[i];
    if (s.primitive == schedule::Primitive::Rfactor) {
      // Other counts of partial results: the steps after that split them into vectors
      // refuse counts below a vector.
      const std::int64_t f0 = s.factors.front();
      const auto e = extents.find(s.loops.front());
      for (std::int64_t f = 2; f <= 64; f *= 2)
        if (f != f0 && (e == extents.end() || f <= e->second))
          knobs.push_back({{step(schedule::Primitive::Rfactor, s.loops, {f})},
                           static_cast<int>(i),
                           "#" + std::to_string(i)});
      if (e != extents.end())
        extents[s.loops.front() + ".o"] = e->second / f0;
      extents[s.loops.front() + ".i"] = f0;
      continue;
    }
    if (s.primitive != schedule::Primitive::Split)
      continue;
    const std::int64_t f0 = s.factors.front();
    std::vector<std::int64_t> factors;
    if (const auto e = extents.find(s.loops.front()); e != extents.end()) {
      for (std::int64_t d = 2; d <= std::min<std::int64_t>(e->second, 512); ++d)
        if (e->second % d == 0)
          factors.push_back(d);
      extents[s.loops.front() + ".o"] = (e->second + f0 - 1) / f0;
    } else {
      factors = kFactors;
    }
    extents[s.loops.front() + ".i"] = f0;
    for (std::int64_t f : factors)
      if (f != f0)
        knobs.push_back({{step(schedule::Primitive::Split, s.loops, {f})},
                         static_cast<int>(i),
                         "#" + std::to_string(i)});
  }
  return knobs;
}

std::vector<Candidate> sampleCandidates(const loop::Kernel& kernel, int count, std::mt19937& rng,
                                        std::vector<std::string>& seen,
                                        const std::vector<std::vector<std::size_t>>& parents,
                                        const schedule::Schedule* defaults) {
  const schedule::Schedule noDefaults{kernel.name, {}};
  const schedule::Schedule& base = defaults ? *defaults : noDefaults;
  std::vector<Knob> knobs = traceKnobsOf(kernel, base);
  {
    const loop::Kernel start = base.steps.empty() ? kernel : schedule::apply(kernel, base);
    for (auto& steps : knobsOf(start)) {
      const std::string key = steps.front().loops.front();
      knobs.push_back({std::move(steps), -1, key});
    }
  }
  // The lowering's variants of its default trace: each a knob that starts from it instead.
  std::vector<schedule::Schedule> variants;
  for (const std::string& text : kernel.traceVariants) {
    Knob knob;
    knob.variant = static_cast<int>(variants.size());
    knob.key = "variant";
    knobs.push_back(std::move(knob));
    variants.push_back(schedule::parseTrace(kernel.name, text));
  }
  std::vector<Candidate> out;
  if (knobs.empty())
    return out;
  std::uniform_int_distribution<std::size_t> pick(0, knobs.size() - 1);
  std::uniform_int_distribution<int> size(1, 3), coin(0, 1), change(0, 2);
  // Attempts are bounded: a small space runs out of new legal traces.
  for (int attempt = 0; attempt < count * 20 && static_cast<int>(out.size()) < count; ++attempt) {
    std::vector<std::size_t> chosen;
    if (!parents.empty() && coin(rng)) {
      chosen = parents[std::uniform_int_distribution<std::size_t>(0, parents.size() - 1)(rng)];
      const int what = chosen.empty() ? 1 : change(rng);
      if (what == 0) // replace a knob
        chosen[std::uniform_int_distribution<std::size_t>(0, chosen.size() - 1)(rng)] = pick(rng);
      else if (what == 1 || chosen.size() == 1) // add one
        chosen.push_back(pick(rng));
      else // drop one
        chosen.erase(chosen.begin() +
                     static_cast<std::ptrdiff_t>(
                         std::uniform_int_distribution<std::size_t>(0, chosen.size() - 1)(rng)));
    } else {
      for (int k = size(rng); k > 0; --k)
        chosen.push_back(pick(rng));
    }
    // Knobs on the same loop (or the same step of the default trace) do not combine: the
    // first one wins. A variant replaces the whole default trace, and with it the knobs
    // that change its steps; replacements change the default's steps; the others follow.
    Candidate c;
    c.schedule = base;
    c.schedule.kernel = kernel.name;
    const auto variant = std::find_if(chosen.begin(), chosen.end(), [&](std::size_t k) {
      return k < knobs.size() && knobs[k].variant >= 0;
    });
    if (variant != chosen.end()) {
      c.schedule.steps = variants[static_cast<std::size_t>(knobs[*variant].variant)].steps;
      c.knobs.push_back(*variant);
    }
    std::vector<schedule::Step> appended;
    std::set<std::string> touched{"variant"};
    for (std::size_t k : chosen) {
      if (k >= knobs.size() || touched.count(knobs[k].key) ||
          (variant != chosen.end() && knobs[k].replaces >= 0))
        continue;
      touched.insert(knobs[k].key);
      if (knobs[k].replaces < 0)
        for (const auto& l : knobs[k].steps.front().loops)
          touched.insert(l);
      c.knobs.push_back(k);
      if (knobs[k].replaces >= 0)
        c.schedule.steps[static_cast<std::size_t>(knobs[k].replaces)] = knobs[k].steps.front();
      else
        appended.insert(appended.end(), knobs[k].steps.begin(), knobs[k].steps.end());
    }
    c.schedule.steps.insert(c.schedule.steps.end(), appended.begin(), appended.end());
    c.trace = schedule::traceText(c.schedule);
    if (c.knobs.empty() || std::find(seen.begin(), seen.end(), c.trace) != seen.end())
      continue;
    seen.push_back(c.trace);
    try {
      c.scheduled = schedule::apply(kernel, c.schedule);
    } catch (const Error&) {
      continue; // illegal: never measured
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<schedule::Schedule> sampleSchedules(const loop::Kernel& kernel, int count,
                                                std::mt19937& rng, std::vector<std::string>& seen,
                                                const schedule::Schedule* defaults) {
  std::vector<schedule::Schedule> out;
  for (Candidate& c : sampleCandidates(kernel, count, rng, seen, {}, defaults))
    out.push_back(std::move(c.schedule));
  return out;
}

} // namespace lathe::tuner
