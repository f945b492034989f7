/*
 * inprocess_callbacks.c: the functions the "inprocess" request
 * (kind_inprocess.c) gives the server: a response allocator whose every
 * function counts its calls (and where they ran), the release callback, and
 * the response callback, which checks every accessor of the first response
 * on the thread it arrives on.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"

static void
count(conf_call* c, int* what)
{
  pthread_mutex_lock(&c->mu);
  (*what)++;
  pthread_mutex_unlock(&c->mu);
}

TRITONSERVER_Error*
conf_alloc_fn(
    TRITONSERVER_ResponseAllocator* allocator, const char* tensor_name,
    size_t byte_size, TRITONSERVER_MemoryType memory_type,
    int64_t memory_type_id, void* userp, void** buffer, void** buffer_userp,
    TRITONSERVER_MemoryType* actual_memory_type, int64_t* actual_memory_type_id)
{
  (void)allocator, (void)tensor_name, (void)memory_type_id;
  conf_call* c = userp;
  if (c == NULL) {
    return TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_INTERNAL, "conformance: no call state");
  }
  *buffer = malloc(byte_size > 0 ? byte_size : 1);
  *buffer_userp = c; /* returned by TRITONSERVER_InferenceResponseOutput */
  *actual_memory_type = TRITONSERVER_MEMORY_CPU;
  *actual_memory_type_id = 0;
  pthread_mutex_lock(&c->mu);
  c->allocs++;
  c->preferred_gpu += memory_type == TRITONSERVER_MEMORY_GPU;
  c->alloc_on_caller |= pthread_equal(pthread_self(), c->caller) != 0;
  pthread_mutex_unlock(&c->mu);
  return NULL;
}

TRITONSERVER_Error*
conf_release_fn(
    TRITONSERVER_ResponseAllocator* allocator, void* buffer, void* buffer_userp,
    size_t byte_size, TRITONSERVER_MemoryType memory_type,
    int64_t memory_type_id)
{
  (void)allocator, (void)byte_size, (void)memory_type, (void)memory_type_id;
  free(buffer);
  if (buffer_userp != NULL) {
    count(buffer_userp, &((conf_call*)buffer_userp)->releases);
  }
  return NULL;
}

TRITONSERVER_Error*
conf_start_fn(TRITONSERVER_ResponseAllocator* allocator, void* userp)
{
  (void)allocator;
  count(userp, &((conf_call*)userp)->starts);
  return NULL;
}

TRITONSERVER_Error*
conf_query_fn(
    TRITONSERVER_ResponseAllocator* allocator, void* userp,
    const char* tensor_name, size_t* byte_size,
    TRITONSERVER_MemoryType* memory_type, int64_t* memory_type_id)
{
  (void)allocator, (void)byte_size;
  conf_call* c = userp;
  pthread_mutex_lock(&c->mu);
  c->queries++;
  snprintf(
      c->query_name, sizeof(c->query_name), "%s",
      tensor_name ? tensor_name : "(null)");
  pthread_mutex_unlock(&c->mu);
  *memory_type = TRITONSERVER_MEMORY_CPU_PINNED;
  *memory_type_id = 0;
  return NULL;
}

TRITONSERVER_Error*
conf_attributes_fn(
    TRITONSERVER_ResponseAllocator* allocator, const char* tensor_name,
    TRITONSERVER_BufferAttributes* buffer_attributes, void* userp,
    void* buffer_userp)
{
  (void)allocator, (void)tensor_name, (void)buffer_userp;
  count(userp, &((conf_call*)userp)->attributes);
  return TRITONSERVER_BufferAttributesSetCudaIpcHandle(
      buffer_attributes, userp);
}

void
conf_request_released(
    TRITONSERVER_InferenceRequest* request, const uint32_t flags, void* userp)
{
  (void)request;
  conf_call* c = userp;
  if (c == NULL) {
    return;
  }
  pthread_mutex_lock(&c->mu);
  c->released = true;
  c->release_flags = flags;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
}

