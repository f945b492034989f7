// TRITONCACHE_* host functions, and the server's calls into a cache's
// insert and lookup (see plugins.h). An entry and its allocator exist for
// one call: made here, handed to the cache, their handles freed when the
// cache returns. Pure C except for the lookup's copy, which crosses into Go
// once (thostCacheLookupCopy).
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "plugins.h"

#define ENTRY(var, h) \
  THOST_OBJECT(var, h, THOST_KIND_CACHE_ENTRY, "cache entry")
#define ALLOCATOR(var, h) \
  THOST_OBJECT(var, h, THOST_KIND_CACHE_ALLOCATOR, "cache allocator")
#define ATTRIBUTES(var, h) \
  THOST_OBJECT(var, h, THOST_KIND_BUFFER_ATTRIBUTES, "buffer_attributes")

TRITONSERVER_Error*
TRITONCACHE_ApiVersion(uint32_t* major, uint32_t* minor)
{
  THOST_CHECK_ARG(major != NULL && minor != NULL, "major or minor is NULL");
  *major = TRITONCACHE_API_VERSION_MAJOR;
  *minor = TRITONCACHE_API_VERSION_MINOR;
  return NULL;
}

TRITONSERVER_Error*
TRITONCACHE_CacheEntryBufferCount(TRITONCACHE_CacheEntry* entry, size_t* count)
{
  struct thost_cache_entry* e;
  ENTRY(e, entry);
  THOST_CHECK_ARG(count != NULL, "count is NULL");
  pthread_mutex_lock(&e->mu);
  *count = e->count;
  pthread_mutex_unlock(&e->mu);
  return NULL;
}

static bool
host_memory(TRITONSERVER_MemoryType t)
{
  return t == TRITONSERVER_MEMORY_CPU || t == TRITONSERVER_MEMORY_CPU_PINNED;
}

TRITONSERVER_Error*
TRITONCACHE_CacheEntryAddBuffer(
    TRITONCACHE_CacheEntry* entry, void* base,
    TRITONSERVER_BufferAttributes* buffer_attributes)
{
  struct thost_cache_entry* e;
  struct thost_buffer_attributes* a;
  ENTRY(e, entry);
  ATTRIBUTES(a, buffer_attributes);
  THOST_CHECK_ARG(
      base != NULL || a->byte_size == 0, "base is NULL for a non-empty buffer");
  if (!host_memory(a->memory_type)) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "%s: only buffers in CPU memory can be cached, not %s", __func__,
        TRITONSERVER_MemoryTypeString(a->memory_type));
  }
  pthread_mutex_lock(&e->mu);
  if (e->count == THOST_CACHE_ENTRY_MAX_BUFFERS) {
    pthread_mutex_unlock(&e->mu);
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG, "%s: an entry holds at most %d buffers",
        __func__, THOST_CACHE_ENTRY_MAX_BUFFERS);
  }
  e->buffers[e->count++] = (struct thost_cache_buffer){
      .base = base,
      .byte_size = a->byte_size,
      .memory_type = a->memory_type,
      .memory_type_id = a->memory_type_id};
  pthread_mutex_unlock(&e->mu);
  return NULL;
}

// Locks e and returns NULL when index names one of its buffers; otherwise
// returns fn's error, with e unlocked.
static TRITONSERVER_Error*
lock_buffer_index(struct thost_cache_entry* e, size_t index, const char* fn)
{
  pthread_mutex_lock(&e->mu);
  if (index < e->count)
    return NULL;
  uint32_t n = e->count;
  pthread_mutex_unlock(&e->mu);
  return thost_errorf(
      TRITONSERVER_ERROR_INVALID_ARG,
      "%s: buffer index %zu out of range (the entry has %u)", fn, index, n);
}

TRITONSERVER_Error*
TRITONCACHE_CacheEntryGetBuffer(
    TRITONCACHE_CacheEntry* entry, size_t index, void** base,
    TRITONSERVER_BufferAttributes* buffer_attributes)
{
  struct thost_cache_entry* e;
  struct thost_buffer_attributes* a;
  ENTRY(e, entry);
  ATTRIBUTES(a, buffer_attributes);
  THOST_CHECK_ARG(base != NULL, "base is NULL");
  TRITONSERVER_Error* range_err = lock_buffer_index(e, index, __func__);
  if (range_err != NULL)
    return range_err;
  struct thost_cache_buffer b = e->buffers[index];
  pthread_mutex_unlock(&e->mu);
  *base = b.base;
  a->byte_size = b.byte_size;
  a->memory_type = b.memory_type;
  a->memory_type_id = b.memory_type_id;
  return NULL;
}

