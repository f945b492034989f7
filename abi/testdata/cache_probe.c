// A response cache for tests: a small table of entries that does what its
// configuration says, to drive the server's cache path into each of its
// cases. The configuration is Triton's JSON object of strings; each setting
// present as "1" (or a number) turns a behaviour on:
//
//   fail_init       TRITONCACHE_CacheInitialize fails
//   lookup_error    every lookup fails with TRITONSERVER_ERROR_INTERNAL
//   insert_error    every insert fails with TRITONSERVER_ERROR_INTERNAL
//   no_copy         a lookup that finds the key returns without
//                   TRITONCACHE_Copy
//   lookup_sleep_ms a lookup sleeps this long first
//   insert_sleep_ms an insert sleeps this long first
//   checks          every insert and lookup first calls the host functions
//                   with bad arguments, and fails naming the first that
//                   did not answer as the header says
//
// Lookups and inserts also count themselves in a file when "count_file"
// names one (one line "lookup" or "insert" per call), so a test sees calls
// the server made even when their result was discarded.
#define _DEFAULT_SOURCE  // usleep
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "triton/core/tritoncache.h"

#define SLOTS 64

struct slot {
  char* key;
  void* data;
  size_t size;
};

struct probe {
  pthread_mutex_t mu;
  int lookup_error, insert_error, no_copy, checks;
  long lookup_sleep_ms, insert_sleep_ms;
  char count_file[512];
  struct slot slots[SLOTS];
  size_t next;
  // Handles of the previous call, which must be dead by the next.
  TRITONCACHE_CacheEntry* old_entry;
  TRITONCACHE_Allocator* old_allocator;
};

// setting returns the value of "name":"value" in config as a number (0 when
// absent), and copies it into str when given.
static long
setting(const char* config, const char* name, char* str, size_t len)
{
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\":\"", name);
  const char* at = strstr(config, pat);
  if (at == NULL)
    return 0;
  at += strlen(pat);
  const char* end = strchr(at, '"');
  if (end == NULL)
    return 0;
  if (str != NULL) {
    size_t n = (size_t)(end - at) < len - 1 ? (size_t)(end - at) : len - 1;
    memcpy(str, at, n);
    str[n] = '\0';
  }
  return strtol(at, NULL, 10);
}

static void
count(struct probe* p, const char* what)
{
  if (p->count_file[0] == '\0')
    return;
  FILE* f = fopen(p->count_file, "a");
  if (f != NULL) {
    fprintf(f, "%s\n", what);
    fclose(f);
  }
}

TRITONSERVER_Error*
TRITONCACHE_CacheInitialize(TRITONCACHE_Cache** cache, const char* config)
{
  uint32_t major, minor;
  TRITONSERVER_Error* err = TRITONCACHE_ApiVersion(&major, &minor);
  if (err != NULL)
    return err;
  if (major != TRITONCACHE_API_VERSION_MAJOR ||
      minor < TRITONCACHE_API_VERSION_MINOR) {
    return TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_UNSUPPORTED, "cache API version mismatch");
  }
  if (setting(config, "fail_init", NULL, 0)) {
    return TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_INVALID_ARG, "the probe cache refuses to start");
  }
  struct probe* p = calloc(1, sizeof(*p));
  if (p == NULL)
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  pthread_mutex_init(&p->mu, NULL);
  p->lookup_error = setting(config, "lookup_error", NULL, 0) != 0;
  p->insert_error = setting(config, "insert_error", NULL, 0) != 0;
  p->no_copy = setting(config, "no_copy", NULL, 0) != 0;
  p->checks = setting(config, "checks", NULL, 0) != 0;
  p->lookup_sleep_ms = setting(config, "lookup_sleep_ms", NULL, 0);
  p->insert_sleep_ms = setting(config, "insert_sleep_ms", NULL, 0);
  setting(config, "count_file", p->count_file, sizeof p->count_file);
  *cache = (TRITONCACHE_Cache*)p;
  return NULL;
}

TRITONSERVER_Error*
TRITONCACHE_CacheFinalize(TRITONCACHE_Cache* cache)
{
  struct probe* p = (struct probe*)cache;
  for (size_t i = 0; i < SLOTS; i++) {
    free(p->slots[i].key);
    free(p->slots[i].data);
  }
  pthread_mutex_destroy(&p->mu);
  free(p);
  return NULL;
}

// expect fails the check named what unless err has code (0: no error).
static const char*
expect(TRITONSERVER_Error* err, int code, const char* what)
{
  int got = err == NULL ? 0 : (int)TRITONSERVER_ErrorCode(err) + 100;
  TRITONSERVER_ErrorDelete(err);
  return got == (code == 0 ? 0 : code + 100) ? NULL : what;
}

