// A test backend that reports what a GPU backend sees: the instance's
// device, the CUDA device current on the thread that runs
// ModelInstanceInitialize and each Execute (from libcuda.so.1, which it
// opens itself as a GPU backend does, and which must be the server's), and
// the memory type of the output buffers it asks for.
//
// Inputs: IN (UINT8 [-1]); optional WANT (INT32 [2]: the memory type and id
// preferred for OUT, id -1 for the instance's GPU); optional ALLOC (INT64 [3]:
// memory type, id and bytes to allocate and free through the memory manager; an
// error fails the request with it). Outputs: OUT (a copy of IN, in the memory
// the server gave); DEVICE (INT32 [4]: the instance's device id, the current
// device at initialization, the current device in this Execute (-1: none),
// OUT's memory type); IPC (UINT8 [64]: OUT's CUDA IPC handle, zeros when it has
// none).
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "triton/core/tritonbackend.h"

#define RETURN_IF_ERROR(X)         \
  do {                             \
    TRITONSERVER_Error* e__ = (X); \
    if (e__ != NULL)               \
      return e__;                  \
  } while (0)

typedef int (*ctx_get_device_fn)(int*);
typedef int (*htod_fn)(unsigned long long, const void*, size_t);

struct probe {
  int32_t device_id;
  int32_t init_device;
  ctx_get_device_fn get_device;
  htod_fn htod;
};

static int32_t
current_device(const struct probe* p)
{
  int dev = -1;
  if (p->get_device == NULL || p->get_device(&dev) != 0)
    return -1;
  return dev;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceInitialize(TRITONBACKEND_ModelInstance* instance)
{
  struct probe* p = calloc(1, sizeof(*p));
  TRITONSERVER_InstanceGroupKind kind;
  const char* name;
  RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceKind(instance, &kind));
  RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceDeviceId(instance, &p->device_id));
  RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceName(instance, &name));
  if (kind == TRITONSERVER_INSTANCEGROUPKIND_GPU) {
    // RTLD_NOLOAD: the driver the server loaded, found by its soname.
    void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (cuda == NULL) {
      free(p);
      return TRITONSERVER_ErrorNew(
          TRITONSERVER_ERROR_UNAVAILABLE, "libcuda.so.1 is not loaded");
    }
    p->get_device = (ctx_get_device_fn)dlsym(cuda, "cuCtxGetDevice");
    p->htod = (htod_fn)dlsym(cuda, "cuMemcpyHtoD_v2");
  }
  p->init_device = current_device(p);
  char msg[256];
  snprintf(
      msg, sizeof(msg), "probe instance %s: kind %s device %d, current %d",
      name, TRITONSERVER_InstanceGroupKindString(kind), (int)p->device_id,
      (int)p->init_device);
  TRITONSERVER_LogMessage(TRITONSERVER_LOG_INFO, __FILE__, __LINE__, msg);
  return TRITONBACKEND_ModelInstanceSetState(instance, p);
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceFinalize(TRITONBACKEND_ModelInstance* instance)
{
  void* p;
  RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceState(instance, &p));
  free(p);
  return NULL;
}

// input returns the first buffer of input name, or NULL when absent.
static const void*
input(TRITONBACKEND_Request* r, const char* name, uint64_t* size)
{
  TRITONBACKEND_Input* in;
  const void* buf = NULL;
  TRITONSERVER_MemoryType t;
  int64_t id;
  *size = 0;
  TRITONSERVER_Error* err = TRITONBACKEND_RequestInput(r, name, &in);
  if (err != NULL) {
    TRITONSERVER_ErrorDelete(err);
    return NULL;
  }
  TRITONBACKEND_InputBuffer(in, 0, &buf, size, &t, &id);
  return buf;
}

static TRITONSERVER_Error*
try_alloc(TRITONBACKEND_ModelInstance* instance, const int64_t* a)
{
  TRITONBACKEND_Model* model;
  TRITONBACKEND_Backend* backend;
  TRITONBACKEND_MemoryManager* mm;
  void* buf = NULL;
  RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceModel(instance, &model));
  RETURN_IF_ERROR(TRITONBACKEND_ModelBackend(model, &backend));
  RETURN_IF_ERROR(TRITONBACKEND_BackendMemoryManager(backend, &mm));
  RETURN_IF_ERROR(TRITONBACKEND_MemoryManagerAllocate(
      mm, &buf, (TRITONSERVER_MemoryType)a[0], a[1], (uint64_t)a[2]));
  return TRITONBACKEND_MemoryManagerFree(
      mm, buf, (TRITONSERVER_MemoryType)a[0], a[1]);
}

