// TRITONBACKEND_State* functions: implicit sequence state. A backend creates
// the next value of a configured state on a request (StateNew), fills a
// buffer (StateBuffer) and hands it over (StateUpdate); the sequence batcher
// gives it to the next request of the sequence as the state input. Go is
// crossed twice: StateNew checks the name, StateUpdate copies the value.
// See state.h for ownership.
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "handles.h"
#include "state.h"

#define CHECK_STATE(s) THOST_CHECK_HANDLE(s, THOST_MAGIC_STATE, "state")

void thost_quarantine_free(void* dead);  // request_api.c

// Frees a state. Its struct goes through the quarantine ring like other
// handles, so a backend that uses it again gets INVALID_ARG (dead magic)
// rather than reading freed memory; its buffer is freed at once.
static void state_free(TRITONBACKEND_State* s) {
  s->magic = THOST_MAGIC_DEAD;
  free(s->buffer);
  s->buffer = NULL;
  thost_quarantine_free(s);
  thost_count(THOST_COUNT_STATE, -1);
}

// Takes s off its request's list; false if it was not on it.
static bool state_unlink(TRITONBACKEND_State* s) {
  struct thost_reqctx* ctx = s->request->ctx;
  bool found = false;
  pthread_mutex_lock(&ctx->mu);
  for (TRITONBACKEND_State** p = &s->request->states; *p != NULL; p = &(*p)->next) {
    if (*p == s) {
      *p = s->next;
      found = true;
      break;
    }
  }
  pthread_mutex_unlock(&ctx->mu);
  return found;
}

// Frees the states a request block still holds (never updated). Called by
// thost_request_free.
void thost_request_free_states(TRITONBACKEND_Request* req) {
  pthread_mutex_lock(&req->ctx->mu);
  TRITONBACKEND_State* s = req->states;
  req->states = NULL;
  pthread_mutex_unlock(&req->ctx->mu);
  while (s != NULL) {
    TRITONBACKEND_State* next = s->next;
    state_free(s);
    s = next;
  }
}

TRITONSERVER_Error* TRITONBACKEND_StateNew(
    TRITONBACKEND_State** state, TRITONBACKEND_Request* request, const char* name,
    const TRITONSERVER_DataType datatype, const int64_t* shape, const uint32_t dims_count) {
  THOST_CHECK_ARG(state != NULL, "state is NULL");
  *state = NULL;
  THOST_CHECK_HANDLE(request, THOST_MAGIC_REQUEST, "request");
  THOST_CHECK_ARG(name != NULL, "name is NULL");
  THOST_CHECK_ARG(shape != NULL || dims_count == 0, "shape is NULL");
  TRITONSERVER_Error* err = thostStateCheck(request->ctx->key, (char*)name);
  if (err != NULL) return err;

  size_t name_len = strlen(name);
  TRITONBACKEND_State* s = calloc(1, sizeof(*s) + (size_t)dims_count * sizeof(int64_t) + name_len + 1);
  if (s == NULL) return thost_errorf(TRITONSERVER_ERROR_UNAVAILABLE, "cannot allocate state '%s'", name);
  int64_t* dims = (int64_t*)(s + 1);  // sizeof(*s) is a multiple of 8
  if (dims_count > 0) memcpy(dims, shape, (size_t)dims_count * sizeof(int64_t));
  char* copy = (char*)(dims + dims_count);
  memcpy(copy, name, name_len + 1);
  s->magic = THOST_MAGIC_STATE;
  s->datatype = datatype;
  s->dims_count = dims_count;
  s->request = request;
  s->name = copy;
  s->shape = dims;
  s->attrs.memory_type = TRITONSERVER_MEMORY_CPU;

  pthread_mutex_lock(&request->ctx->mu);
  s->next = request->states;
  request->states = s;
  pthread_mutex_unlock(&request->ctx->mu);
  thost_count(THOST_COUNT_STATE, 1);
  *state = s;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_StateBuffer(
    TRITONBACKEND_State* state, void** buffer, const uint64_t buffer_byte_size, TRITONSERVER_MemoryType* memory_type,
    int64_t* memory_type_id) {
  CHECK_STATE(state);
  THOST_CHECK_ARG(buffer != NULL && memory_type != NULL && memory_type_id != NULL,
                  "buffer, memory_type or memory_type_id is NULL");
  // A second call with the same size returns the same buffer, as in Triton;
  // another size replaces it. State values live in host memory whatever the
  // caller prefers; *memory_type tells it so.
  if (!state->has_buffer || state->attrs.byte_size != buffer_byte_size) {
    void* b = malloc(buffer_byte_size > 0 ? buffer_byte_size : 1);
    if (b == NULL) {
      return thost_errorf(TRITONSERVER_ERROR_UNAVAILABLE, "cannot allocate %llu bytes for state '%s'",
                          (unsigned long long)buffer_byte_size, state->name);
    }
    free(state->buffer);
    state->buffer = b;
    state->has_buffer = true;
    state->attrs.byte_size = buffer_byte_size;
  }
  state->attrs.memory_type = TRITONSERVER_MEMORY_CPU;
  state->attrs.memory_type_id = 0;
  *buffer = state->buffer;
  *memory_type = TRITONSERVER_MEMORY_CPU;
  *memory_type_id = 0;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_StateBufferAttributes(
    TRITONBACKEND_State* state, TRITONSERVER_BufferAttributes** buffer_attributes) {
  CHECK_STATE(state);
  THOST_CHECK_ARG(buffer_attributes != NULL, "buffer_attributes is NULL");
  if (!state->has_buffer) {
    return thost_errorf(TRITONSERVER_ERROR_INVALID_ARG,
                        "state '%s' has no buffer yet; call TRITONBACKEND_StateBuffer first", state->name);
  }
  *buffer_attributes = &state->attrs;
  return NULL;
}

TRITONSERVER_Error* TRITONBACKEND_StateUpdate(TRITONBACKEND_State* state) {
  CHECK_STATE(state);
  if (!state_unlink(state)) {
    return thost_errorf(TRITONSERVER_ERROR_INVALID_ARG, "state '%s' does not belong to a live request", state->name);
  }
  TRITONSERVER_Error* err;
  if (!state->has_buffer) {
    err = thost_errorf(TRITONSERVER_ERROR_INVALID_ARG,
                       "state '%s' has no buffer; call TRITONBACKEND_StateBuffer before TRITONBACKEND_StateUpdate",
                       state->name);
  } else {
    err = thostStateUpdate(state->request->ctx->key, (char*)state->name, (int)state->datatype, (int64_t*)state->shape,
                           state->dims_count, state->buffer, state->attrs.byte_size);
  }
  state_free(state);  // the handle is invalid afterwards, whether or not the update succeeded
  return err;
}