#define INVALID TRITONSERVER_ERROR_INVALID_ARG
#define CHECK(call, code, what)                    \
  do {                                             \
    const char* f_ = expect((call), (code), what); \
    if (f_ != NULL)                                \
      return f_;                                   \
  } while (0)

// bad_arguments calls the host functions as a careless cache would, and
// returns the first that did not refuse as it should (NULL: all did).
static const char*
bad_arguments(
    struct probe* p, TRITONCACHE_CacheEntry* entry,
    TRITONCACHE_Allocator* allocator, int lookup)
{
  size_t n = 0;
  void* base = NULL;
  TRITONSERVER_BufferAttributes* attrs = NULL;
  CHECK(TRITONCACHE_ApiVersion(NULL, NULL), INVALID, "ApiVersion NULL");
  CHECK(TRITONCACHE_CacheEntryBufferCount(NULL, &n), INVALID, "count NULL");
  CHECK(
      TRITONCACHE_CacheEntryBufferCount(entry, NULL), INVALID,
      "count NULL out");
  CHECK(
      TRITONCACHE_CacheEntryBufferCount((TRITONCACHE_CacheEntry*)p, &n),
      INVALID, "count made-up handle");
  CHECK(
      TRITONCACHE_CacheEntryBufferCount((TRITONCACHE_CacheEntry*)allocator, &n),
      INVALID, "count allocator as entry");
  if (p->old_entry != NULL) {
    CHECK(
        TRITONCACHE_CacheEntryBufferCount(p->old_entry, &n), INVALID,
        "count stale entry");
    CHECK(
        TRITONCACHE_Copy(p->old_allocator, entry), INVALID,
        "copy stale allocator");
  }
  CHECK(TRITONSERVER_BufferAttributesNew(&attrs), 0, "attributes");
  CHECK(
      TRITONCACHE_CacheEntryGetBuffer(entry, 99, &base, attrs), INVALID,
      "get out of range");
  CHECK(
      TRITONCACHE_CacheEntryGetBuffer(entry, 0, NULL, attrs), INVALID,
      "get NULL base");
  CHECK(
      TRITONCACHE_CacheEntryGetBuffer(entry, 0, &base, NULL), INVALID,
      "get NULL attributes");
  CHECK(
      TRITONCACHE_CacheEntrySetBuffer(entry, 99, &n, NULL), INVALID,
      "set out of range");
  TRITONSERVER_BufferAttributesSetByteSize(attrs, 8);
  TRITONSERVER_BufferAttributesSetMemoryType(attrs, TRITONSERVER_MEMORY_GPU);
  CHECK(
      TRITONCACHE_CacheEntryAddBuffer(entry, &n, attrs), INVALID,
      "add GPU buffer");
  TRITONSERVER_BufferAttributesSetMemoryType(attrs, TRITONSERVER_MEMORY_CPU);
  CHECK(
      TRITONCACHE_CacheEntryAddBuffer(entry, NULL, attrs), INVALID,
      "add NULL base");
  CHECK(
      TRITONCACHE_CacheEntryAddBuffer(entry, &n, NULL), INVALID,
      "add NULL attributes");
  CHECK(TRITONCACHE_Copy(NULL, entry), INVALID, "copy NULL allocator");
  CHECK(TRITONCACHE_Copy(allocator, NULL), INVALID, "copy NULL entry");
  if (!lookup) {
    size_t size = 0;
    CHECK(TRITONCACHE_CacheEntryBufferCount(entry, &n), 0, "count");
    if (n != 1)
      return "an insert's entry holds one buffer";
    CHECK(TRITONCACHE_CacheEntryGetBuffer(entry, 0, &base, attrs), 0, "get");
    TRITONSERVER_BufferAttributesByteSize(attrs, &size);
    TRITONSERVER_BufferAttributesSetByteSize(attrs, size + 1);
    CHECK(
        TRITONCACHE_CacheEntrySetBuffer(entry, 0, base, attrs), INVALID,
        "set with another size");
  } else {
    CHECK(TRITONCACHE_CacheEntryBufferCount(entry, &n), 0, "count");
    if (n != 0)
      return "a lookup's entry starts empty";
  }
  TRITONSERVER_BufferAttributesDelete(attrs);
  p->old_entry = entry;
  p->old_allocator = allocator;
  return NULL;
}

