#pragma once
#include <chrono>

namespace lathe {

// Wall-clock stopwatch on the steady clock.
class Stopwatch {
public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double elapsedMs() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
        .count();
  }
  void restart() { start_ = std::chrono::steady_clock::now(); }

private:
  std::chrono::steady_clock::time_point start_;
};

} // namespace lathe
