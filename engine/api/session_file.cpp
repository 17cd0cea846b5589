#include "engine/api/session_file.h"

#include "engine/api/session_state.h"
#include "engine/runtime/timing_stats.h"
#include "engine/support/atomic_file.h"
#include "engine/support/diagnostics.h"
#include "engine/support/sha256.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace lathe::api {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kFormat = "lathe-session";
constexpr int kVersion = 1;
constexpr std::uintmax_t kMaxBytes = 16u << 20; // schedules and a pinned run fit many times

// `path` relative to `base` when that is shorter to carry (same tree), else absolute.
std::string stored(const std::string& path, const fs::path& base) {
  if (path.empty())
    return {};
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  const fs::path relative = fs::relative(absolute, base, ec);
  return ec || relative.empty() ? absolute.string() : relative.string();
}

std::string resolved(const std::string& path, const fs::path& base) {
  if (path.empty())
    return {};
  const fs::path p(path);
  return (p.is_absolute() ? p : base / p).lexically_normal().string();
}

json runToJson(const RunReport& r) {
  json outputs = json::array();
  for (const OutputSummary& o : r.outputs) {
    json top = json::array();
    for (const auto& [index, value] : o.top)
      top.push_back({index, value});
    outputs.push_back({{"name", o.name},
                       {"dtype", o.dtype},
                       {"shape", o.shape},
                       {"min", o.min},
                       {"max", o.max},
                       {"mean", o.mean},
                       {"top", top}});
  }
  return {{"latencies_ms", r.latenciesMs},
          {"threads", r.threads},
          {"target", r.target},
          {"runner", r.runner},
          {"timed", r.timed},
          {"outputs", outputs}};
}

// Field access that names what is wrong.
class Reader {
public:
  Reader(const json& object, std::string where) : object_(object), where_(std::move(where)) {}

  const json* find(const char* key) const {
    const auto it = object_.find(key);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw Error(ErrorKind::Invalid, where_ + "\"" + key + "\" " + what);
  }
  std::string string(const char* key, const std::string& fallback = {}) const {
    const json* v = find(key);
    if (!v)
      return fallback;
    if (!v->is_string())
      fail(key, "must be a string");
    return v->get<std::string>();
  }
  double number(const char* key, double fallback, double lo, double hi) const {
    const json* v = find(key);
    if (!v)
      return fallback;
    if (!v->is_number())
      fail(key, "must be a number");
    const double d = v->get<double>();
    if (!(d >= lo && d <= hi))
      fail(key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
    return d;
  }
  bool boolean(const char* key, bool fallback) const {
    const json* v = find(key);
    if (!v)
      return fallback;
    if (!v->is_boolean())
      fail(key, "must be true or false");
    return v->get<bool>();
  }

private:
  const json& object_;
  std::string where_;
};

std::vector<std::int64_t> dims(const json& value, const Reader& r, const std::string& key) {
  if (!value.is_array() || value.size() > 16)
    r.fail(key, "must be a list of at most 16 dims");
  std::vector<std::int64_t> out;
  for (const json& d : value) {
    if (!d.is_number_integer() || d.get<std::int64_t>() < 0 ||
        d.get<std::int64_t>() > (std::int64_t{1} << 40))
      r.fail(key, "must hold non-negative integer dims");
    out.push_back(d.get<std::int64_t>());
  }
  return out;
}

std::shared_ptr<const RunReport> runFromJson(const json& j, const std::string& where) {
  if (!j.is_object())
    throw Error(ErrorKind::Invalid, where + "\"pinned_run\" must be an object");
  const Reader r(j, where + "pinned_run: ");
  auto run = std::make_shared<RunReport>();
  if (const json* l = r.find("latencies_ms")) {
    if (!l->is_array() || l->size() > 1000000)
      r.fail("latencies_ms", "must be a list of times");
    for (const json& t : *l) {
      if (!t.is_number() || t.get<double>() < 0)
        r.fail("latencies_ms", "must hold non-negative numbers");
      run->latenciesMs.push_back(t.get<double>());
    }
  }
  run->threads = static_cast<int>(r.number("threads", 0, 0, 4096));
  run->target = r.string("target");
  run->runner = r.string("runner");
  run->timed = r.boolean("timed", true);
  if (const json* outs = r.find("outputs")) {
    if (!outs->is_array() || outs->size() > 10000)
      r.fail("outputs", "must be a list");
    for (const json& o : *outs) {
      if (!o.is_object())
        r.fail("outputs", "must hold objects");
      const Reader orr(o, where + "pinned_run output: ");
      OutputSummary s;
      s.name = orr.string("name");
      s.dtype = orr.string("dtype");
      if (const json* shape = orr.find("shape"))
        s.shape = dims(*shape, orr, "shape");
      s.min = orr.number("min", 0, -1e308, 1e308);
      s.max = orr.number("max", 0, -1e308, 1e308);
      s.mean = orr.number("mean", 0, -1e308, 1e308);
      if (const json* top = orr.find("top")) {
        if (!top->is_array() || top->size() > 1000)
          orr.fail("top", "must be a list of [index, value]");
        for (const json& e : *top) {
          if (!e.is_array() || e.size() != 2 || !e[0].is_number_integer() || !e[1].is_number())
            orr.fail("top", "must be a list of [index, value]");
          s.top.emplace_back(e[0].get<std::int64_t>(), e[1].get<double>());
        }
      }
      run->outputs.push_back(std::move(s));
    }
  }
  if (!run->latenciesMs.empty()) { // the statistics a run reports, from its latencies
    const runtime::TimingStats stats = runtime::computeTimingStats(run->latenciesMs);
    run->meanMs = stats.mean;
    run->medianMs = stats.median;
    run->minMs = stats.min;
    run->maxMs = stats.max;
    run->stdMs = stats.stddev;
  }
  return run;
}

} // namespace

