// Implicit sequence state (TRITONBACKEND_State): the object behind the
// handle that TRITONBACKEND_StateNew returns.
#ifndef TRITONHOST_ABI_STATE_H
#define TRITONHOST_ABI_STATE_H

#include "objects.h"

// The next value of one state, being written by a backend for the next
// request of its sequence. One allocation holds the struct, its shape and
// its name; the data buffer (TRITONBACKEND_StateBuffer) is separate, in C
// memory.
//
// Ownership: a state belongs to the request block it was created on and
// sits on that block's list (TRITONBACKEND_Request.states, guarded by the
// request context's mu) until the block is freed (RequestRelease, or a
// failed Execute), which frees every state on the list; its handle is
// invalid afterwards. TRITONBACKEND_StateUpdate copies the value to the
// server and leaves the state (and its buffer) in place, as Triton does, so
// a backend may still read it. THOST_COUNT_STATE counts live ones.
// Its buffer attributes get a handle on first use, freed with it.
//
// Threads: the list is safe for concurrent StateNew/StateUpdate on one
// request; one state is used by one thread at a time, as the API requires.
struct thost_state {
  uint64_t handle;
  TRITONSERVER_DataType datatype;
  uint32_t dims_count;
  bool has_buffer;
  struct thost_request* request;  // the block it belongs to
  struct thost_state* next;       // the block's list
  const char* name;               // the state output name, in this allocation
  const int64_t* shape;           // dims_count entries, in this allocation
  void* buffer;                   // malloc'd by StateBuffer; NULL before
  struct thost_buffer_attributes attrs;
};

#endif  // TRITONHOST_ABI_STATE_H