static TRITONSERVER_Error*
respond(
    struct probe* p, TRITONBACKEND_ModelInstance* instance,
    TRITONBACKEND_Request* r, TRITONBACKEND_Response* resp)
{
  uint64_t n, wn, an;
  const void* in = input(r, "IN", &n);
  const int32_t* want = input(r, "WANT", &wn);
  const int64_t* alloc = input(r, "ALLOC", &an);
  if (alloc != NULL && an == 3 * sizeof(int64_t))
    RETURN_IF_ERROR(try_alloc(instance, alloc));

  TRITONBACKEND_Output* out;
  int64_t shape = (int64_t)n;
  void* buf;
  TRITONSERVER_MemoryType type = TRITONSERVER_MEMORY_CPU;
  int64_t id = 0;
  if (want != NULL && wn == 2 * sizeof(int32_t)) {
    type = (TRITONSERVER_MemoryType)want[0];
    id = want[1] < 0 ? p->device_id : want[1];  // -1: the instance's GPU
  }
  RETURN_IF_ERROR(TRITONBACKEND_ResponseOutput(
      resp, &out, "OUT", TRITONSERVER_TYPE_UINT8, &shape, 1));
  RETURN_IF_ERROR(TRITONBACKEND_OutputBuffer(out, &buf, n, &type, &id));
  if (type == TRITONSERVER_MEMORY_GPU) {
    if (p->htod == NULL ||
        p->htod((unsigned long long)(uintptr_t)buf, in, n) != 0)
      return TRITONSERVER_ErrorNew(
          TRITONSERVER_ERROR_INTERNAL, "cuMemcpyHtoD failed");
  } else if (n > 0) {
    memcpy(buf, in, n);
  }

  unsigned char ipc[64] = {0};
  TRITONSERVER_BufferAttributes* attrs;
  void* handle = NULL;
  RETURN_IF_ERROR(TRITONBACKEND_OutputBufferAttributes(out, &attrs));
  RETURN_IF_ERROR(TRITONSERVER_BufferAttributesCudaIpcHandle(attrs, &handle));
  if (handle != NULL)
    memcpy(ipc, handle, sizeof(ipc));

  int32_t dev[4] = {
      p->device_id, p->init_device, current_device(p), (int32_t)type};
  int64_t four = 4, sixty_four = 64;
  RETURN_IF_ERROR(TRITONBACKEND_ResponseOutput(
      resp, &out, "DEVICE", TRITONSERVER_TYPE_INT32, &four, 1));
  RETURN_IF_ERROR(TRITONBACKEND_OutputBuffer(
      out, &buf, sizeof(dev),
      &(TRITONSERVER_MemoryType){TRITONSERVER_MEMORY_CPU}, &(int64_t){0}));
  memcpy(buf, dev, sizeof(dev));
  RETURN_IF_ERROR(TRITONBACKEND_ResponseOutput(
      resp, &out, "IPC", TRITONSERVER_TYPE_UINT8, &sixty_four, 1));
  RETURN_IF_ERROR(TRITONBACKEND_OutputBuffer(
      out, &buf, sizeof(ipc),
      &(TRITONSERVER_MemoryType){TRITONSERVER_MEMORY_CPU}, &(int64_t){0}));
  memcpy(buf, ipc, sizeof(ipc));
  return NULL;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t count)
{
  struct probe* p;
  RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceState(instance, (void**)&p));
  for (uint32_t i = 0; i < count; i++) {
    TRITONBACKEND_Response* resp;
    RETURN_IF_ERROR(TRITONBACKEND_ResponseNew(&resp, requests[i]));
    TRITONSERVER_Error* err = respond(p, instance, requests[i], resp);
    TRITONBACKEND_ResponseSend(resp, TRITONSERVER_RESPONSE_COMPLETE_FINAL, err);
    if (err != NULL)
      TRITONSERVER_ErrorDelete(err);
    TRITONBACKEND_RequestRelease(requests[i], TRITONSERVER_REQUEST_RELEASE_ALL);
  }
  return NULL;
}