std::string fileSha256(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return {};
  Sha256 hash;
  std::string buffer(1 << 20, '\0');
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    hash.update(std::string_view(buffer.data(), static_cast<std::size_t>(in.gcount())));
  }
  if (in.bad())
    return {};
  return hexDigest(hash.finish());
}

WriteResult writeSessionFile(const std::string& path, WorkbenchSession s) {
  try {
    std::error_code ec;
    const fs::path base = fs::absolute(path, ec).parent_path();
    if (s.modelSha256.empty())
      s.modelSha256 = fileSha256(s.model);
    json shapes = json::object();
    for (const auto& [name, shape] : s.inputShapes)
      shapes[name] = shape;
    json j{{"format", kFormat},
           {"version", kVersion},
           {"model", stored(s.model, base)},
           {"model_sha256", s.modelSha256},
           {"target", s.target},
           {"inputs", stored(s.inputsNpz, base)},
           {"fill", s.fill},
           {"input_shapes", shapes},
           {"threads", s.threads},
           {"repeat", s.repeat},
           {"profile", s.profile},
           {"schedules", s.schedules},
           {"tuning_records", stored(s.tuningRecords, base)},
           {"layout", s.layout}};
    if (s.pinnedRun)
      j["pinned_run"] = runToJson(*s.pinnedRun);
    writeFileAtomically(path, j.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
    return {};
  } catch (const Error& e) {
    return {toFailure(e.within({path, {}, {}}))};
  } catch (const std::exception& e) {
    return {Failure{"io", path + ": " + e.what(), path, {}, {}, e.what()}};
  }
}

SessionFileResult readSessionFile(const std::string& path) {
  SessionFileResult result;
  try {
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(path, ec);
    if (ec)
      throw Error(ErrorKind::Io, "cannot read the session file: " + ec.message());
    if (size > kMaxBytes)
      throw Error(ErrorKind::Invalid, "a session file of " + std::to_string(size) +
                                          " bytes is not one Lathe wrote (at most " +
                                          std::to_string(kMaxBytes >> 20) + " MiB)");
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    const json j = json::parse(text.str(), nullptr, false);
    if (j.is_discarded() || !j.is_object())
      throw Error(ErrorKind::Invalid, "not a Lathe session: the file is not a JSON object");
    const Reader r(j, "");
    if (r.string("format") != kFormat)
      throw Error(ErrorKind::Invalid,
                  "not a Lathe session: \"format\" is not \"" + std::string(kFormat) + "\"");
    const int version = static_cast<int>(r.number("version", 0, 0, 1e9));
    if (version != kVersion)
      throw Error(ErrorKind::Unsupported,
                  "session format version " + std::to_string(version) + " (this Lathe reads " +
                      std::to_string(kVersion) + "): " +
                      (version > kVersion ? "written by a newer Lathe" : "not one Lathe wrote"));
    const fs::path base = fs::absolute(path, ec).parent_path();
    WorkbenchSession s;
    s.model = resolved(r.string("model"), base);
    if (s.model.empty())
      r.fail("model", "must name the model file");
    s.modelSha256 = r.string("model_sha256");
    s.target = r.string("target", "llvm");
    s.inputsNpz = resolved(r.string("inputs"), base);
    s.fill = r.string("fill", "random");
    if (s.fill != "random" && s.fill != "zeros" && s.fill != "ones")
      r.fail("fill", "must be random, zeros or ones");
    if (const json* shapes = r.find("input_shapes")) {
      if (!shapes->is_object() || shapes->size() > 10000)
        r.fail("input_shapes", "must map input names to dims");
      for (const auto& [name, value] : shapes->items())
        s.inputShapes[name] = dims(value, r, "input_shapes");
    }
    s.threads = static_cast<int>(r.number("threads", 0, 0, 4096));
    s.repeat = static_cast<int>(r.number("repeat", 10, 1, 1000000));
    s.profile = r.boolean("profile", false);
    s.schedules = r.string("schedules");
    s.tuningRecords = resolved(r.string("tuning_records"), base);
    s.layout = r.string("layout");
    if (const json* pinned = r.find("pinned_run"))
      s.pinnedRun = runFromJson(*pinned, "");
    const std::string now = fileSha256(s.model);
    const std::string name = fs::path(s.model).filename().string();
    if (now.empty())
      result.modelChange = s.model + " is missing (or cannot be read)";
    else if (!s.modelSha256.empty() && now != s.modelSha256)
      result.modelChange = name + " has changed since the session was saved (its SHA-256 was " +
                           s.modelSha256.substr(0, 12) + "\u2026, is " + now.substr(0, 12) +
                           "\u2026): kept schedules and the pinned run may not fit it";
    result.session = std::move(s);
  } catch (const Error& e) {
    result.failure = toFailure(e.within({path, {}, {}}));
  } catch (const std::exception& e) {
    result.failure = Failure{"invalid", path + ": " + e.what(), path, {}, {}, e.what()};
  }
  return result;
}

} // namespace lathe::api
