// The JSON form of schedule sets:
//   {"schedules": [{"kernel": K, "steps": [{"primitive": P, "loops": [...], "factors": [...]}]}]}
#include "engine/schedule/schedule_io.h"
#include "engine/support/diagnostics.h"

#include <limits>
#include <nlohmann/json.hpp>

namespace lathe::schedule {

using nlohmann::json;

ScheduleSet parseJson(const std::string& text, const std::string& source) {
  const std::string file = source.empty() ? "schedule" : source;
  auto bad = [&](const std::string& where, const std::string& why) {
    throw Error(ErrorKind::Invalid, file + ": " + where + (where.empty() ? "" : ": ") + why);
  };
  json doc;
  try {
    // Schedules nest a few levels; refuse deep nesting before it costs stack or memory.
    constexpr int kMaxDepth = 32;
    doc = json::parse(text, [&](int depth, json::parse_event_t, json&) {
      if (depth > kMaxDepth)
        bad("", "nested more than " + std::to_string(kMaxDepth) + " levels deep");
      return true;
    });
  } catch (const json::exception& e) { // parse errors, and numbers out of range (406)
    bad("", std::string("not valid JSON: ") + e.what());
  }
  if (!doc.is_object() || !doc.contains("schedules") || !doc["schedules"].is_array())
    bad("", "expected an object with a \"schedules\" array");
  ScheduleSet set;
  set.source = source;
  const json& list = doc["schedules"];
  for (std::size_t k = 0; k < list.size(); ++k) {
    const std::string at = "schedules[" + std::to_string(k) + "]";
    const json& entry = list[k];
    if (!entry.is_object() || !entry.contains("kernel") || !entry["kernel"].is_string())
      bad(at, "needs a \"kernel\" name");
    Schedule schedule;
    schedule.kernel = entry["kernel"].get<std::string>();
    if (set.find(schedule.kernel))
      bad(at, "kernel " + schedule.kernel + " has a second schedule");
    const json steps = entry.value("steps", json::array());
    if (!steps.is_array())
      bad(at, "\"steps\" must be an array");
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const std::string stepAt = at + ".steps[" + std::to_string(i) + "]";
      const json& s = steps[i];
      if (!s.is_object() || !s.contains("primitive") || !s["primitive"].is_string())
        bad(stepAt, "needs a \"primitive\"");
      const std::string name = s["primitive"].get<std::string>();
      const std::optional<Primitive> primitive = primitiveFromName(name);
      if (!primitive)
        bad(stepAt, "unknown primitive '" + name + "'");
      Step step;
      step.primitive = *primitive;
      const json loops = s.value("loops", json::array());
      const json factors = s.value("factors", json::array());
      if (!loops.is_array() || !factors.is_array())
        bad(stepAt, "\"loops\" and \"factors\" must be arrays");
      for (const json& l : loops) {
        if (!l.is_string())
          bad(stepAt, "loop names are strings");
        step.loops.push_back(l.get<std::string>());
      }
      for (const json& f : factors) {
        if (!f.is_number_integer())
          bad(stepAt, "factors are integers");
        if (f.is_number_unsigned() &&
            f.get<std::uint64_t>() > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
          bad(stepAt, "the factor " + f.dump() + " is out of range (at most 9223372036854775807)");
        step.factors.push_back(f.get<std::int64_t>());
      }
      checkSignature(step, file + ": " + stepAt);
      schedule.steps.push_back(std::move(step));
    }
    set.schedules.push_back(std::move(schedule));
  }
  return set;
}

std::string printJson(const ScheduleSet& set) {
  json list = json::array();
  for (const Schedule& s : set.schedules) {
    json steps = json::array();
    for (const Step& step : s.steps) {
      json j{{"primitive", primitiveName(step.primitive)}, {"loops", step.loops}};
      if (!step.factors.empty())
        j["factors"] = step.factors;
      steps.push_back(std::move(j));
    }
    list.push_back({{"kernel", s.kernel}, {"steps", std::move(steps)}});
  }
  return json{{"schedules", std::move(list)}}.dump(2, ' ', false, json::error_handler_t::replace) +
         "\n";
}

} // namespace lathe::schedule
