// Host memory for the outputs of responses, kept when a response is freed
// for the next output of about its size. A lent output (lent.go) lives
// until the wire has written it, so outputs of concurrent requests overlap
// in time; malloc then hands large buffers back to the system and takes
// them again (mmap, heap trimming), and every page of every output costs a
// page fault. The cache keeps at most max_bytes in at most
// THOST_OUTBUF_MAX_COUNT buffers, each of at least THOST_OUTBUF_MIN_BYTES
// (smaller ones malloc keeps well on its own), evicting the oldest. Safe
// from any thread.
#include <stdlib.h>

#include "objects.h"

// A cached buffer; the header lives in the buffer's own first bytes.
struct thost_outbuf {
  struct thost_outbuf* next;  // toward older
  uint64_t cap;
};

void
thost_outbuf_init(struct thost_outbuf_cache* c, uint64_t max_bytes)
{
  pthread_mutex_init(&c->mu, NULL);
  c->max_bytes = max_bytes;
}

void*
thost_outbuf_get(struct thost_outbuf_cache* c, uint64_t size, uint64_t* cap)
{
  *cap = size;
  if (size < THOST_OUTBUF_MIN_BYTES)
    return malloc(size);
  pthread_mutex_lock(&c->mu);
  for (struct thost_outbuf** p = &c->newest; *p != NULL; p = &(*p)->next) {
    struct thost_outbuf* b = *p;
    // Large enough, and not more than twice as large: a small output does
    // not hold a large buffer.
    if (b->cap >= size && b->cap / 2 <= size) {
      *p = b->next;
      c->bytes -= b->cap;
      c->count--;
      pthread_mutex_unlock(&c->mu);
      *cap = b->cap;
      return b;
    }
  }
  pthread_mutex_unlock(&c->mu);
  return malloc(size);
}

// Unlinks the oldest cached buffer; the caller frees it. c->mu is held.
static struct thost_outbuf*
take_oldest(struct thost_outbuf_cache* c)
{
  struct thost_outbuf** p = &c->newest;
  while ((*p)->next != NULL) p = &(*p)->next;
  struct thost_outbuf* b = *p;
  *p = NULL;
  c->bytes -= b->cap;
  c->count--;
  return b;
}

void
thost_outbuf_put(struct thost_outbuf_cache* c, void* buf, uint64_t cap)
{
  if (buf == NULL)
    return;
  if (cap < THOST_OUTBUF_MIN_BYTES) {
    free(buf);
    return;
  }
  struct thost_outbuf* evicted[THOST_OUTBUF_MAX_COUNT];
  int n = 0;
  pthread_mutex_lock(&c->mu);
  if (cap > c->max_bytes) {
    pthread_mutex_unlock(&c->mu);
    free(buf);
    return;
  }
  while (c->count > 0 &&
         (c->bytes + cap > c->max_bytes || c->count == THOST_OUTBUF_MAX_COUNT))
    evicted[n++] = take_oldest(c);
  struct thost_outbuf* b = buf;
  b->cap = cap;
  b->next = c->newest;
  c->newest = b;
  c->bytes += cap;
  c->count++;
  pthread_mutex_unlock(&c->mu);
  for (int i = 0; i < n; i++) free(evicted[i]);
}

void
thost_outbuf_close(struct thost_outbuf_cache* c)
{
  pthread_mutex_lock(&c->mu);
  c->max_bytes = 0;
  struct thost_outbuf* b = c->newest;
  c->newest = NULL;
  c->bytes = 0;
  c->count = 0;
  pthread_mutex_unlock(&c->mu);
  while (b != NULL) {
    struct thost_outbuf* next = b->next;
    free(b);
    b = next;
  }
}

void
thost_outbuf_stats(
    struct thost_outbuf_cache* c, uint64_t* count, uint64_t* bytes)
{
  pthread_mutex_lock(&c->mu);
  *count = c->count;
  *bytes = c->bytes;
  pthread_mutex_unlock(&c->mu);
}
