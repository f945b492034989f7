// The handle table (see handle_table.h): chunks of slots allocated on first
// use and never freed, a lock-free free list of slots shared by all threads
// (a Treiber stack whose head carries a counter against ABA), and a small
// cache of free slots per thread in front of it, so that a backend thread
// making and freeing handles (a response, its outputs) touches no shared
// cache line. A thread's cached slots go back to the shared list when it
// exits.
#include "handle_table.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

struct thost_handle_slot* thost_handle_chunks[THOST_HANDLE_CHUNKS];

static pthread_mutex_t thost_chunk_mu = PTHREAD_MUTEX_INITIALIZER;
static uint32_t thost_slots_made;  // guarded by thost_chunk_mu (atomic reads)
static uint64_t
    thost_free_head;  // atomic: counter << 32 | (free slot + 1), 0 when empty

#define CACHED_SLOTS 64

struct slot_cache {
  uint32_t n;
  uint32_t slots[CACHED_SLOTS];
};

static __thread struct slot_cache thost_slot_cache;
static __thread bool thost_slot_cache_registered;
static pthread_key_t thost_slot_cache_key;
static pthread_once_t thost_slot_cache_once = PTHREAD_ONCE_INIT;

#define SLOTS_PER_CHUNK (1u << THOST_HANDLE_CHUNK_BITS)
#define MAX_SLOTS (1u << THOST_HANDLE_SLOT_BITS)
#define GEN_MAX ((uint64_t)((1ull << THOST_HANDLE_GEN_BITS) - 1))

static struct thost_handle_slot*
slot_at(uint32_t slot)
{
  return &__atomic_load_n(
      &thost_handle_chunks[slot >> THOST_HANDLE_CHUNK_BITS],
      __ATOMIC_ACQUIRE)[slot & (SLOTS_PER_CHUNK - 1)];
}

// Takes a slot off the free list; UINT32_MAX when it is empty.
static uint32_t
pop_free(void)
{
  uint64_t head = __atomic_load_n(&thost_free_head, __ATOMIC_ACQUIRE);
  for (;;) {
    uint32_t top = (uint32_t)head;
    if (top == 0)
      return UINT32_MAX;
    struct thost_handle_slot* s = slot_at(top - 1);
    uint32_t next =
        (uint32_t)(uintptr_t)__atomic_load_n(&s->object, __ATOMIC_RELAXED);
    uint64_t want = ((head >> 32) + 1) << 32 | next;
    if (__atomic_compare_exchange_n(
            &thost_free_head, &head, want, true, __ATOMIC_ACQ_REL,
            __ATOMIC_ACQUIRE)) {
      return top - 1;
    }
  }
}

static void
push_free(uint32_t slot)
{
  struct thost_handle_slot* s = slot_at(slot);
  uint64_t head = __atomic_load_n(&thost_free_head, __ATOMIC_RELAXED);
  for (;;) {
    __atomic_store_n(
        &s->object, (void*)(uintptr_t)(uint32_t)head, __ATOMIC_RELAXED);
    uint64_t want = ((head >> 32) + 1) << 32 | (slot + 1);
    if (__atomic_compare_exchange_n(
            &thost_free_head, &head, want, true, __ATOMIC_RELEASE,
            __ATOMIC_RELAXED)) {
      return;
    }
  }
}

// Makes a slot that was never used; UINT32_MAX when the table is full.
static uint32_t
make_slot(void)
{
  pthread_mutex_lock(&thost_chunk_mu);
  uint32_t slot = thost_slots_made;
  if (slot >= MAX_SLOTS) {
    pthread_mutex_unlock(&thost_chunk_mu);
    return UINT32_MAX;
  }
  uint32_t chunk = slot >> THOST_HANDLE_CHUNK_BITS;
  if (thost_handle_chunks[chunk] == NULL) {
    struct thost_handle_slot* c = calloc(SLOTS_PER_CHUNK, sizeof(*c));
    if (c == NULL) {
      pthread_mutex_unlock(&thost_chunk_mu);
      return UINT32_MAX;
    }
    __atomic_store_n(&thost_handle_chunks[chunk], c, __ATOMIC_RELEASE);
  }
  __atomic_store_n(&thost_slots_made, slot + 1, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&thost_chunk_mu);
  return slot;
}

