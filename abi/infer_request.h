// Private to abi: what the files implementing TRITONSERVER_InferenceRequest*
// share.
#ifndef TRITONHOST_ABI_INFER_REQUEST_H
#define TRITONHOST_ABI_INFER_REQUEST_H

#include "inprocess.h"

#define REQUEST(var, h) \
  THOST_OBJECT(var, h, THOST_KIND_INFER_REQUEST, "inference request")

// Refuses a change to a request in flight (the server reads it until its
// release callback).
#define MUTABLE(r)                                                   \
  do {                                                               \
    if (__atomic_load_n(&(r)->in_flight, __ATOMIC_ACQUIRE))          \
      return thost_errorf(                                           \
          TRITONSERVER_ERROR_INVALID_ARG,                            \
          "%s: the request is in flight until its release callback", \
          __func__);                                                 \
  } while (0)

static inline TRITONSERVER_Error*
out_of_memory(const char* fn)
{
  return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "%s: out of memory", fn);
}

#endif  // TRITONHOST_ABI_INFER_REQUEST_H
