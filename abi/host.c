// Servers' C side: creation, the ambient server of a thread, and the calls
// into a backend's entry points, which make the calling thread work for the
// server whose object they pass.
#include "host.h"

#include <stdlib.h>

static __thread struct thost_host* thost_thread_host;
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

int64_t
thost_host_live(struct thost_host* h, int which)
{
  return __atomic_load_n(&h->live[which], __ATOMIC_RELAXED);
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
  WITH_HOST(
      i->model->backend->host,
      ((execute_fn)fn)(
          THOST_AS_HANDLE(TRITONBACKEND_ModelInstance, i->handle),
          (TRITONBACKEND_Request**)requests, n));
}

// ---- Plugins ----------------------------------------------------------------

struct thost_host*
thost_swap_host(struct thost_host* h)
{
  struct thost_host* saved = thost_thread_host;
  thost_thread_host = h;
  return saved;
}