// Returns a thread's cached slots to the shared list when it exits.
static void
flush_slot_cache(void* cache)
{
  struct slot_cache* c = cache;
  while (c->n > 0) push_free(c->slots[--c->n]);
}

static void
create_slot_cache_key(void)
{
  pthread_key_create(&thost_slot_cache_key, flush_slot_cache);
}

static void
register_slot_cache(void)
{
  pthread_once(&thost_slot_cache_once, create_slot_cache_key);
  pthread_setspecific(thost_slot_cache_key, &thost_slot_cache);
  thost_slot_cache_registered = true;
}

// A slot when the thread's cache is empty: from the shared list, else a
// new one; UINT32_MAX when the table is full. Kept out of thost_handle_new
// so that its common path saves and restores no registers for this one.
static __attribute__((noinline)) uint32_t
uncached_slot(void)
{
  uint32_t slot = pop_free();
  return slot != UINT32_MAX ? slot : make_slot();
}

uint64_t
thost_handle_new(enum thost_kind kind, void* obj)
{
  struct slot_cache* c = &thost_slot_cache;
  uint32_t slot = c->n > 0 ? c->slots[--c->n] : uncached_slot();
  if (slot == UINT32_MAX)
    return 0;
  struct thost_handle_slot* s = slot_at(slot);
  // A free slot's value is its last generation; a new slot's is 0.
  uint64_t gen = (__atomic_load_n(&s->value, __ATOMIC_RELAXED) & GEN_MAX) + 1;
  uint64_t h = (uint64_t)(THOST_HANDLE_MARK | (unsigned)kind) << 56 |
               gen << THOST_HANDLE_SLOT_BITS | slot;
  __atomic_store_n(&s->object, obj, __ATOMIC_RELAXED);
  __atomic_store_n(&s->value, h, __ATOMIC_RELEASE);
  return h;
}

void
thost_handle_free(uint64_t handle)
{
  if (handle == 0)
    return;
  uint32_t slot = (uint32_t)(handle & (MAX_SLOTS - 1));
  uint64_t gen = (handle >> THOST_HANDLE_SLOT_BITS) & GEN_MAX;
  struct thost_handle_slot* s = slot_at(slot);
  __atomic_store_n(
      &s->value, gen, __ATOMIC_RELEASE);  // no handle value looks like this
  if (gen == GEN_MAX)
    return;  // the slot is retired: its values are all spent
  struct slot_cache* c = &thost_slot_cache;
  if (!thost_slot_cache_registered)
    register_slot_cache();
  if (c->n < CACHED_SLOTS) {
    c->slots[c->n++] = slot;
  } else {
    push_free(slot);
  }
}

uint64_t
thost_handle_lazy(uint64_t* field, enum thost_kind kind, void* obj)
{
  uint64_t h = __atomic_load_n(field, __ATOMIC_ACQUIRE);
  if (h != 0)
    return h;
  uint64_t fresh = thost_handle_new(kind, obj);
  if (fresh == 0)
    return 0;
  if (__atomic_compare_exchange_n(
          field, &h, fresh, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    return fresh;
  thost_handle_free(fresh);
  return h;
}

int64_t
thost_handle_live(void)
{
  // Counted, not kept: a counter would cost every handle an atomic add.
  uint32_t made = __atomic_load_n(&thost_slots_made, __ATOMIC_ACQUIRE);
  int64_t live = 0;
  for (uint32_t i = 0; i < made; i++) {
    if ((__atomic_load_n(&slot_at(i)->value, __ATOMIC_ACQUIRE) >> 56) != 0)
      live++;
  }
  return live;
}
