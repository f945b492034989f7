/*
 * local_cache.c: the "local" response cache (libtritoncache_local.so) in
 * plain C11, against tritoncache.h.
 *
 * An in-memory table of responses bounded by its "size" setting, in bytes
 * (--cache-config local,size=N, or --response-cache-byte-size N): when an
 * insert does not fit, the least recently used entries are evicted first;
 * a response larger than the whole cache is refused. Every lookup and
 * insert holds one lock, copies included, so an entry is never evicted
 * while the server copies it.
 *
 * Like Triton's local cache it reports, as gauges without labels,
 * nv_cache_num_entries, nv_cache_num_lookups, nv_cache_num_hits,
 * nv_cache_num_misses, nv_cache_num_evictions and nv_cache_util (the part
 * of the size in use), updated as they change.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cJSON.h"
#include "lru.h"
#include "triton/core/tritoncache.h"

#define RETURN_IF_ERROR(X)           \
  do {                               \
    TRITONSERVER_Error* err__ = (X); \
    if (err__ != NULL)               \
      return err__;                  \
  } while (0)

#define LOG(LEVEL, ...)                                              \
  do {                                                               \
    if (TRITONSERVER_LogIsEnabled(LEVEL)) {                          \
      char msg__[512];                                               \
      snprintf(msg__, sizeof msg__, __VA_ARGS__);                    \
      TRITONSERVER_Error* e__ =                                      \
          TRITONSERVER_LogMessage(LEVEL, __FILE__, __LINE__, msg__); \
      TRITONSERVER_ErrorDelete(e__);                                 \
    }                                                                \
  } while (0)

/* ---- metrics ------------------------------------------------------------ */

enum {
  GAUGE_ENTRIES,
  GAUGE_LOOKUPS,
  GAUGE_HITS,
  GAUGE_MISSES,
  GAUGE_EVICTIONS,
  GAUGE_UTIL,
  GAUGE_COUNT
};

static const char* const gauge_names[GAUGE_COUNT][2] = {
    {"nv_cache_num_entries", "Number of responses stored in response cache"},
    {"nv_cache_num_lookups", "Number of cache lookups in response cache"},
    {"nv_cache_num_hits", "Number of cache hits in response cache"},
    {"nv_cache_num_misses", "Number of cache misses in response cache"},
    {"nv_cache_num_evictions", "Number of cache evictions in response cache"},
    {"nv_cache_util", "Cache utilization [0.0 - 1.0]"},
};

struct local_cache {
  pthread_mutex_t mu;
  struct lru table;
  uint64_t lookups, hits, misses; /* guarded by mu */
  TRITONSERVER_MetricFamily* families[GAUGE_COUNT];
  TRITONSERVER_Metric* gauges[GAUGE_COUNT];
};

/* Makes the gauges. A server that cannot give them (metrics off) gets
 * none: the cache works without. */
static void
init_metrics(struct local_cache* c)
{
  for (int i = 0; i < GAUGE_COUNT; i++) {
    TRITONSERVER_Error* err = TRITONSERVER_MetricFamilyNew(
        &c->families[i], TRITONSERVER_METRIC_KIND_GAUGE, gauge_names[i][0],
        gauge_names[i][1]);
    if (err == NULL) {
      err = TRITONSERVER_MetricNew(&c->gauges[i], c->families[i], NULL, 0);
    }
    if (err != NULL) {
      LOG(TRITONSERVER_LOG_WARN, "local cache: no metric %s: %s",
          gauge_names[i][0], TRITONSERVER_ErrorMessage(err));
      TRITONSERVER_ErrorDelete(err);
    }
  }
}

static void
free_metrics(struct local_cache* c)
{
  for (int i = 0; i < GAUGE_COUNT; i++) {
    if (c->gauges[i] != NULL)
      TRITONSERVER_ErrorDelete(TRITONSERVER_MetricDelete(c->gauges[i]));
    if (c->families[i] != NULL)
      TRITONSERVER_ErrorDelete(TRITONSERVER_MetricFamilyDelete(c->families[i]));
  }
}