/* Every accessor of the first response, good and bad. */
static void
check_response(
    conf_report* r, TRITONSERVER_InferenceResponse* resp, conf_call* c)
{
  const char* s = NULL;
  int64_t version = 0;
  uint32_t n = 0;
  CONF_CHECK(r, TRITONSERVER_InferenceResponseError, "good", resp);
  if (CONF_CHECK(
          r, TRITONSERVER_InferenceResponseModel, "good", resp, &s, &version)) {
    conf_value(r, "inprocess.response.model", "%s/%lld", s, (long long)version);
  }
  CONF_CHECK(
      r, TRITONSERVER_InferenceResponseModel, "null_out", resp, NULL, &version);
  if (CONF_CHECK(r, TRITONSERVER_InferenceResponseId, "good", resp, &s)) {
    conf_value(r, "inprocess.response.id", "%s", s);
  }
  CONF_CHECK(r, TRITONSERVER_InferenceResponseId, "null_out", resp, NULL);
  if (CONF_CHECK(
          r, TRITONSERVER_InferenceResponseParameterCount, "good", resp, &n)) {
    conf_value(r, "inprocess.response.parameter_count", "%u", n);
  }
  for (uint32_t i = 0; i < n; i++) {
    TRITONSERVER_ParameterType type;
    const void* v = NULL;
    if (TRITONSERVER_InferenceResponseParameter(resp, i, &s, &type, &v) ==
            NULL &&
        type == TRITONSERVER_PARAMETER_STRING) {
      char key[96];
      snprintf(key, sizeof(key), "inprocess.peer.%s", s);
      conf_value(r, key, "%s", (const char*)v);
    }
  }
  conf_result(
      r, "TRITONSERVER_InferenceResponseParameter", "every_index", "OK");
  TRITONSERVER_ParameterType type;
  const void* v = NULL;
  CONF_CHECK(
      r, TRITONSERVER_InferenceResponseParameter, "out_of_range", resp, n, &s,
      &type, &v);
  CONF_CHECK(
      r, TRITONSERVER_InferenceResponseParameterCount, "null_out", resp, NULL);
  if (CONF_CHECK(
          r, TRITONSERVER_InferenceResponseOutputCount, "good", resp, &n)) {
    conf_value(r, "inprocess.response.output_count", "%u", n);
  }
  TRITONSERVER_DataType dt;
  const int64_t* shape = NULL;
  uint64_t dims = 0;
  const void* base = NULL;
  size_t size = 0;
  TRITONSERVER_MemoryType mt;
  int64_t id = 0;
  void* userp = NULL;
  if (CONF_CHECK(
          r, TRITONSERVER_InferenceResponseOutput, "good", resp, 0, &s, &dt,
          &shape, &dims, &base, &size, &mt, &id, &userp)) {
    conf_value(
        r, "inprocess.response.output.0", "%s/%s/%llu/%zu/%s/%s", s,
        TRITONSERVER_DataTypeString(dt), (unsigned long long)dims, size,
        TRITONSERVER_MemoryTypeString(mt),
        userp == c ? "allocator_userp" : "other_userp");
  }
  CONF_CHECK(
      r, TRITONSERVER_InferenceResponseOutput, "out_of_range", resp, n, &s, &dt,
      &shape, &dims, &base, &size, &mt, &id, &userp);
  CONF_CHECK(
      r, TRITONSERVER_InferenceResponseOutput, "null_out", resp, 0, NULL, &dt,
      &shape, &dims, &base, &size, &mt, &id, &userp);
  if (CONF_CHECK(
          r, TRITONSERVER_InferenceResponseOutputClassificationLabel, "good",
          resp, 0, 3, &s)) {
    conf_value(r, "inprocess.response.label", "%s", s ? s : "(null)");
  }
  CONF_CHECK(
      r, TRITONSERVER_InferenceResponseOutputClassificationLabel,
      "out_of_range", resp, n, 0, &s);
  CONF_CHECK(
      r, TRITONSERVER_InferenceResponseOutputCount, "null_response", NULL, &n);
}

void
conf_response_complete(
    TRITONSERVER_InferenceResponse* response, const uint32_t flags, void* userp)
{
  conf_call* c = userp;
  if (c == NULL) {
    TRITONSERVER_ErrorDelete(TRITONSERVER_InferenceResponseDelete(response));
    return;
  }
  conf_report* r = c->report;
  pthread_mutex_lock(&c->mu);
  const int index = c->responses++;
  c->finals += (flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) != 0;
  c->null_final |= response == NULL && (flags & CONF_FINAL) != 0;
  c->foreign_thread |= pthread_equal(pthread_self(), c->caller) == 0;
  pthread_mutex_unlock(&c->mu);
  if (response == NULL) {
    return;
  }
  if (index == 0) {
    check_response(r, response, c);
  }
  const void* base = NULL;
  size_t size = 0;
  const char* s;
  TRITONSERVER_DataType dt;
  const int64_t* shape;
  uint64_t dims;
  TRITONSERVER_MemoryType mt;
  int64_t id;
  void* up;
  if (index < 2 &&
      TRITONSERVER_InferenceResponseOutput(
          response, 0, &s, &dt, &shape, &dims, &base, &size, &mt, &id, &up) ==
          NULL &&
      size == 4) {
    memcpy(&c->out[index], base, 4);
  }
  if (index == 0) {
    CONF_CHECK(r, TRITONSERVER_InferenceResponseDelete, "good", response);
    CONF_CHECK(r, TRITONSERVER_InferenceResponseDelete, "null", NULL);
    CONF_CHECK(r, TRITONSERVER_InferenceResponseDelete, "twice", response);
    uint32_t n = 0;
    CONF_CHECK(
        r, TRITONSERVER_InferenceResponseOutputCount, "deleted_response",
        response, &n);
    CONF_CHECK(
        r, TRITONSERVER_InferenceResponseError, "deleted_response", response);
  } else {
    TRITONSERVER_ErrorDelete(TRITONSERVER_InferenceResponseDelete(response));
  }
}
