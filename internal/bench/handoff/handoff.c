// The three ways handoff (main.go) moves items from a C thread to Go: a
// crossing per item, a mutex-guarded ring drained in batches, and a
// lock-free single-producer ring drained in batches. A drainer parks on a
// condition variable only when its ring is empty.
#include "handoff.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "_cgo_export.h"

#define CAP 4096

static pthread_t producer;

// ---- A crossing per item ----------------------------------------------------

static void*
call_each(void* arg)
{
  long n = (long)arg;
  for (long i = 0; i < n; i++) goItem((uintptr_t)i);
  return NULL;
}

void
run_callbacks(long n)
{
  pthread_create(&producer, NULL, call_each, (void*)n);
  pthread_join(producer, NULL);
}

// ---- A mutex-guarded ring ---------------------------------------------------

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nonempty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t room = PTHREAD_COND_INITIALIZER;
static uintptr_t ring[CAP];
static long head, tail;
static int drainer_waits, producer_waits, done;

static void*
enqueue_each(void* arg)
{
  long n = (long)arg;
  for (long i = 0; i < n; i++) {
    pthread_mutex_lock(&mu);
    while (tail - head == CAP) {
      producer_waits = 1;
      pthread_cond_wait(&room, &mu);
    }
    ring[tail++ % CAP] = (uintptr_t)i;
    int wake = drainer_waits;
    pthread_mutex_unlock(&mu);
    if (wake)
      pthread_cond_signal(&nonempty);
  }
  pthread_mutex_lock(&mu);
  done = 1;
  pthread_mutex_unlock(&mu);
  pthread_cond_signal(&nonempty);
  return NULL;
}

void
start_mutex_ring(long n)
{
  head = tail = 0;
  done = 0;
  pthread_create(&producer, NULL, enqueue_each, (void*)n);
}

long
drain_mutex_ring(uintptr_t* out, long max)
{
  pthread_mutex_lock(&mu);
  while (tail == head && !done) {
    drainer_waits = 1;
    pthread_cond_wait(&nonempty, &mu);
    drainer_waits = 0;
  }
  long k = 0;
  while (head < tail && k < max) out[k++] = ring[head++ % CAP];
  int wake = producer_waits;
  producer_waits = 0;
  pthread_mutex_unlock(&mu);
  if (wake)
    pthread_cond_signal(&room);
  return k > 0 ? k : -1;
}

// ---- A lock-free single-producer ring ---------------------------------------

static uintptr_t lf_ring[CAP];
static _Atomic long lf_head, lf_tail;
static atomic_int lf_waits, lf_done;
static pthread_mutex_t lf_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t lf_cv = PTHREAD_COND_INITIALIZER;

static void
lf_wake(void)
{
  if (atomic_load(&lf_waits)) {
    pthread_mutex_lock(&lf_mu);
    pthread_cond_signal(&lf_cv);
    pthread_mutex_unlock(&lf_mu);
  }
}

static void*
push_each(void* arg)
{
  long n = (long)arg;
  for (long i = 0; i < n; i++) {
    long t = atomic_load_explicit(&lf_tail, memory_order_relaxed);
    while (t - atomic_load_explicit(&lf_head, memory_order_acquire) == CAP)
      sched_yield();
    lf_ring[t % CAP] = (uintptr_t)i;
    atomic_store(&lf_tail, t + 1);
    lf_wake();
  }
  atomic_store(&lf_done, 1);
  lf_wake();
  return NULL;
}

void
start_lockfree_ring(long n)
{
  lf_head = lf_tail = 0;
  lf_done = 0;
  pthread_create(&producer, NULL, push_each, (void*)n);
}

long
drain_lockfree_ring(uintptr_t* out, long max)
{
  for (;;) {
    long h = atomic_load_explicit(&lf_head, memory_order_relaxed);
    long t = atomic_load_explicit(&lf_tail, memory_order_acquire);
    if (t != h) {
      long k = 0;
      while (h < t && k < max) out[k++] = lf_ring[h++ % CAP];
      atomic_store_explicit(&lf_head, h, memory_order_release);
      return k;
    }
    if (atomic_load(&lf_done) && atomic_load(&lf_tail) == h)
      return -1;
    pthread_mutex_lock(&lf_mu);
    atomic_store(&lf_waits, 1);
    if (atomic_load(&lf_tail) == h && !atomic_load(&lf_done))
      pthread_cond_wait(&lf_cv, &lf_mu);
    atomic_store(&lf_waits, 0);
    pthread_mutex_unlock(&lf_mu);
  }
}

void
join_producer(void)
{
  pthread_join(producer, NULL);
}
