// logging.hpp: writing to the host's log from the C++ layer and backends.
//
// Messages go through TRITONSERVER_LogMessage with the caller's file and
// line; if the host cannot take one, it goes to stderr instead. Any thread
// may log at any time.
#pragma once

#include <cstdio>
#include <string>

#include "errors.hpp"
#include "triton/core/tritonserver.h"

// Logs MSG (anything std::string accepts) at LEVEL with this file and line.
// MSG is not evaluated when the host does not log LEVEL, so a message built
// on a hot path (verbose ones) costs nothing while verbose logging is off.
#define THOST_LOG_MESSAGE(LEVEL, MSG)                                        \
  do {                                                                       \
    if (TRITONSERVER_LogIsEnabled(LEVEL))                                    \
      ::tritonhost::backend::LogMessage((LEVEL), __FILE__, __LINE__, (MSG)); \
  } while (false)

// If X is an error, logs "CONTEXT: <code> - <message>" at ERROR level and
// deletes it. CONTEXT is evaluated only for an error, so a call on a hot
// path builds no string when X succeeds.
#define THOST_LOG_IF_ERROR(X, CONTEXT)                    \
  do {                                                    \
    TRITONSERVER_Error* thost_log_err_ = (X);             \
    if (thost_log_err_ != nullptr)                        \
      ::tritonhost::backend::LogIfError(                  \
          thost_log_err_, __FILE__, __LINE__, (CONTEXT)); \
  } while (false)

namespace tritonhost { namespace backend {

inline void
LogMessage(
    TRITONSERVER_LogLevel level, const char* file, int line,
    const std::string& msg)
{
  TRITONSERVER_Error* err =
      TRITONSERVER_LogMessage(level, file, line, msg.c_str());
  if (err != nullptr) {
    // The host's log is unusable; stderr is the last place left.
    std::fprintf(
        stderr, "%s:%d: %s (logging failed: %s)\n", file, line, msg.c_str(),
        ErrorString(err).c_str());
    TRITONSERVER_ErrorDelete(err);
  }
}

inline void
LogIfError(
    TRITONSERVER_Error* err, const char* file, int line,
    const std::string& context)
{
  if (err != nullptr) {
    LogMessage(
        TRITONSERVER_LOG_ERROR, file, line, context + ": " + ErrorString(err));
    TRITONSERVER_ErrorDelete(err);
  }
}

}}  // namespace tritonhost::backend