TRITONSERVER_Error*
TRITONCACHE_CacheEntrySetBuffer(
    TRITONCACHE_CacheEntry* entry, size_t index, void* new_base,
    TRITONSERVER_BufferAttributes* buffer_attributes)
{
  struct thost_cache_entry* e;
  struct thost_buffer_attributes* a = NULL;
  ENTRY(e, entry);
  if (buffer_attributes != NULL) {
    ATTRIBUTES(a, buffer_attributes);
    if (!host_memory(a->memory_type)) {
      return thost_errorf(
          TRITONSERVER_ERROR_INVALID_ARG,
          "%s: only buffers in CPU memory can be cached, not %s", __func__,
          TRITONSERVER_MemoryTypeString(a->memory_type));
    }
  }
  TRITONSERVER_Error* range_err = lock_buffer_index(e, index, __func__);
  if (range_err != NULL)
    return range_err;
  struct thost_cache_buffer* b = &e->buffers[index];
  if (a != NULL && a->byte_size != b->byte_size) {
    uint64_t want = b->byte_size;
    pthread_mutex_unlock(&e->mu);
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "%s: buffer %zu holds %llu bytes; attributes of %llu bytes cannot "
        "replace it",
        __func__, index, (unsigned long long)want,
        (unsigned long long)a->byte_size);
  }
  if (new_base == NULL && b->byte_size > 0) {
    pthread_mutex_unlock(&e->mu);
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "%s: new_base is NULL for a non-empty "
        "buffer",
        __func__);
  }
  b->base = new_base;
  if (a != NULL) {
    b->memory_type = a->memory_type;
    b->memory_type_id = a->memory_type_id;
  }
  pthread_mutex_unlock(&e->mu);
  return NULL;
}

// insert_copy copies the insert's data into the buffers the cache set. The
// data is one buffer, the entry's first.
static TRITONSERVER_Error*
insert_copy(struct thost_cache_allocator* al, struct thost_cache_entry* e)
{
  pthread_mutex_lock(&e->mu);
  struct thost_cache_buffer b = e->buffers[0];
  uint32_t n = e->count;
  pthread_mutex_unlock(&e->mu);
  if (n != 1 || b.byte_size != al->src_size) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "TRITONCACHE_Copy: the entry no longer holds the response's buffer");
  }
  if (b.base == NULL) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "TRITONCACHE_Copy: buffer 0 has no address; set one with "
        "TRITONCACHE_CacheEntrySetBuffer");
  }
  if (b.base != al->src && b.byte_size > 0)
    memcpy(b.base, al->src, b.byte_size);
  return NULL;
}

// lookup_copy hands the entry's buffers to Go, which copies them into the
// response it builds.
static TRITONSERVER_Error*
lookup_copy(struct thost_cache_allocator* al, struct thost_cache_entry* e)
{
  void* bases[THOST_CACHE_ENTRY_MAX_BUFFERS];
  uint64_t sizes[THOST_CACHE_ENTRY_MAX_BUFFERS];
  pthread_mutex_lock(&e->mu);
  uint32_t n = e->count;
  for (uint32_t i = 0; i < n; i++) {
    bases[i] = e->buffers[i].base;
    sizes[i] = e->buffers[i].byte_size;
  }
  pthread_mutex_unlock(&e->mu);
  return thostCacheLookupCopy(al->host, al->lookup, bases, sizes, n);
}

TRITONSERVER_Error*
TRITONCACHE_Copy(
    TRITONCACHE_Allocator* allocator, TRITONCACHE_CacheEntry* entry)
{
  struct thost_cache_allocator* al;
  struct thost_cache_entry* e;
  ALLOCATOR(al, allocator);
  ENTRY(e, entry);
  if (__atomic_exchange_n(&al->copied, 1, __ATOMIC_ACQ_REL)) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "%s: already called for this insert or lookup", __func__);
  }
  TRITONSERVER_Error* err = al->direction == THOST_CACHE_INSERT
                                ? insert_copy(al, e)
                                : lookup_copy(al, e);
  if (err != NULL)
    __atomic_store_n(&al->copied, 2, __ATOMIC_RELEASE);  // ran, failed
  return err;
}

// ---- The server's calls
// --------------------------------------------------------