/* Sets the gauges from the counts; the caller holds c->mu. */
static void
update_metrics(struct local_cache* c)
{
  const double values[GAUGE_COUNT] = {
      (double)c->table.count,
      (double)c->lookups,
      (double)c->hits,
      (double)c->misses,
      (double)c->table.evictions,
      (double)c->table.used / (double)c->table.capacity,
  };
  for (int i = 0; i < GAUGE_COUNT; i++) {
    if (c->gauges[i] != NULL)
      TRITONSERVER_ErrorDelete(TRITONSERVER_MetricSet(c->gauges[i], values[i]));
  }
}

/* ---- configuration --------------------------------------------------------
 */

/* Reads "size" from the JSON configuration: a string of digits, as the
 * server passes --cache-config settings, or a number. */
static TRITONSERVER_Error*
parse_size(const char* config, size_t* size)
{
  cJSON* root = cJSON_Parse(config);
  if (root == NULL) {
    return TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_INVALID_ARG,
        "local cache: the configuration is not a JSON object");
  }
  const cJSON* item = cJSON_GetObjectItemCaseSensitive(root, "size");
  TRITONSERVER_Error* err = NULL;
  unsigned long long v = 0;
  if (cJSON_IsString(item) && item->valuestring[0] >= '0' &&
      item->valuestring[0] <= '9') {
    char* end = NULL;
    errno = 0;
    v = strtoull(item->valuestring, &end, 10);
    if (errno != 0 || *end != '\0')
      item = NULL;
  } else if (
      cJSON_IsNumber(item) && item->valuedouble >= 0 &&
      item->valuedouble < 1.8e19 &&
      item->valuedouble == (double)(unsigned long long)item->valuedouble) {
    v = (unsigned long long)item->valuedouble;
  } else {
    item = NULL;
  }
  if (item == NULL || v == 0 || v > SIZE_MAX) {
    err = TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_INVALID_ARG,
        "local cache: the configuration needs 'size', a positive number of "
        "bytes (--cache-config local,size=<bytes>)");
  }
  cJSON_Delete(root);
  *size = (size_t)v;
  return err;
}

/* ---- entry points ---------------------------------------------------------
 */

TRITONSERVER_Error*
TRITONCACHE_CacheInitialize(TRITONCACHE_Cache** cache, const char* config)
{
  if (cache == NULL || config == NULL) {
    return TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_INVALID_ARG, "local cache: cache or config is NULL");
  }
  uint32_t major = 0, minor = 0;
  RETURN_IF_ERROR(TRITONCACHE_ApiVersion(&major, &minor));
  if (major != TRITONCACHE_API_VERSION_MAJOR ||
      minor < TRITONCACHE_API_VERSION_MINOR) {
    return TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_UNSUPPORTED,
        "triton cache API version does not support this cache");
  }
  size_t size = 0;
  RETURN_IF_ERROR(parse_size(config, &size));
  struct local_cache* c = calloc(1, sizeof(*c));
  if (c == NULL || !lru_init(&c->table, size)) {
    free(c);
    return TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_INTERNAL, "local cache: out of memory");
  }
  pthread_mutex_init(&c->mu, NULL);
  init_metrics(c);
  update_metrics(c);
  LOG(TRITONSERVER_LOG_INFO, "local cache: %zu bytes", size);
  *cache = (TRITONCACHE_Cache*)c;
  return NULL;
}

TRITONSERVER_Error*
TRITONCACHE_CacheFinalize(TRITONCACHE_Cache* cache)
{
  struct local_cache* c = (struct local_cache*)cache;
  if (c == NULL) {
    return TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_INVALID_ARG, "local cache: cache is NULL");
  }
  free_metrics(c);
  lru_free(&c->table);
  pthread_mutex_destroy(&c->mu);
  free(c);
  return NULL;
}

/* Reads the size of the entry's only buffer. */
static TRITONSERVER_Error*
entry_size(TRITONCACHE_CacheEntry* entry, size_t* size)
{
  size_t count = 0;
  RETURN_IF_ERROR(TRITONCACHE_CacheEntryBufferCount(entry, &count));
  if (count != 1) {
    return TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_INVALID_ARG,
        "local cache: an entry must hold exactly one buffer");
  }
  TRITONSERVER_BufferAttributes* attrs = NULL;
  RETURN_IF_ERROR(TRITONSERVER_BufferAttributesNew(&attrs));
  void* base = NULL;
  TRITONSERVER_Error* err =
      TRITONCACHE_CacheEntryGetBuffer(entry, 0, &base, attrs);
  if (err == NULL)
    err = TRITONSERVER_BufferAttributesByteSize(attrs, size);
  TRITONSERVER_BufferAttributesDelete(attrs);
  return err;
}

