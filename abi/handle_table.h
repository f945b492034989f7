// Handles: what a backend holds for an object of the server.
//
// A handle is not an address. It is a 64-bit value, cast to the API's opaque
// pointer type, that names a slot of one process-wide table and the
// generation of that slot:
//
//   bits 63..56  0xA0 | kind       (what the handle is, see enum thost_kind)
//   bits 55..24  generation        (1 to 2^32-1)
//   bits 23..0   slot              (up to 2^24 live handles)
//
// A live slot holds the handle's value and a pointer to its object. Freeing a
// handle advances its slot's generation, so the old value matches nothing,
// however many handles the slot serves later; a slot whose generation would
// wrap is retired for good. Any value that is not a live handle of the kind
// asked for (NULL, a freed handle, a handle of another kind, an address a
// backend made up) looks up nothing, and the API function refuses it with
// TRITONSERVER_ERROR_INVALID_ARG. Backends never dereference handles (the API
// types are incomplete), so the values need not be addresses; no user-space
// address has the top bits 0xA0..0xBF set, so no real pointer passes for one.
//
// The table is process-wide, like the heap: handle values stay unique when
// several servers live in one process. Objects belong to their server.
//
// Threads: lookups are lock-free (the chunk, the slot's value, its object);
// allocation and release use a per-thread cache of free slots, and a
// lock-free shared list with one compare-and-swap when it runs dry or
// over. Using a handle on one thread while another frees it
// is a race in the backend, as with any object the API says is released.
#ifndef TRITONHOST_ABI_HANDLE_TABLE_H
#define TRITONHOST_ABI_HANDLE_TABLE_H

#include <stddef.h>
#include <stdint.h>

// What a handle refers to. Values are part of the handle, never reused for
// another kind.
enum thost_kind {
  THOST_KIND_BACKEND = 1,
  THOST_KIND_BACKEND_ATTRIBUTE,
  THOST_KIND_MEMORY_MANAGER,
  THOST_KIND_MODEL,
  THOST_KIND_INSTANCE,
  THOST_KIND_SERVER,
  THOST_KIND_REQUEST,
  THOST_KIND_INPUT,
  THOST_KIND_FACTORY,
  THOST_KIND_RESPONSE,
  THOST_KIND_OUTPUT,
  THOST_KIND_RESPONSE_STATISTICS,
  THOST_KIND_STATE,
  THOST_KIND_TRACE,
  THOST_KIND_MESSAGE,
  THOST_KIND_BUFFER_ATTRIBUTES,
  THOST_KIND_METRIC_FAMILY,
  THOST_KIND_METRIC,
  THOST_KIND_METRIC_ARGS,
  THOST_KIND_INFER_REQUEST,   // TRITONSERVER_InferenceRequest (inprocess.h)
  THOST_KIND_INFER_RESPONSE,  // TRITONSERVER_InferenceResponse
  THOST_KIND_ALLOCATOR,       // TRITONSERVER_ResponseAllocator
  THOST_KIND_SERVER_OPTIONS,  // TRITONSERVER_ServerOptions (server_options.h)
  THOST_KIND_METRICS,         // TRITONSERVER_Metrics
  // TRITONCACHE_CacheEntry and _Allocator, TRITONREPOAGENT_Agent and
  // _AgentModel (plugins.h)
  THOST_KIND_CACHE_ENTRY,
  THOST_KIND_CACHE_ALLOCATOR,
  THOST_KIND_REPOAGENT,
  THOST_KIND_REPOAGENT_MODEL,
  THOST_KIND_COUNT  // must stay <= 32
};

// Allocates a handle of kind for obj; 0 when every slot is in use.
uint64_t thost_handle_new(enum thost_kind kind, void* obj);

// Frees a live handle (a no-op for 0). The caller owns it: freeing a handle
// twice, or one it did not allocate, is a bug of the server, not of a
// backend (backends only ever reach objects through thost_handle_object).
void thost_handle_free(uint64_t handle);

// Returns the object of handle if it is a live handle of kind, else NULL.
static inline void* thost_handle_object(
    const void* handle, enum thost_kind kind);

// Returns *field, first allocating a handle of kind for obj there if it is 0
// (objects whose handles are rarely asked for get one on first use). Safe
// when several threads ask at once: one handle wins, the others are freed.
// 0 when every slot is in use.
uint64_t thost_handle_lazy(uint64_t* field, enum thost_kind kind, void* obj);

// Live handles in the whole process, counted by reading the whole table
// (for leak checks in tests, not for hot paths).
int64_t thost_handle_live(void);

// The handle value as the API's opaque pointer type, and back.
#define THOST_AS_HANDLE(T, h) ((T*)(uintptr_t)(h))

// ---- implementation details shared with handle_table.c ---------------------

#define THOST_HANDLE_SLOT_BITS 24
#define THOST_HANDLE_GEN_BITS 32
#define THOST_HANDLE_CHUNK_BITS 12  // slots per chunk: 4096
#define THOST_HANDLE_CHUNKS \
  (1u << (THOST_HANDLE_SLOT_BITS - THOST_HANDLE_CHUNK_BITS))
#define THOST_HANDLE_MARK 0xA0u

struct thost_handle_slot {
  uint64_t value;  // atomic: the live handle, or the last generation when free
  void* object;    // atomic: the object, or (next free slot + 1) when free
};

extern struct thost_handle_slot* thost_handle_chunks[THOST_HANDLE_CHUNKS];

static inline void*
thost_handle_object(const void* handle, enum thost_kind kind)
{
  uint64_t h = (uint64_t)(uintptr_t)handle;
  if ((h >> 56) != (THOST_HANDLE_MARK | (uint64_t)kind))
    return NULL;
  uint32_t slot = (uint32_t)(h & ((1u << THOST_HANDLE_SLOT_BITS) - 1));
  struct thost_handle_slot* chunk = __atomic_load_n(
      &thost_handle_chunks[slot >> THOST_HANDLE_CHUNK_BITS], __ATOMIC_ACQUIRE);
  if (chunk == NULL)
    return NULL;
  struct thost_handle_slot* s =
      &chunk[slot & ((1u << THOST_HANDLE_CHUNK_BITS) - 1)];
  if (__atomic_load_n(&s->value, __ATOMIC_ACQUIRE) != h)
    return NULL;
  return __atomic_load_n(&s->object, __ATOMIC_RELAXED);
}

#endif  // TRITONHOST_ABI_HANDLE_TABLE_H
