// clock.hpp: NowNs(), timestamps in the time base of the host's statistics
// calls (TRITONBACKEND_ModelInstanceReportStatistics and the like).
#pragma once

#include <chrono>
#include <cstdint>

namespace tritonhost { namespace backend {

// Nanoseconds on the steady clock (CLOCK_MONOTONIC).
inline uint64_t
NowNs()
{
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

}}  // namespace tritonhost::backend
