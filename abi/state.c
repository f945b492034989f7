// TRITONBACKEND_State* functions: implicit sequence state. A backend creates
// the next value of a configured state on a request (StateNew), fills a
// buffer (StateBuffer) and hands it over (StateUpdate); the sequence batcher
// gives it to the next request of the sequence as the state input. Go is
// crossed twice: StateNew checks the name, StateUpdate copies the value.
// See state.h for ownership.
#include "state.h"

#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "objects.h"

#define STATE(var, h) THOST_OBJECT(var, h, THOST_KIND_STATE, "state")

// Frees a state: its handles, its buffer, itself.
static void
state_free(struct thost_state* s)
{
  struct thost_host* host = s->request->ctx->host;
  thost_handle_free(s->handle);
  thost_handle_free(s->attrs.handle);
  free(s->buffer);
  free(s);
  thost_count(host, THOST_COUNT_STATE, -1);
}

// Reports whether s is on its request's list (the request is live).
static bool
state_linked(struct thost_state* s)
{
  struct thost_reqctx* ctx = s->request->ctx;
  bool found = false;
  pthread_mutex_lock(&ctx->mu);
  for (struct thost_state* p = s->request->states; p != NULL; p = p->next) {
    if (p == s) {
      found = true;
      break;
    }
  }
  pthread_mutex_unlock(&ctx->mu);
  return found;
}

// Frees the states of a request block, updated or not. Called by
// thost_request_free.
void
thost_request_free_states(struct thost_request* req)
{
  pthread_mutex_lock(&req->ctx->mu);
  struct thost_state* s = req->states;
  req->states = NULL;
  pthread_mutex_unlock(&req->ctx->mu);
  while (s != NULL) {
    struct thost_state* next = s->next;
    state_free(s);
    s = next;
  }
}

TRITONSERVER_Error*
TRITONBACKEND_StateNew(
    TRITONBACKEND_State** state, TRITONBACKEND_Request* request,
    const char* name, const TRITONSERVER_DataType datatype,
    const int64_t* shape, const uint32_t dims_count)
{
  struct thost_request* r;
  THOST_CHECK_ARG(state != NULL, "state is NULL");
  *state = NULL;
  THOST_OBJECT(r, request, THOST_KIND_REQUEST, "request");
  THOST_CHECK_ARG(name != NULL, "name is NULL");
  THOST_CHECK_ARG(shape != NULL || dims_count == 0, "shape is NULL");
  TRITONSERVER_Error* err = thostStateCheck(r->ctx, (char*)name);
  if (err != NULL)
    return err;

  size_t name_len = strlen(name);
  struct thost_state* s = calloc(
      1, sizeof(*s) + (size_t)dims_count * sizeof(int64_t) + name_len + 1);
  if (s == NULL)
    return thost_errorf(
        TRITONSERVER_ERROR_UNAVAILABLE, "cannot allocate state '%s'", name);
  int64_t* dims = (int64_t*)(s + 1);  // sizeof(*s) is a multiple of 8
  if (dims_count > 0)
    memcpy(dims, shape, (size_t)dims_count * sizeof(int64_t));
  char* copy = (char*)(dims + dims_count);
  memcpy(copy, name, name_len + 1);
  s->datatype = datatype;
  s->dims_count = dims_count;
  s->request = r;
  s->name = copy;
  s->shape = dims;
  s->attrs.server_owned = true;
  s->attrs.memory_type = TRITONSERVER_MEMORY_CPU;
  s->handle = thost_handle_new(THOST_KIND_STATE, s);
  if (s->handle == 0) {
    free(s);
    return thost_errorf(
        TRITONSERVER_ERROR_UNAVAILABLE, "%s: out of handles", __func__);
  }

  pthread_mutex_lock(&r->ctx->mu);
  s->next = r->states;
  r->states = s;
  pthread_mutex_unlock(&r->ctx->mu);
  thost_count(r->ctx->host, THOST_COUNT_STATE, 1);
  *state = THOST_AS_HANDLE(TRITONBACKEND_State, s->handle);
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_StateBuffer(
    TRITONBACKEND_State* state, void** buffer, const uint64_t buffer_byte_size,
    TRITONSERVER_MemoryType* memory_type, int64_t* memory_type_id)
{
  struct thost_state* s;
  STATE(s, state);
  THOST_CHECK_ARG(
      buffer != NULL && memory_type != NULL && memory_type_id != NULL,
      "buffer, memory_type or memory_type_id is NULL");
  // A second call with the same size returns the same buffer, as in Triton;
  // another size replaces it. State values live in host memory whatever the
  // caller prefers; *memory_type tells it so.
  if (!s->has_buffer || s->attrs.byte_size != buffer_byte_size) {
    void* b = malloc(buffer_byte_size > 0 ? buffer_byte_size : 1);
    if (b == NULL) {
      return thost_errorf(
          TRITONSERVER_ERROR_UNAVAILABLE,
          "cannot allocate %llu bytes for state '%s'",
          (unsigned long long)buffer_byte_size, s->name);
    }
    free(s->buffer);
    s->buffer = b;
    s->has_buffer = true;
    s->attrs.byte_size = buffer_byte_size;
  }
  s->attrs.memory_type = TRITONSERVER_MEMORY_CPU;
  s->attrs.memory_type_id = 0;
  *buffer = s->buffer;
  *memory_type = TRITONSERVER_MEMORY_CPU;
  *memory_type_id = 0;
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_StateBufferAttributes(
    TRITONBACKEND_State* state,
    TRITONSERVER_BufferAttributes** buffer_attributes)
{
  struct thost_state* s;
  STATE(s, state);
  THOST_CHECK_ARG(buffer_attributes != NULL, "buffer_attributes is NULL");
  if (!s->has_buffer) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "state '%s' has no buffer yet; call TRITONBACKEND_StateBuffer first",
        s->name);
  }
  uint64_t h = thost_handle_lazy(
      &s->attrs.handle, THOST_KIND_BUFFER_ATTRIBUTES, &s->attrs);
  if (h == 0)
    return thost_errorf(
        TRITONSERVER_ERROR_UNAVAILABLE, "%s: out of handles", __func__);
  *buffer_attributes = THOST_AS_HANDLE(TRITONSERVER_BufferAttributes, h);
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_StateUpdate(TRITONBACKEND_State* state)
{
  struct thost_state* s;
  STATE(s, state);
  if (!state_linked(s)) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "state '%s' does not belong to a live request", s->name);
  }
  TRITONSERVER_Error* err;
  if (!s->has_buffer) {
    err = thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "state '%s' has no buffer; call TRITONBACKEND_StateBuffer before "
        "TRITONBACKEND_StateUpdate",
        s->name);
  } else {
    err = thostStateUpdate(
        s->request->ctx, (char*)s->name, (int)s->datatype, (int64_t*)s->shape,
        s->dims_count, s->buffer, s->attrs.byte_size);
  }
  // The state and its buffer stay the request's until it is released, as
  // in Triton: a backend may still read what it wrote.
  return err;
}
