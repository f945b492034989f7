// The pools of block_pool.h: per pool, a list per thread and a shared
// stack of batches under a mutex. Pure C.
#include "block_pool.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "objects.h"

// A free block: its first bytes link it to the next.
struct free_block {
  struct free_block* next;
};

// A chain of at most THOST_POOL_BATCH_BLOCKS free blocks, linked, NULL-ended.
struct batch {
  struct free_block* first;
  uint32_t count;
};

#define SHARED_BATCHES (THOST_POOL_SHARED_BLOCKS / THOST_POOL_BATCH_BLOCKS)

struct pool {
  size_t size;
  pthread_mutex_t mu;  // guards batches and nbatches
  uint32_t nbatches;
  struct batch batches[SHARED_BATCHES];
};

static struct pool pools[THOST_POOL_COUNT] = {
    [THOST_POOL_RESPONSE] =
        {.size = sizeof(struct thost_response),
         .mu = PTHREAD_MUTEX_INITIALIZER},
    [THOST_POOL_RSTATS] =
        {.size = sizeof(struct thost_response_statistics),
         .mu = PTHREAD_MUTEX_INITIALIZER},
    [THOST_POOL_RSTAT] =
        {.size = sizeof(struct thost_rstat), .mu = PTHREAD_MUTEX_INITIALIZER},
};

// A thread's own blocks, per pool: only that thread touches them.
struct thread_blocks {
  struct free_block* head[THOST_POOL_COUNT];
  uint32_t count[THOST_POOL_COUNT];
};

static __thread struct thread_blocks thread_blocks;
static __thread bool thread_registered;
static pthread_key_t thread_key;
static pthread_once_t thread_key_once = PTHREAD_ONCE_INIT;

static void
free_chain(struct free_block* b)
{
  while (b != NULL) {
    struct free_block* next = b->next;
    free(b);
    b = next;
  }
}

// Gives a batch to p's shared stack, or to malloc when the stack is full.
static void
give_batch(struct pool* p, struct batch b)
{
  bool kept = false;
  pthread_mutex_lock(&p->mu);
  if (p->nbatches < SHARED_BATCHES) {
    p->batches[p->nbatches++] = b;
    kept = true;
  }
  pthread_mutex_unlock(&p->mu);
  if (!kept)
    free_chain(b.first);
}

// Takes a batch from p's shared stack; false when it is empty.
static bool
take_batch(struct pool* p, struct batch* b)
{
  bool got = false;
  pthread_mutex_lock(&p->mu);
  if (p->nbatches > 0) {
    *b = p->batches[--p->nbatches];
    got = true;
  }
  pthread_mutex_unlock(&p->mu);
  return got;
}

// Runs when a thread that holds blocks exits: they go to the shared stacks
// (or to malloc past their bound).
static void
flush_thread(void* arg)
{
  struct thread_blocks* t = arg;
  for (int i = 0; i < THOST_POOL_COUNT; i++) {
    while (t->head[i] != NULL) {
      struct batch b = {.first = t->head[i], .count = 1};
      struct free_block* last = b.first;
      while (b.count < THOST_POOL_BATCH_BLOCKS && last->next != NULL) {
        last = last->next;
        b.count++;
      }
      t->head[i] = last->next;
      last->next = NULL;
      give_batch(&pools[i], b);
    }
    t->count[i] = 0;
  }
  // A later use on this thread (another key's destructor) registers again.
  thread_registered = false;
}

static void
create_thread_key(void)
{
  pthread_key_create(&thread_key, flush_thread);
}

// Has the thread's blocks flushed when it exits.
static void
register_thread(void)
{
  pthread_once(&thread_key_once, create_thread_key);
  pthread_setspecific(thread_key, &thread_blocks);
  thread_registered = true;
}

void*
thost_block_get(enum thost_pool pool)
{
  struct thread_blocks* t = &thread_blocks;
  struct free_block* b = t->head[pool];
  if (b == NULL) {
    struct batch got;
    if (!take_batch(&pools[pool], &got))
      return malloc(pools[pool].size);
    if (!thread_registered)
      register_thread();
    b = got.first;
    t->count[pool] = got.count;
  }
  t->head[pool] = b->next;
  t->count[pool]--;
  return b;
}

void
thost_block_put(enum thost_pool pool, void* block)
{
  if (block == NULL)
    return;
  struct thread_blocks* t = &thread_blocks;
  if (t->count[pool] >= THOST_POOL_THREAD_BLOCKS) {
    // Full: its oldest-pushed half stays, the newest half goes shared.
    struct batch out = {.first = t->head[pool], .count = 1};
    struct free_block* last = out.first;
    while (out.count < THOST_POOL_BATCH_BLOCKS) {
      last = last->next;
      out.count++;
    }
    t->head[pool] = last->next;
    last->next = NULL;
    t->count[pool] -= out.count;
    give_batch(&pools[pool], out);
  }
  if (!thread_registered)
    register_thread();
  struct free_block* b = block;
  b->next = t->head[pool];
  t->head[pool] = b;
  t->count[pool]++;
}
