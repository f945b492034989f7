// Servers' C side: creation, the ambient server of a thread, and the calls
// into a backend's entry points, which make the calling thread work for the
// server whose object they pass.
#include "host.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

static __thread struct thost_host* thost_thread_host;
__thread struct thost_instance* thost_executing_instance;

const unsigned char thost_zeros[256];
static struct thost_host* thost_newest_host;  // atomic; set by Go (host.go)

struct thost_host*
thost_host_new(uint64_t key, uint64_t outbuf_bytes)
{
  struct thost_host* h = calloc(1, sizeof(*h));
  if (h == NULL)
    return NULL;
  h->key = key;
  thost_outbuf_init(&h->outbufs, outbuf_bytes);
  h->log_on[TRITONSERVER_LOG_INFO] = 1;
  h->log_on[TRITONSERVER_LOG_WARN] = 1;
  h->log_on[TRITONSERVER_LOG_ERROR] = 1;
  h->server = thost_handle_new(THOST_KIND_SERVER, h);
  return h;
}

void
thost_host_close(struct thost_host* h)
{
  __atomic_store_n(&h->closed, 1, __ATOMIC_RELEASE);
  thost_handle_free(h->server);
  h->server = 0;
  thost_outbuf_close(&h->outbufs);
}

void
thost_set_newest_host(struct thost_host* h)
{
  __atomic_store_n(&thost_newest_host, h, __ATOMIC_RELEASE);
}

struct thost_host*
thost_ambient_host(void)
{
  struct thost_host* h = thost_thread_host;
  if (h != NULL && !__atomic_load_n(&h->closed, __ATOMIC_ACQUIRE))
    return h;
  return __atomic_load_n(&thost_newest_host, __ATOMIC_ACQUIRE);
}

void
thost_enter_host(struct thost_host* h)
{
  thost_thread_host = h;
}

void
thost_host_set_log(struct thost_host* h, int level, bool on)
{
  if (level >= 0 && level < 4)
    __atomic_store_n(&h->log_on[level], on ? 1 : 0, __ATOMIC_RELAXED);
}

// ---- Live counters ----------------------------------------------------------
// The registry of the threads' counters (objects.h): every thread that
// counts on its own counters is listed until it exits, when its counts
// move to its server's counters.

__thread struct thost_thread_counts thost_thread_counts;
static __thread bool thost_thread_counts_listed;
static pthread_mutex_t thost_counts_mu = PTHREAD_MUTEX_INITIALIZER;
static struct thost_thread_counts* thost_counts_list;  // under thost_counts_mu
static pthread_key_t thost_counts_key;
static pthread_once_t thost_counts_once = PTHREAD_ONCE_INIT;

// Moves c's counts onto its server's counters. Under thost_counts_mu, so
// that no reader sees them in both places or in neither.
static void
fold_counts(struct thost_thread_counts* c)
{
  if (c->host == NULL)
    return;
  for (int i = 0; i < THOST_COUNT_MAX; i++) {
    int64_t v = __atomic_load_n(&c->live[i], __ATOMIC_RELAXED);
    if (v != 0) {
      __atomic_add_fetch(&c->host->live[i], v, __ATOMIC_RELAXED);
      __atomic_store_n(&c->live[i], 0, __ATOMIC_RELAXED);
    }
  }
}

// A thread's exit: its counts go to its server and it leaves the list. A
// later count on this thread (another key's destructor) lists it again.
static void
unlist_thread_counts(void* arg)
{
  struct thost_thread_counts* c = arg;
  pthread_mutex_lock(&thost_counts_mu);
  fold_counts(c);
  c->host = NULL;
  for (struct thost_thread_counts** p = &thost_counts_list; *p != NULL;
       p = &(*p)->next) {
    if (*p == c) {
      *p = c->next;
      break;
    }
  }
  pthread_mutex_unlock(&thost_counts_mu);
  thost_thread_counts_listed = false;
}

static void
create_counts_key(void)
{
  pthread_key_create(&thost_counts_key, unlist_thread_counts);
}

void
thost_count_slow(struct thost_host* h, int which, int64_t delta)
{
  if (h == NULL)
    return;
  struct thost_thread_counts* c = &thost_thread_counts;
  if (which == THOST_COUNT_LENT ||
      (c->host != NULL && c->host != h &&
       !__atomic_load_n(&c->host->closed, __ATOMIC_ACQUIRE))) {
    __atomic_add_fetch(&h->live[which], delta, __ATOMIC_RELAXED);
    return;
  }
  // Not counting yet, or for a closed server: count for h from now on.
  pthread_once(&thost_counts_once, create_counts_key);
  pthread_mutex_lock(&thost_counts_mu);
  fold_counts(c);
  c->host = h;
  if (!thost_thread_counts_listed) {
    c->next = thost_counts_list;
    thost_counts_list = c;
    thost_thread_counts_listed = true;
  }
  pthread_mutex_unlock(&thost_counts_mu);
  pthread_setspecific(thost_counts_key, c);
  int64_t v = __atomic_load_n(&c->live[which], __ATOMIC_RELAXED);
  __atomic_store_n(&c->live[which], v + delta, __ATOMIC_RELAXED);
}

