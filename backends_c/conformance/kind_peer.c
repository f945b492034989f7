/*
 * kind_peer.c: the "peer" request (see kinds.c), which the "inprocess"
 * request of another conformance model submits through the in-process API.
 * It answers as a decoupled model does, on Execute's thread: two responses,
 * each with AUTO_OUT (11, then 22) and an output the submitter did not ask
 * for (CHECKS), their buffers from the submitter's allocator with GPU
 * memory preferred; a third response it deletes unsent; then a flags-only
 * final, and a response sent after it (refused; the result is kept for the
 * caller, conf_peer_after_final). The first response carries, as STRING
 * parameters, what the peer saw: the request's id, correlation id, timeout,
 * parameters and DATA, the answer of
 * TRITONBACKEND_RequestOutputBufferProperties, and where its output buffers
 * landed.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "conformance.h"

/* What sending after the final flag gave the peer, for the caller to
 * report once the request is back (guarded by gate_mu). */
static char after_final[32] = "(not sent)";

static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static bool gate_open = true;

void
conf_peer_gate_close(void)
{
  pthread_mutex_lock(&gate_mu);
  gate_open = false;
  pthread_mutex_unlock(&gate_mu);
}

void
conf_peer_gate_open(void)
{
  pthread_mutex_lock(&gate_mu);
  gate_open = true;
  pthread_cond_broadcast(&gate_cv);
  pthread_mutex_unlock(&gate_mu);
}

const char*
conf_peer_after_final(void)
{
  static char copy[sizeof(after_final)];
  pthread_mutex_lock(&gate_mu);
  memcpy(copy, after_final, sizeof(copy));
  pthread_mutex_unlock(&gate_mu);
  return copy;
}

static void
gate_wait(void)
{
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 10;
  pthread_mutex_lock(&gate_mu);
  int rc = 0;
  while (!gate_open && rc != ETIMEDOUT) {
    rc = pthread_cond_timedwait(&gate_cv, &gate_mu, &deadline);
  }
  pthread_mutex_unlock(&gate_mu);
}

static void param(
    TRITONBACKEND_Response* resp, const char* name, const char* fmt, ...)
    CONF_PRINTF(3, 4);

