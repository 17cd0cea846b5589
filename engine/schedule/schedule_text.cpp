// The text form of schedule sets: `kernel NAME:` lines, then one `primitive(args)` per line;
// '#' starts a comment.
#include "engine/schedule/schedule_io.h"
#include "engine/support/diagnostics.h"

#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace lathe::schedule {

namespace {

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b])))
    ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1])))
    --e;
  return s.substr(b, e - b);
}

bool isNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

bool isName(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '.')
    return false;
  for (char c : s)
    if (!isNameChar(c))
      return false;
  return true;
}

std::string primitiveList() {
  std::string list;
  for (Primitive p : allPrimitives())
    list += (list.empty() ? "" : ", ") + std::string(primitiveName(p));
  return list;
}

} // namespace

Schedule parseTrace(const std::string& kernel, const std::string& steps,
                    const std::string& source) {
  ScheduleSet set = parseText("kernel " + kernel + ":\n" + steps, source);
  return set.empty() ? Schedule{kernel, {}} : std::move(set.schedules.front());
}

ScheduleSet parseText(const std::string& text, const std::string& source) {
  ScheduleSet set;
  set.source = source;
  std::istringstream in(text);
  std::string raw;
  int lineNo = 0;
  Schedule* current = nullptr;
  const std::string file = source.empty() ? "schedule" : source;
  while (std::getline(in, raw)) {
    ++lineNo;
    const std::string where = file + ":" + std::to_string(lineNo);
    auto bad = [&](const std::string& why) { throw Error(ErrorKind::Invalid, where + ": " + why); };
    std::string line = trim(raw.substr(0, raw.find('#')));
    if (line.empty())
      continue;
    if (line.rfind("kernel", 0) == 0 && line.size() > 6 &&
        std::isspace(static_cast<unsigned char>(line[6]))) {
      if (line.back() != ':')
        bad("a kernel line reads `kernel NAME:`");
      const std::string name = trim(line.substr(7, line.size() - 8));
      if (name.empty() || name.find_first_of(" \t(),") != std::string::npos)
        bad("a kernel line reads `kernel NAME:`");
      if (set.find(name))
        bad("kernel " + name + " has a second schedule; put its steps in one block");
      set.schedules.push_back({name, {}});
      current = &set.schedules.back();
      continue;
    }
    const std::size_t open = line.find('(');
    if (open == std::string::npos || line.back() != ')')
      bad("expected `kernel NAME:` or a step such as split(x, 8), not `" +
          (line.size() > 60
               ? line.substr(0, 60) + "...` (" + std::to_string(line.size()) + " characters)"
               : line + "`"));
    const std::string name = trim(line.substr(0, open));
    const std::optional<Primitive> primitive = primitiveFromName(name);
    if (!primitive)
      bad("unknown primitive '" + name + "' (known: " + primitiveList() + ")");
    if (!current)
      bad("a step before any `kernel NAME:` line");
    Step step;
    step.primitive = *primitive;
    step.line = lineNo;
    const std::string args = line.substr(open + 1, line.size() - open - 2);
    std::istringstream argStream(args);
    std::string arg;
    bool sawFactor = false;
    while (std::getline(argStream, arg, ',')) {
      arg = trim(arg);
      std::int64_t value = 0;
      const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), value);
      if (!arg.empty() && ec == std::errc() && end == arg.data() + arg.size()) {
        step.factors.push_back(value);
        sawFactor = true;
      } else if (ec == std::errc::result_out_of_range && end == arg.data() + arg.size()) {
        bad("the integer " + arg + " is out of range (at most 9223372036854775807)");
      } else if (isName(arg)) {
        if (sawFactor)
          bad("loop names come before the integers in " + name + "(...)");
        step.loops.push_back(arg);
      } else {
        bad("'" + arg + "' is neither a loop name nor an integer");
      }
    }
    checkSignature(step, where);
    current->steps.push_back(std::move(step));
  }
  return set;
}

std::string printText(const ScheduleSet& set) {
  std::string text;
  for (const Schedule& s : set.schedules) {
    text += "kernel " + s.kernel + ":\n";
    for (const Step& step : s.steps)
      text += "  " + toString(step) + "\n";
  }
  return text;
}

ScheduleSet readFile(const std::string& path) {
  // A schedule is a small text file: not a device, a FIFO or a multi-gigabyte file.
  constexpr std::uintmax_t kMaxBytes = 16u << 20;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error(ErrorKind::Io, path + ": " +
                                   (std::filesystem::exists(path, ec)
                                        ? "not a regular file (a schedule file was expected)"
                                        : "no such file"));
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec || size > kMaxBytes)
    throw Error(ErrorKind::Invalid,
                path + ": " +
                    (ec ? "cannot read the file size"
                        : "the schedule file is " + std::to_string(size) +
                              " bytes, more than the 16 MiB a schedule may be"));
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(ErrorKind::Io, path + ": cannot read the schedule file");
  std::ostringstream content;
  content << in.rdbuf();
  const std::string text = content.str();
  const std::string start = trim(text.substr(0, 256));
  if (!start.empty() && start[0] == '{')
    return parseJson(text, path);
  return parseText(text, path);
}

} // namespace lathe::schedule