typedef TRITONSERVER_Error* (*cache_init_fn)(TRITONCACHE_Cache**, const char*);
typedef TRITONSERVER_Error* (*cache_fini_fn)(TRITONCACHE_Cache*);
typedef TRITONSERVER_Error* (*cache_op_fn)(
    TRITONCACHE_Cache*, const char*, TRITONCACHE_CacheEntry*,
    TRITONCACHE_Allocator*);

TRITONSERVER_Error*
thost_cache_initialize(
    void* fn, struct thost_host* h, void** cache, const char* config,
    size_t config_len)
{
  char* cfg = thost_strndup(config, config_len);
  if (cfg == NULL)
    return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  TRITONCACHE_Cache* c = NULL;
  struct thost_host* saved = thost_swap_host(h);
  TRITONSERVER_Error* err = ((cache_init_fn)fn)(&c, cfg);
  thost_swap_host(saved);
  free(cfg);
  if (err == NULL && c == NULL) {
    return thost_errorf(
        TRITONSERVER_ERROR_INTERNAL,
        "TRITONCACHE_CacheInitialize succeeded but returned no cache");
  }
  *cache = c;
  return err;
}

TRITONSERVER_Error*
thost_cache_finalize(void* fn, struct thost_host* h, void* cache)
{
  struct thost_host* saved = thost_swap_host(h);
  TRITONSERVER_Error* err = ((cache_fini_fn)fn)((TRITONCACHE_Cache*)cache);
  thost_swap_host(saved);
  return err;
}

// call runs an insert or lookup with a fresh entry and allocator, and frees
// their handles once the cache returned.
static TRITONSERVER_Error*
call(
    void* fn, void* cache, const char* key, size_t key_len,
    struct thost_cache_entry* e, struct thost_cache_allocator* al)
{
  char k[THOST_CACHE_KEY_MAX + 1];
  if (key_len > THOST_CACHE_KEY_MAX) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG, "cache key of %zu bytes is too long",
        key_len);
  }
  memcpy(k, key, key_len);
  k[key_len] = '\0';
  pthread_mutex_init(&e->mu, NULL);
  e->handle = thost_handle_new(THOST_KIND_CACHE_ENTRY, e);
  al->handle = thost_handle_new(THOST_KIND_CACHE_ALLOCATOR, al);
  TRITONSERVER_Error* err;
  if (e->handle == 0 || al->handle == 0) {
    err = thost_errorf(TRITONSERVER_ERROR_UNAVAILABLE, "out of handles");
  } else {
    struct thost_host* saved = thost_swap_host(al->host);
    err = ((cache_op_fn)fn)(
        (TRITONCACHE_Cache*)cache, k,
        THOST_AS_HANDLE(TRITONCACHE_CacheEntry, e->handle),
        THOST_AS_HANDLE(TRITONCACHE_Allocator, al->handle));
    thost_swap_host(saved);
  }
  thost_handle_free(e->handle);
  thost_handle_free(al->handle);
  pthread_mutex_destroy(&e->mu);
  return err;
}

TRITONSERVER_Error*
thost_cache_insert(
    void* fn, struct thost_host* h, void* cache, const char* key,
    size_t key_len, const void* src, uint64_t size)
{
  struct thost_cache_entry* e = calloc(1, sizeof(*e));
  if (e == NULL)
    return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  e->count = 1;
  e->buffers[0] = (struct thost_cache_buffer){
      .base = (void*)src,
      .byte_size = size,
      .memory_type = TRITONSERVER_MEMORY_CPU};
  struct thost_cache_allocator al = {
      .direction = THOST_CACHE_INSERT, .host = h, .src = src, .src_size = size};
  TRITONSERVER_Error* err = call(fn, cache, key, key_len, e, &al);
  free(e);
  return err;
}

TRITONSERVER_Error*
thost_cache_lookup(
    void* fn, struct thost_host* h, void* cache, const char* key,
    size_t key_len, uint64_t lookup, bool* copied)
{
  struct thost_cache_entry* e = calloc(1, sizeof(*e));
  if (e == NULL)
    return thost_errorf(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  struct thost_cache_allocator al = {
      .direction = THOST_CACHE_LOOKUP, .host = h, .lookup = lookup};
  TRITONSERVER_Error* err = call(fn, cache, key, key_len, e, &al);
  free(e);
  *copied = __atomic_load_n(&al.copied, __ATOMIC_ACQUIRE) == 1;
  return err;
}
