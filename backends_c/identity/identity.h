/*
 * identity.h: what the identity backend's C files share. Internal; the
 * only symbols the library exports are its TRITONBACKEND_* entry points.
 */
#ifndef TRITONHOST_BACKENDS_IDENTITY_IDENTITY_H
#define TRITONHOST_BACKENDS_IDENTITY_IDENTITY_H

#include <stddef.h>
#include <stdint.h>

#include "triton/core/tritonbackend.h"
#include "triton/core/tritonserver.h"

/* Evaluates X (a TRITONSERVER_Error*) and returns it if it is an error. */
#define RETURN_IF_ERROR(X)              \
  do {                                  \
    TRITONSERVER_Error* rie_err_ = (X); \
    if (rie_err_ != NULL) {             \
      return rie_err_;                  \
    }                                   \
  } while (0)

/* Per model: what Execute needs from the configuration. */
typedef struct identity_model {
  char* name;
  uint64_t version;
  int64_t max_batch_size;    /* > 0: the first dim of each input is a batch */
  uint64_t execute_delay_ms; /* parameter execute_delay_ms, 0 if absent */
  uint64_t delay_multiplier; /* parameter instance_wise_delay_multiplier, 0 if
                                absent */
} identity_model;

/* cuMemcpyHtoD_v2 of the CUDA driver. */
typedef int (*identity_htod_fn)(
    unsigned long long dst, const void* src, size_t byte_count);

/* Per instance. A GPU instance asks for its outputs in its GPU's memory and
 * copies into them with the CUDA driver, which it opens itself
 * (libcuda.so.1, as the server loaded it); the server makes the GPU current
 * on the thread that runs Execute. */
typedef struct identity_instance {
  TRITONBACKEND_ModelInstance* instance;
  TRITONSERVER_InstanceGroupKind kind;
  int32_t device_id;
  void* cuda;            /* dlopen handle of libcuda.so.1, GPU instances */
  identity_htod_fn htod; /* GPU instances */
  const identity_model* model; /* owned by the model; outlives instances */
  char* name;
} identity_instance;

/* identity_config.c: reads and validates the model configuration. */
TRITONSERVER_Error* identity_model_new(
    TRITONBACKEND_Model* model, identity_model** out);
void identity_model_delete(identity_model* model);

/* identity_execute.c: answers a batch of requests; releases every one. */
void identity_execute(
    identity_instance* instance, TRITONBACKEND_Request** requests,
    uint32_t request_count);

/* messages.c: printf-style logging and errors. */
#if defined(__GNUC__)
#define IDENTITY_PRINTF(FMT, ARGS) __attribute__((format(printf, FMT, ARGS)))
#else
#define IDENTITY_PRINTF(FMT, ARGS)
#endif
void identity_log(
    TRITONSERVER_LogLevel level, const char* file, int line, const char* fmt,
    ...) IDENTITY_PRINTF(4, 5);
TRITONSERVER_Error* identity_error(
    TRITONSERVER_Error_Code code, const char* fmt, ...) IDENTITY_PRINTF(2, 3);
/* If err is an error: logs "context: <code> - <message>" and deletes it. */
void identity_log_if_error(
    TRITONSERVER_Error* err, const char* file, int line, const char* context);
/* A malloc'd copy of s (never NULL unless out of memory). */
char* identity_strdup(const char* s);

#define IDENTITY_LOG(LEVEL, ...) \
  identity_log((LEVEL), __FILE__, __LINE__, __VA_ARGS__)
#define IDENTITY_LOG_IF_ERROR(X, CONTEXT) \
  identity_log_if_error((X), __FILE__, __LINE__, (CONTEXT))

#endif /* TRITONHOST_BACKENDS_IDENTITY_IDENTITY_H */
