/*
 * error_code_name.h: the name of a TRITONSERVER_Error_Code as the tests'
 * tables write it (the enum's name less its prefix), for the C backends
 * and C test programs that report the codes the host returned.
 */
#ifndef TRITONHOST_BACKENDS_C_ERROR_CODE_NAME_H
#define TRITONHOST_BACKENDS_C_ERROR_CODE_NAME_H

#include "triton/core/tritonserver.h"

/* "INVALID_ARG" for TRITONSERVER_ERROR_INVALID_ARG, and so on; "?" for a
 * value the enum does not have. */
static inline const char*
thost_error_code_name(TRITONSERVER_Error_Code code)
{
  switch (code) {
    case TRITONSERVER_ERROR_UNKNOWN:
      return "UNKNOWN";
    case TRITONSERVER_ERROR_INTERNAL:
      return "INTERNAL";
    case TRITONSERVER_ERROR_NOT_FOUND:
      return "NOT_FOUND";
    case TRITONSERVER_ERROR_INVALID_ARG:
      return "INVALID_ARG";
    case TRITONSERVER_ERROR_UNAVAILABLE:
      return "UNAVAILABLE";
    case TRITONSERVER_ERROR_UNSUPPORTED:
      return "UNSUPPORTED";
    case TRITONSERVER_ERROR_ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case TRITONSERVER_ERROR_CANCELLED:
      return "CANCELLED";
  }
  return "?";
}

#endif /* TRITONHOST_BACKENDS_C_ERROR_CODE_NAME_H */
