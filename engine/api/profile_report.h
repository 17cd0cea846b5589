#pragma once
// Internal to engine/api: the profiler's events as the plain RunProfile the views get.
#include "engine/api/session.h"
#include "engine/profiler/profile.h"

#include <string>

namespace lathe::api {

RunProfile toRunProfile(const profiler::Profile& profile, double peakGflops,
                        const std::string& peakIsa);

} // namespace lathe::api