static TRITONSERVER_Error*
checked(
    struct probe* p, TRITONCACHE_CacheEntry* entry,
    TRITONCACHE_Allocator* allocator, int lookup)
{
  if (!p->checks)
    return NULL;
  pthread_mutex_lock(&p->mu);
  const char* failed = bad_arguments(p, entry, allocator, lookup);
  pthread_mutex_unlock(&p->mu);
  if (failed == NULL)
    return NULL;
  char msg[256];
  snprintf(msg, sizeof msg, "check failed: %s", failed);
  return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL, msg);
}

TRITONSERVER_Error*
TRITONCACHE_CacheInsert(
    TRITONCACHE_Cache* cache, const char* key, TRITONCACHE_CacheEntry* entry,
    TRITONCACHE_Allocator* allocator)
{
  struct probe* p = (struct probe*)cache;
  count(p, "insert");
  if (p->insert_sleep_ms > 0)
    usleep((useconds_t)p->insert_sleep_ms * 1000);
  TRITONSERVER_Error* err = checked(p, entry, allocator, 0);
  if (err != NULL)
    return err;
  if (p->insert_error) {
    return TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_INTERNAL, "the probe cache refuses to insert");
  }
  void* base = NULL;
  TRITONSERVER_BufferAttributes* attrs = NULL;
  size_t size = 0;
  if ((err = TRITONSERVER_BufferAttributesNew(&attrs)) != NULL)
    return err;
  err = TRITONCACHE_CacheEntryGetBuffer(entry, 0, &base, attrs);
  if (err == NULL)
    err = TRITONSERVER_BufferAttributesByteSize(attrs, &size);
  TRITONSERVER_BufferAttributesDelete(attrs);
  if (err != NULL)
    return err;
  pthread_mutex_lock(&p->mu);
  for (size_t i = 0; i < SLOTS; i++) {
    if (p->slots[i].key != NULL && strcmp(p->slots[i].key, key) == 0) {
      pthread_mutex_unlock(&p->mu);
      return TRITONSERVER_ErrorNew(
          TRITONSERVER_ERROR_ALREADY_EXISTS, "key already exists");
    }
  }
  struct slot* s = &p->slots[p->next++ % SLOTS];
  free(s->key);
  free(s->data);
  s->key = strdup(key);
  s->data = malloc(size > 0 ? size : 1);
  s->size = size;
  err = TRITONCACHE_CacheEntrySetBuffer(entry, 0, s->data, NULL);
  if (err == NULL)
    err = TRITONCACHE_Copy(allocator, entry);
  pthread_mutex_unlock(&p->mu);
  if (err == NULL && p->checks &&
      expect(TRITONCACHE_Copy(allocator, entry), INVALID, "copy twice")) {
    return TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_INTERNAL, "check failed: copy twice");
  }
  return err;
}

TRITONSERVER_Error*
TRITONCACHE_CacheLookup(
    TRITONCACHE_Cache* cache, const char* key, TRITONCACHE_CacheEntry* entry,
    TRITONCACHE_Allocator* allocator)
{
  struct probe* p = (struct probe*)cache;
  count(p, "lookup");
  if (p->lookup_sleep_ms > 0)
    usleep((useconds_t)p->lookup_sleep_ms * 1000);
  TRITONSERVER_Error* err = checked(p, entry, allocator, 1);
  if (err != NULL)
    return err;
  if (p->lookup_error) {
    return TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_INTERNAL, "the probe cache refuses to look up");
  }
  pthread_mutex_lock(&p->mu);
  struct slot* s = NULL;
  for (size_t i = 0; i < SLOTS && s == NULL; i++) {
    if (p->slots[i].key != NULL && strcmp(p->slots[i].key, key) == 0)
      s = &p->slots[i];
  }
  if (s == NULL) {
    pthread_mutex_unlock(&p->mu);
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_NOT_FOUND, "no such key");
  }
  TRITONSERVER_BufferAttributes* attrs = NULL;
  err = TRITONSERVER_BufferAttributesNew(&attrs);
  if (err == NULL) {
    TRITONSERVER_BufferAttributesSetByteSize(attrs, s->size);
    TRITONSERVER_BufferAttributesSetMemoryType(attrs, TRITONSERVER_MEMORY_CPU);
    err = TRITONCACHE_CacheEntryAddBuffer(entry, s->data, attrs);
    TRITONSERVER_BufferAttributesDelete(attrs);
  }
  if (err == NULL && !p->no_copy)
    err = TRITONCACHE_Copy(allocator, entry);
  pthread_mutex_unlock(&p->mu);
  return err;
}
