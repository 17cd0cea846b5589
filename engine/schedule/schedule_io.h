#pragma once
// Reading and writing schedule sets as text and as JSON (formats in schedule.h). Parsers
// check the syntax, primitive names and argument counts and throw lathe::Error (Invalid)
// with the source and line; whether the loops exist is checked when the steps are applied.

#include "engine/schedule/schedule.h"

#include <string>

namespace lathe::schedule {

ScheduleSet parseText(const std::string& text, const std::string& source = {});
// One kernel's trace: its steps in text form, one per line, without a `kernel` line (a
// default trace, a tuning record's, KernelReport::schedule). No steps: an empty schedule.
Schedule parseTrace(const std::string& kernel, const std::string& steps,
                    const std::string& source = {});
std::string printText(const ScheduleSet& set);

ScheduleSet parseJson(const std::string& text, const std::string& source = {});
std::string printJson(const ScheduleSet& set);

// A file in either form: JSON when its first non-blank character is '{'. Throws Io when it
// cannot be read.
ScheduleSet readFile(const std::string& path);

} // namespace lathe::schedule
