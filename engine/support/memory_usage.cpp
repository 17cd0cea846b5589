#include "engine/support/memory_usage.h"

#include <fstream>
#include <string>

namespace lathe {

std::uint64_t peakResidentBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0)
      return std::stoull(line.substr(6)) * 1024; // reported in kB
  }
  return 0;
}

} // namespace lathe