// check_call refuses an insert or a lookup missing one of its arguments.
static TRITONSERVER_Error*
check_call(
    const struct local_cache* c, const char* key,
    const TRITONCACHE_CacheEntry* entry, const TRITONCACHE_Allocator* allocator)
{
  if (c == NULL || key == NULL || entry == NULL || allocator == NULL) {
    return TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_INVALID_ARG,
        "local cache: cache, key, entry or allocator is NULL");
  }
  return NULL;
}

TRITONSERVER_Error*
TRITONCACHE_CacheInsert(
    TRITONCACHE_Cache* cache, const char* key, TRITONCACHE_CacheEntry* entry,
    TRITONCACHE_Allocator* allocator)
{
  struct local_cache* c = (struct local_cache*)cache;
  RETURN_IF_ERROR(check_call(c, key, entry, allocator));
  size_t size = 0;
  RETURN_IF_ERROR(entry_size(entry, &size));
  size_t cost = lru_cost(strlen(key), size);
  char* k = strdup(key);
  void* data = malloc(size > 0 ? size : 1);
  if (k == NULL || data == NULL) {
    free(k);
    free(data);
    return TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_INTERNAL, "local cache: out of memory");
  }
  char msg[256];
  TRITONSERVER_Error* err = NULL;
  pthread_mutex_lock(&c->mu);
  if (lru_find(&c->table, key) != NULL) {
    err = TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_ALREADY_EXISTS, "local cache: key already exists");
  } else if (!lru_make_room(&c->table, cost)) {
    snprintf(
        msg, sizeof msg,
        "local cache: an entry of %zu bytes does not fit in the cache's %zu",
        cost, c->table.capacity);
    err = TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG, msg);
  } else {
    /* The server copies the response into our buffer. */
    err = TRITONCACHE_CacheEntrySetBuffer(entry, 0, data, NULL);
    if (err == NULL)
      err = TRITONCACHE_Copy(allocator, entry);
    if (err == NULL && lru_add(&c->table, k, data, size) == NULL) {
      err = TRITONSERVER_ErrorNew(
          TRITONSERVER_ERROR_INTERNAL, "local cache: out of memory");
    }
    if (err == NULL)
      k = NULL, data = NULL; /* the table owns them */
  }
  update_metrics(c);
  pthread_mutex_unlock(&c->mu);
  free(k);
  free(data);
  return err;
}

TRITONSERVER_Error*
TRITONCACHE_CacheLookup(
    TRITONCACHE_Cache* cache, const char* key, TRITONCACHE_CacheEntry* entry,
    TRITONCACHE_Allocator* allocator)
{
  struct local_cache* c = (struct local_cache*)cache;
  RETURN_IF_ERROR(check_call(c, key, entry, allocator));
  TRITONSERVER_BufferAttributes* attrs = NULL;
  RETURN_IF_ERROR(TRITONSERVER_BufferAttributesNew(&attrs));
  TRITONSERVER_Error* err = NULL;
  pthread_mutex_lock(&c->mu);
  c->lookups++;
  struct lru_entry* e = lru_find(&c->table, key);
  if (e == NULL) {
    c->misses++;
    err = TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_NOT_FOUND, "local cache: key not found");
  } else {
    c->hits++;
    err = TRITONSERVER_BufferAttributesSetByteSize(attrs, e->size);
    if (err == NULL) {
      err = TRITONSERVER_BufferAttributesSetMemoryType(
          attrs, TRITONSERVER_MEMORY_CPU);
    }
    if (err == NULL)
      err = TRITONCACHE_CacheEntryAddBuffer(entry, e->data, attrs);
    /* Copied under the lock: the entry cannot be evicted meanwhile. */
    if (err == NULL)
      err = TRITONCACHE_Copy(allocator, entry);
  }
  update_metrics(c);
  pthread_mutex_unlock(&c->mu);
  TRITONSERVER_BufferAttributesDelete(attrs);
  return err;
}
