#include "engine/tuner/records.h"

#include "engine/support/diagnostics.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>

namespace lathe::tuner {

using Json = nlohmann::json;

std::string toJsonLine(const TuningRecord& r) {
  Json j;
  j["workload"] = r.workload;
  j["kernel"] = r.kernel;
  j["target"] = r.machine.target;
  j["cpu"] = r.machine.cpu;
  j["threads"] = r.machine.threads;
  j["trace"] = r.trace;
  if (r.ok()) {
    j["median_ms"] = r.medianMs;
    j["p10_ms"] = r.p10Ms;
    j["p90_ms"] = r.p90Ms;
  } else {
    j["error"] = r.error;
  }
  j["default_median_ms"] = r.defaultMedianMs;
  j["time"] = r.time;
  j["version"] = r.version;
  // Names come from model files: invalid UTF-8 is replaced, never thrown on.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

TuningRecord parseJsonLine(const std::string& text, const std::string& file, int line) {
  const std::string where = file + ":" + std::to_string(line);
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::exception& e) {
    throw Error(ErrorKind::Invalid, where + ": not a JSON record (" + e.what() + ")",
                {file, {}, {}});
  }
  if (!j.is_object())
    throw Error(ErrorKind::Invalid, where + ": a record must be a JSON object", {file, {}, {}});
  const auto field = [&](const char* name, auto fallback, bool required) {
    using T = decltype(fallback);
    const auto it = j.find(name);
    if (it == j.end()) {
      if (required)
        throw Error(ErrorKind::Invalid, where + ": field '" + name + "' is missing",
                    {file, {}, {}});
      return fallback;
    }
    try {
      return it->template get<T>();
    } catch (const Json::exception&) {
      throw Error(ErrorKind::Invalid, where + ": field '" + name + "' has the wrong type",
                  {file, {}, {}});
    }
  };
  TuningRecord r;
  r.workload = field("workload", std::string(), true);
  r.kernel = field("kernel", std::string(), false);
  r.machine.target = field("target", std::string(), true);
  r.machine.cpu = field("cpu", std::string(), true);
  r.machine.threads = field("threads", 0, true);
  r.trace = field("trace", std::string(), true);
  r.error = field("error", std::string(), false);
  r.medianMs = field("median_ms", 0.0, r.error.empty());
  r.p10Ms = field("p10_ms", 0.0, false);
  r.p90Ms = field("p90_ms", 0.0, false);
  r.defaultMedianMs = field("default_median_ms", 0.0, false);
  r.time = field("time", std::string(), false);
  r.version = field("version", std::string(), false);
  if (r.workload.empty() || r.machine.threads < 0 || (r.ok() && !(r.medianMs > 0)))
    throw Error(ErrorKind::Invalid,
                where + ": an empty workload, negative threads or a "
                        "good record without a positive median",
                {file, {}, {}});
  return r;
}

std::vector<TuningRecord> readRecords(const std::string& path, std::vector<std::string>* warnings) {
  std::vector<TuningRecord> out;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return out;
  std::string text;
  int lineNo = 0;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  const bool endsWithNewline = [&] {
    in.clear();
    in.seekg(0, std::ios::end);
    const auto size = in.tellg();
    if (size <= 0)
      return true;
    in.seekg(size - std::streamoff(1));
    return in.get() == '\n';
  }();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    lineNo = static_cast<int>(i) + 1;
    if (lines[i].find_first_not_of(" \t\r") == std::string::npos)
      continue;
    try {
      out.push_back(parseJsonLine(lines[i], path, lineNo));
    } catch (const Error&) {
      // A run killed while writing leaves a last line without its newline: skip it.
      if (i + 1 == lines.size() && !endsWithNewline) {
        if (warnings)
          warnings->push_back(path + ":" + std::to_string(lineNo) +
                              ": an unfinished last record is skipped");
        continue;
      }
      throw;
    }
  }
  return out;
}

void appendRecord(const std::string& path, const TuningRecord& record) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << toJsonLine(record) << '\n';
  out.flush();
  if (!out)
    throw Error(ErrorKind::Invalid, "cannot append to the records file '" + path + "'",
                {path, {}, {}});
}

void RecordDatabase::add(TuningRecord record) {
  records_.push_back(std::move(record));
}

void RecordDatabase::addFile(const std::string& path, std::vector<std::string>* warnings) {
  for (TuningRecord& r : readRecords(path, warnings))
    records_.push_back(std::move(r));
}

double relativeTime(const TuningRecord& record) {
  return record.defaultMedianMs > 0 ? record.medianMs / record.defaultMedianMs : 1.0;
}

bool ranksBefore(const TuningRecord& a, const TuningRecord& b) {
  const double ra = relativeTime(a), rb = relativeTime(b);
  return ra < rb || (ra == rb && a.medianMs < b.medianMs);
}

bool isTraceVeto(const TuningRecord& record) {
  return record.error.rfind(kInModelTraceVeto, 0) == 0;
}

bool isVeto(const TuningRecord& record) {
  return record.error.rfind(kInModelVeto, 0) == 0 || isTraceVeto(record);
}

std::vector<bool> setAsideByVetoes(const std::vector<TuningRecord>& records) {
  std::vector<bool> aside(records.size(), false);
  // Backwards: a record is set aside when a veto of its workload and machine (of every
  // trace, or of its own) came after it.
  using Key = std::pair<std::string, MachineKey>;
  std::vector<Key> vetoed;
  std::vector<std::pair<Key, std::string>> refuted;
  for (std::size_t i = records.size(); i-- > 0;) {
    const TuningRecord& r = records[i];
    Key key{r.workload, r.machine};
    if (isTraceVeto(r)) {
      refuted.emplace_back(std::move(key), r.trace);
    } else if (isVeto(r)) {
      if (std::find(vetoed.begin(), vetoed.end(), key) == vetoed.end())
        vetoed.push_back(std::move(key));
    } else {
      aside[i] =
          std::find(vetoed.begin(), vetoed.end(), key) != vetoed.end() ||
          std::find(refuted.begin(), refuted.end(), std::make_pair(key, r.trace)) != refuted.end();
    }
  }
  return aside;
}

const TuningRecord* RecordDatabase::best(const std::string& workload,
                                         const MachineKey& machine) const {
  const std::vector<bool> aside = setAsideByVetoes(records_);
  const TuningRecord* found = nullptr;
  for (std::size_t i = 0; i < records_.size(); ++i) {
    const TuningRecord& r = records_[i];
    if (r.ok() && !aside[i] && r.workload == workload && r.machine == machine &&
        (!found || ranksBefore(r, *found)))
      found = &r;
  }
  return found;
}

int RecordDatabase::trials(const std::string& workload, const MachineKey& machine) const {
  int n = 0;
  for (const TuningRecord& r : records_)
    n += r.workload == workload && r.machine == machine && !isVeto(r);
  return n;
}

std::vector<MachineKey> RecordDatabase::otherMachines(const MachineKey& machine) const {
  std::vector<MachineKey> out;
  for (const TuningRecord& r : records_)
    if (!(r.machine == machine) && std::find(out.begin(), out.end(), r.machine) == out.end())
      out.push_back(r.machine);
  return out;
}

std::string utcNow() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string latheVersion() {
  return LATHE_VERSION;
}

} // namespace lathe::tuner