int64_t
thost_host_live(struct thost_host* h, int which)
{
  pthread_mutex_lock(&thost_counts_mu);
  int64_t n = __atomic_load_n(&h->live[which], __ATOMIC_RELAXED);
  for (struct thost_thread_counts* c = thost_counts_list; c != NULL;
       c = c->next) {
    if (c->host == h)
      n += __atomic_load_n(&c->live[which], __ATOMIC_RELAXED);
  }
  pthread_mutex_unlock(&thost_counts_mu);
  return n;
}

// ---- Entry points -----------------------------------------------------------
// Each call makes the calling thread work for h while the backend runs, so
// that what the backend does without naming an object (logging, metric
// families) reaches h, then restores what the thread worked for before.

typedef TRITONSERVER_Error* (*backend_fn)(TRITONBACKEND_Backend*);
typedef TRITONSERVER_Error* (*attribute_fn)(
    TRITONBACKEND_Backend*, TRITONBACKEND_BackendAttribute*);
typedef TRITONSERVER_Error* (*model_fn)(TRITONBACKEND_Model*);
typedef TRITONSERVER_Error* (*instance_fn)(TRITONBACKEND_ModelInstance*);
typedef TRITONSERVER_Error* (*execute_fn)(
    TRITONBACKEND_ModelInstance*, TRITONBACKEND_Request**, const uint32_t);

#define WITH_HOST(h, call)                      \
  struct thost_host* saved = thost_thread_host; \
  thost_thread_host = (h);                      \
  TRITONSERVER_Error* err = (call);             \
  thost_thread_host = saved;                    \
  return err

TRITONSERVER_Error*
thost_call_backend(void* fn, struct thost_backend* b)
{
  WITH_HOST(
      b->host,
      ((backend_fn)fn)(THOST_AS_HANDLE(TRITONBACKEND_Backend, b->handle)));
}

TRITONSERVER_Error*
thost_call_attribute(
    void* fn, struct thost_backend* b, struct thost_backend_attributes* a)
{
  WITH_HOST(
      b->host, ((attribute_fn)fn)(
                   THOST_AS_HANDLE(TRITONBACKEND_Backend, b->handle),
                   THOST_AS_HANDLE(TRITONBACKEND_BackendAttribute, a->handle)));
}

TRITONSERVER_Error*
thost_call_model(void* fn, struct thost_model* m)
{
  WITH_HOST(
      m->backend->host,
      ((model_fn)fn)(THOST_AS_HANDLE(TRITONBACKEND_Model, m->handle)));
}

// enter_device makes a GPU instance's device current on the calling thread.
static TRITONSERVER_Error*
enter_device(struct thost_instance* i)
{
  if (i->ctx_fn == NULL)
    return NULL;
  int rc = ((int (*)(void*))i->ctx_fn)(i->ctx_arg);
  if (rc == 0)
    return NULL;
  return thost_errorf(
      TRITONSERVER_ERROR_INTERNAL,
      "cannot make GPU %d current for instance '%s': CUDA error %d",
      (int)i->device_id, i->name, rc);
}

TRITONSERVER_Error*
thost_call_instance(void* fn, struct thost_instance* i)
{
  TRITONSERVER_Error* derr = enter_device(i);
  if (derr != NULL)
    return derr;
  WITH_HOST(
      i->model->backend->host, ((instance_fn)fn)(THOST_AS_HANDLE(
                                   TRITONBACKEND_ModelInstance, i->handle)));
}

TRITONSERVER_Error*
thost_call_execute(
    void* fn, struct thost_instance* i, uint64_t* requests, uint32_t n)
{
  // requests holds n request handles: the array the backend receives.
  TRITONSERVER_Error* derr = enter_device(i);
  if (derr != NULL)
    return derr;
  // Batch statistics the backend reports on this thread meanwhile wait in
  // i (model_api.c). A nested Execute (a backend's request run inline)
  // restores the outer instance as it returns.
  struct thost_instance* outer = thost_executing_instance;
  thost_executing_instance = i;
  struct thost_host* saved = thost_thread_host;
  thost_thread_host = i->model->backend->host;
  TRITONSERVER_Error* err = ((execute_fn)fn)(
      THOST_AS_HANDLE(TRITONBACKEND_ModelInstance, i->handle),
      (TRITONBACKEND_Request**)requests, n);
  thost_thread_host = saved;
  thost_executing_instance = outer;
  return err;
}

// ---- Plugins ----------------------------------------------------------------

struct thost_host*
thost_swap_host(struct thost_host* h)
{
  struct thost_host* saved = thost_thread_host;
  thost_thread_host = h;
  return saved;
}
