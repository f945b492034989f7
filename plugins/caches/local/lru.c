/*
 * lru.c: the local cache's table (see lru.h): a hash table of entries
 * chained per bucket, doubled as it fills, and a doubly linked recency
 * list.
 */
#include "lru.h"

#include <stdlib.h>
#include <string.h>

#define LRU_MIN_BUCKETS 1024

size_t
lru_cost(size_t key_len, size_t size)
{
  return sizeof(struct lru_entry) + key_len + 1 + size;
}

/* FNV-1a, 64 bits. */
static uint64_t
hash_key(const char* key)
{
  uint64_t h = 14695981039346656037ull;
  for (const unsigned char* p = (const unsigned char*)key; *p != '\0'; p++) {
    h ^= *p;
    h *= 1099511628211ull;
  }
  return h;
}

bool
lru_init(struct lru* t, size_t capacity)
{
  memset(t, 0, sizeof(*t));
  t->capacity = capacity;
  t->nbuckets = LRU_MIN_BUCKETS;
  t->buckets = calloc(t->nbuckets, sizeof(*t->buckets));
  t->head.prev = t->head.next = &t->head;
  return t->buckets != NULL;
}

static void
free_entry(struct lru_entry* e)
{
  free(e->key);
  free(e->data);
  free(e);
}

void
lru_free(struct lru* t)
{
  struct lru_entry* e = t->head.next;
  while (e != &t->head) {
    struct lru_entry* next = e->next;
    free_entry(e);
    e = next;
  }
  free(t->buckets);
  t->buckets = NULL;
}

static void
unlink_recency(struct lru_entry* e)
{
  e->prev->next = e->next;
  e->next->prev = e->prev;
}

static void
push_front(struct lru* t, struct lru_entry* e)
{
  e->next = t->head.next;
  e->prev = &t->head;
  t->head.next->prev = e;
  t->head.next = e;
}

struct lru_entry*
lru_find(struct lru* t, const char* key)
{
  uint64_t h = hash_key(key);
  for (struct lru_entry* e = t->buckets[h & (t->nbuckets - 1)]; e != NULL;
       e = e->chain) {
    if (e->hash == h && strcmp(e->key, key) == 0) {
      unlink_recency(e);
      push_front(t, e);
      return e;
    }
  }
  return NULL;
}

void
lru_remove(struct lru* t, struct lru_entry* e)
{
  struct lru_entry** p = &t->buckets[e->hash & (t->nbuckets - 1)];
  while (*p != e) p = &(*p)->chain;
  *p = e->chain;
  unlink_recency(e);
  t->used -= e->cost;
  t->count--;
  free_entry(e);
}

bool
lru_make_room(struct lru* t, size_t cost)
{
  if (cost > t->capacity)
    return false;
  while (t->capacity - t->used < cost) {
    lru_remove(t, t->head.prev); /* the least recently used */
    t->evictions++;
  }
  return true;
}

/* grow doubles the buckets once they hold twice as many entries; a table
 * that cannot grow keeps its buckets, with longer chains. */
static void
grow(struct lru* t)
{
  size_t n = t->nbuckets * 2;
  struct lru_entry** b = calloc(n, sizeof(*b));
  if (b == NULL)
    return;
  for (struct lru_entry* e = t->head.next; e != &t->head; e = e->next) {
    e->chain = b[e->hash & (n - 1)];
    b[e->hash & (n - 1)] = e;
  }
  free(t->buckets);
  t->buckets = b;
  t->nbuckets = n;
}

struct lru_entry*
lru_add(struct lru* t, char* key, void* data, size_t size)
{
  struct lru_entry* e = calloc(1, sizeof(*e));
  if (e == NULL)
    return NULL;
  e->key = key;
  e->data = data;
  e->size = size;
  e->cost = lru_cost(strlen(key), size);
  e->hash = hash_key(key);
  if (t->count + 1 > 2 * t->nbuckets)
    grow(t);
  struct lru_entry** bucket = &t->buckets[e->hash & (t->nbuckets - 1)];
  e->chain = *bucket;
  *bucket = e;
  push_front(t, e);
  t->used += e->cost;
  t->count++;
  return e;
}
