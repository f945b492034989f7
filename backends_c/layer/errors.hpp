// errors.hpp: making and passing on TRITONSERVER_Error in the C++ layer.
//
// Every function of the layer that can fail returns TRITONSERVER_Error*:
// nullptr on success, otherwise an error the caller owns (it deletes it or
// hands it on). The two macros below return such an error early, the way
// every function body here and in the backends does.
#pragma once

#include <string>

#include "triton/core/tritonserver.h"

// Evaluates X (a TRITONSERVER_Error*) and returns it if it is an error.
#define THOST_RETURN_IF_ERROR(X)              \
  do {                                        \
    TRITONSERVER_Error* thost_rie_err_ = (X); \
    if (thost_rie_err_ != nullptr) {          \
      return thost_rie_err_;                  \
    }                                         \
  } while (false)

// Returns a new error with CODE and MSG (anything std::string accepts)
// unless P holds.
#define THOST_RETURN_ERROR_IF_FALSE(P, CODE, MSG)                          \
  do {                                                                     \
    if (!(P)) {                                                            \
      return ::tritonhost::backend::MakeError((CODE), ::std::string(MSG)); \
    }                                                                      \
  } while (false)

namespace tritonhost { namespace backend {

inline TRITONSERVER_Error*
MakeError(TRITONSERVER_Error_Code code, const std::string& msg)
{
  return TRITONSERVER_ErrorNew(code, msg.c_str());  // copies msg
}

// A new error with the code of 'err' and the message 'prefix' + the message
// of 'err'; deletes 'err'.
inline TRITONSERVER_Error*
PrefixError(const std::string& prefix, TRITONSERVER_Error* err)
{
  TRITONSERVER_Error* prefixed = MakeError(
      TRITONSERVER_ErrorCode(err), prefix + TRITONSERVER_ErrorMessage(err));
  TRITONSERVER_ErrorDelete(err);
  return prefixed;
}

// "<code string> - <message>", for logs; "success" for nullptr.
inline std::string
ErrorString(TRITONSERVER_Error* err)
{
  if (err == nullptr) {
    return "success";
  }
  return std::string(TRITONSERVER_ErrorCodeString(err)) + " - " +
         TRITONSERVER_ErrorMessage(err);
}

}}  // namespace tritonhost::backend