static void
param(TRITONBACKEND_Response* resp, const char* name, const char* fmt, ...)
{
  char value[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(value, sizeof(value), fmt, ap);
  va_end(ap);
  TRITONSERVER_ErrorDelete(
      TRITONBACKEND_ResponseSetStringParameter(resp, name, value));
}

/* "<code>" of an error (deleted), or "OK". */
static const char*
outcome(TRITONSERVER_Error* err)
{
  if (err == NULL) {
    return "OK";
  }
  const char* name = conf_code_name(TRITONSERVER_ErrorCode(err));
  TRITONSERVER_ErrorDelete(err);
  return name;
}

/* Adds 'name' of 'dt' and 'size' bytes from 'data', preferring GPU memory;
 * *where gets "<memory type>/<ipc handle set or not>". */
static TRITONSERVER_Error*
add_output(
    TRITONBACKEND_Response* resp, const char* name, TRITONSERVER_DataType dt,
    const void* data, size_t size, char* where, size_t where_size)
{
  const int64_t shape[1] = {1};
  TRITONBACKEND_Output* out = NULL;
  void* buffer = NULL;
  TRITONSERVER_MemoryType type = TRITONSERVER_MEMORY_GPU;
  int64_t id = 0;
  TRITONSERVER_BufferAttributes* attrs = NULL;
  void* ipc = NULL;
  TRITONSERVER_Error* err =
      TRITONBACKEND_ResponseOutput(resp, &out, name, dt, shape, 1);
  if (err == NULL) {
    err = TRITONBACKEND_OutputBuffer(out, &buffer, size, &type, &id);
  }
  if (err == NULL) {
    memcpy(buffer, data, size);
    err = TRITONBACKEND_OutputBufferAttributes(out, &attrs);
  }
  if (err == NULL) {
    err = TRITONSERVER_BufferAttributesCudaIpcHandle(attrs, &ipc);
  }
  if (err == NULL && where != NULL) {
    snprintf(
        where, where_size, "%s/%s", TRITONSERVER_MemoryTypeString(type),
        ipc != NULL ? "ipc_set" : "no_ipc");
  }
  return err;
}

/* What the request carried, as parameters of 'resp'. */
static void
echo_request(TRITONBACKEND_Response* resp, TRITONBACKEND_Request* req)
{
  const char* s = NULL;
  uint64_t timeout = 0;
  uint32_t n = 0;
  if (TRITONBACKEND_RequestId(req, &s) == NULL) {
    param(resp, "request_id", "%s", s);
  }
  if (TRITONBACKEND_RequestCorrelationIdString(req, &s) == NULL) {
    param(resp, "correlation_id", "%s", s);
  }
  if (TRITONBACKEND_InferenceRequestTimeoutMicroseconds(req, &timeout) ==
      NULL) {
    param(resp, "timeout_us", "%llu", (unsigned long long)timeout);
  }
  if (TRITONBACKEND_RequestParameterCount(req, &n) == NULL) {
    param(resp, "parameter_count", "%u", n);
  }
  TRITONBACKEND_Input* in = NULL;
  const int64_t* shape = NULL;
  uint32_t dims = 0, buffers = 0;
  uint64_t bytes = 0;
  if (TRITONBACKEND_RequestInput(req, "DATA", &in) == NULL &&
      TRITONBACKEND_InputProperties(
          in, NULL, NULL, &shape, &dims, &bytes, &buffers) == NULL) {
    int32_t sum = 0;
    for (uint32_t b = 0; b < buffers; b++) {
      const void* base = NULL;
      uint64_t size = 0;
      TRITONSERVER_MemoryType type;
      int64_t id;
      if (TRITONBACKEND_InputBuffer(in, b, &base, &size, &type, &id) == NULL) {
        for (uint64_t k = 0; k + 4 <= size; k += 4) {
          int32_t v;
          memcpy(&v, (const char*)base + k, 4);
          sum += v;
        }
      }
    }
    param(
        resp, "data", "shape=%lld bytes=%llu buffers=%u sum=%d",
        dims > 0 ? (long long)shape[0] : -1LL, (unsigned long long)bytes,
        buffers, sum);
  }
  size_t size = 4;
  TRITONSERVER_MemoryType type = TRITONSERVER_MEMORY_GPU;
  int64_t id = 0;
  const char* got = outcome(TRITONBACKEND_RequestOutputBufferProperties(
      req, "AUTO_OUT", &size, &type, &id));
  param(
      resp, "output_properties", "%s %s/%lld", got,
      TRITONSERVER_MemoryTypeString(type), (long long)id);
}

void
conf_execute_peer(conf_instance* st, TRITONBACKEND_Request* req)
{
  (void)st;
  gate_wait();
  static const char empty_element[4] = {0, 0, 0, 0}; /* one empty string */
  for (int32_t i = 1; i <= 2; i++) {
    TRITONBACKEND_Response* resp = NULL;
    if (TRITONBACKEND_ResponseNew(&resp, req) != NULL) {
      continue;
    }
    char where[64] = "";
    const int32_t value = 11 * i;
    TRITONSERVER_Error* err = add_output(
        resp, "AUTO_OUT", TRITONSERVER_TYPE_INT32, &value, 4, where,
        sizeof(where));
    if (err == NULL) {
      err = add_output(
          resp, "CHECKS", TRITONSERVER_TYPE_BYTES, empty_element, 4, NULL, 0);
    }
    if (i == 1) {
      echo_request(resp, req);
      param(resp, "output_buffer", "%s", where);
    }
    TRITONSERVER_ErrorDelete(TRITONBACKEND_ResponseSend(resp, 0, err));
    TRITONSERVER_ErrorDelete(err);
  }
  TRITONBACKEND_Response* unsent = NULL;
  if (TRITONBACKEND_ResponseNew(&unsent, req) == NULL) {
    const int32_t value = 33;
    TRITONSERVER_ErrorDelete(add_output(
        unsent, "AUTO_OUT", TRITONSERVER_TYPE_INT32, &value, 4, NULL, 0));
    TRITONSERVER_ErrorDelete(TRITONBACKEND_ResponseDelete(unsent));
  }
  TRITONBACKEND_ResponseFactory* f = NULL;
  if (TRITONBACKEND_ResponseFactoryNew(&f, req) == NULL) {
    TRITONSERVER_ErrorDelete(
        TRITONBACKEND_ResponseFactorySendFlags(f, CONF_FINAL));
    /* Too late: refused, and its buffer goes back to the allocator. */
    TRITONBACKEND_Response* late = NULL;
    if (TRITONBACKEND_ResponseNewFromFactory(&late, f) == NULL) {
      const int32_t value = 44;
      TRITONSERVER_ErrorDelete(add_output(
          late, "AUTO_OUT", TRITONSERVER_TYPE_INT32, &value, 4, NULL, 0));
      const char* got =
          outcome(TRITONBACKEND_ResponseSend(late, CONF_FINAL, NULL));
      pthread_mutex_lock(&gate_mu);
      snprintf(after_final, sizeof(after_final), "%s", got);
      pthread_mutex_unlock(&gate_mu);
    }
    TRITONSERVER_ErrorDelete(TRITONBACKEND_ResponseFactoryDelete(f));
  }
  TRITONSERVER_ErrorDelete(TRITONBACKEND_RequestRelease(req, CONF_RELEASE_ALL));
}
