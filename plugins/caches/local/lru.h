/*
 * lru.h: the table of the local cache: entries by key, bounded in bytes,
 * the least recently used evicted first. Not thread-safe: the cache holds
 * its lock around every call.
 *
 * An entry costs its data, its key and the bookkeeping of one entry
 * (lru_cost); the table never holds more than its capacity in that
 * measure.
 */
#ifndef TRITONHOST_CACHES_C_LOCAL_LRU_H
#define TRITONHOST_CACHES_C_LOCAL_LRU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lru_entry {
  char* key;   /* NUL-terminated, owned */
  void* data;  /* owned; NULL for an empty entry */
  size_t size; /* bytes of data */
  size_t cost; /* lru_cost of the entry */
  uint64_t hash;
  struct lru_entry* prev; /* recency list: head.next is the newest */
  struct lru_entry* next;
  struct lru_entry* chain; /* next entry of the same bucket */
};

struct lru {
  size_t capacity; /* bytes */
  size_t used;     /* bytes */
  size_t count;
  uint64_t evictions;
  size_t nbuckets; /* a power of two */
  struct lru_entry** buckets;
  struct lru_entry head; /* sentinel of the recency list */
};

/* What an entry of key_len and size bytes costs. */
size_t lru_cost(size_t key_len, size_t size);

/* Makes an empty table of capacity bytes; false when out of memory. */
bool lru_init(struct lru* t, size_t capacity);

/* Frees every entry and the table's memory. */
void lru_free(struct lru* t);

/* Returns the entry of key, made the most recently used, or NULL. */
struct lru_entry* lru_find(struct lru* t, const char* key);

/* Evicts the least recently used entries until cost bytes are free;
 * false, evicting nothing, when cost is more than the capacity. */
bool lru_make_room(struct lru* t, size_t cost);

/* Adds an entry that lru_find does not have, taking ownership of key and
 * data, after lru_make_room made room for its cost. Returns the entry, or
 * NULL (owning nothing) when out of memory. */
struct lru_entry* lru_add(struct lru* t, char* key, void* data, size_t size);

/* Removes and frees entry e. */
void lru_remove(struct lru* t, struct lru_entry* e);

#endif /* TRITONHOST_CACHES_C_LOCAL_LRU_H */
