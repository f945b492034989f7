// A fake CUDA driver for tests on machines without a GPU: the few cu*
// functions tritonhost and the test backends call, on host memory, with the
// driver's signatures and error codes. Built by testenv.FakeCUDADriver as
// libcuda.so.1 (that soname, so that a backend's own dlopen("libcuda.so.1")
// finds this library once the server has loaded it).
//
// It keeps what a test checks: live device and host allocations, retained
// primary contexts, copies, and the current context of each thread. Device
// memory is malloc'd host memory, but every call on it checks what the real
// driver checks (a current context, a live allocation, the bounds), so a
// caller that would fail on a GPU fails here too.
//
// Environment: FAKECUDA_DEVICES is the device count (default 2);
// FAKECUDA_REPORT names a file rewritten with the counters after every
// change, for tests that read them from another process.
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct fake_ctx* CUcontext;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_CONTEXT = 201,
};

#define MAX_DEVICES 16
#define MAX_ALLOCS 4096

struct fake_ctx {
  int device;
  int refs;
};

struct alloc {
  char* base;
  size_t size;
  int device;  // -1: page-locked host memory
};

// Counters a test reads (fakecuda_stats); the layout is
// testenv.FakeCUDAStats's.
struct fakecuda_stats {
  int64_t live_device;        // device allocations not freed
  int64_t live_host;          // host allocations not freed
  int64_t live_bytes;         // bytes of both
  int64_t contexts;           // primary context references held
  int64_t htod;               // host-to-device copies
  int64_t dtoh;               // device-to-host copies
  int64_t set_current;        // cuCtxSetCurrent calls
  int64_t device_mismatches;  // copies while another device was current
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int initialized;
static int device_count = 2;
static struct fake_ctx contexts[MAX_DEVICES];
static struct alloc allocs[MAX_ALLOCS];
static struct fakecuda_stats stats;
static __thread CUcontext current;

// report rewrites FAKECUDA_REPORT; called with mu held.
static void
report(void)
{
  const char* path = getenv("FAKECUDA_REPORT");
  if (path == NULL || path[0] == '\0')
    return;
  FILE* f = fopen(path, "w");
  if (f == NULL)
    return;
  fprintf(
      f,
      "live_device=%lld live_host=%lld live_bytes=%lld contexts=%lld "
      "htod=%lld dtoh=%lld set_current=%lld device_mismatches=%lld\n",
      (long long)stats.live_device, (long long)stats.live_host,
      (long long)stats.live_bytes, (long long)stats.contexts,
      (long long)stats.htod, (long long)stats.dtoh,
      (long long)stats.set_current, (long long)stats.device_mismatches);
  fclose(f);
}

CUresult
cuInit(unsigned int flags)
{
  if (flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&mu);
  const char* n = getenv("FAKECUDA_DEVICES");
  if (n != NULL && n[0] != '\0') {
    device_count = atoi(n);
    if (device_count < 0 || device_count > MAX_DEVICES)
      device_count = 0;
  }
  for (int i = 0; i < MAX_DEVICES; i++) contexts[i].device = i;
  initialized = 1;
  pthread_mutex_unlock(&mu);
  return CUDA_SUCCESS;
}

CUresult
cuDriverGetVersion(int* version)
{
  if (version == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  *version = 12040;
  return CUDA_SUCCESS;
}

CUresult
cuDeviceGetCount(int* count)
{
  if (count == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if (!initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  *count = device_count;
  return CUDA_SUCCESS;
}

CUresult
cuDeviceGet(CUdevice* device, int ordinal)
{
  if (device == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if (!initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (ordinal < 0 || ordinal >= device_count)
    return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult
cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice dev)
{
  if (ctx == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if (dev < 0 || dev >= device_count)
    return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&mu);
  contexts[dev].refs++;
  stats.contexts++;
  report();
  pthread_mutex_unlock(&mu);
  *ctx = &contexts[dev];
  return CUDA_SUCCESS;
}

CUresult
cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
  if (dev < 0 || dev >= device_count)
    return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&mu);
  CUresult r = CUDA_ERROR_INVALID_CONTEXT;
  if (contexts[dev].refs > 0) {
    contexts[dev].refs--;
    stats.contexts--;
    r = CUDA_SUCCESS;
  }
  report();
  pthread_mutex_unlock(&mu);
  return r;
}

CUresult
cuCtxSetCurrent(CUcontext ctx)
{
  current = ctx;
  __atomic_add_fetch(&stats.set_current, 1, __ATOMIC_RELAXED);
  return CUDA_SUCCESS;
}

CUresult
cuCtxGetCurrent(CUcontext* ctx)
{
  if (ctx == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  *ctx = current;
  return CUDA_SUCCESS;
}

CUresult
cuCtxGetDevice(CUdevice* dev)
{
  if (dev == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if (current == NULL)
    return CUDA_ERROR_INVALID_CONTEXT;
  *dev = current->device;
  return CUDA_SUCCESS;
}

// track records a new allocation; called with mu held.
static CUresult
track(char* base, size_t size, int device)
{
  for (int i = 0; i < MAX_ALLOCS; i++) {
    if (allocs[i].base == NULL) {
      allocs[i] = (struct alloc){base, size, device};
      if (device >= 0)
        stats.live_device++;
      else
        stats.live_host++;
      stats.live_bytes += (int64_t)size;
      report();
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_OUT_OF_MEMORY;
}

// untrack forgets the allocation at base of the given kind; mu held.
static CUresult
untrack(char* base, int host)
{
  for (int i = 0; i < MAX_ALLOCS; i++) {
    struct alloc* a = &allocs[i];
    if (a->base == base && base != NULL && (a->device < 0) == host) {
      if (host)
        stats.live_host--;
      else
        stats.live_device--;
      stats.live_bytes -= (int64_t)a->size;
      a->base = NULL;
      report();
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_INVALID_VALUE;
}

// find returns the live allocation holding [p, p+n), or NULL; mu held.
static struct alloc*
find(const char* p, size_t n)
{
  for (int i = 0; i < MAX_ALLOCS; i++) {
    struct alloc* a = &allocs[i];
    if (a->base != NULL && p >= a->base && p + n <= a->base + a->size)
      return a;
  }
  return NULL;
}

CUresult
cuMemAlloc_v2(CUdeviceptr* dptr, size_t size)
{
  if (dptr == NULL || size == 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (current == NULL)
    return CUDA_ERROR_INVALID_CONTEXT;
  char* p = malloc(size);
  if (p == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  pthread_mutex_lock(&mu);
  CUresult r = track(p, size, current->device);
  pthread_mutex_unlock(&mu);
  if (r != CUDA_SUCCESS) {
    free(p);
    return r;
  }
  *dptr = (CUdeviceptr)(uintptr_t)p;
  return CUDA_SUCCESS;
}

CUresult
cuMemFree_v2(CUdeviceptr dptr)
{
  char* p = (char*)(uintptr_t)dptr;
  pthread_mutex_lock(&mu);
  CUresult r = untrack(p, 0);
  pthread_mutex_unlock(&mu);
  if (r == CUDA_SUCCESS)
    free(p);
  return r;
}

CUresult
cuMemHostAlloc(void** pp, size_t size, unsigned int flags)
{
  (void)flags;
  if (pp == NULL || size == 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (current == NULL)
    return CUDA_ERROR_INVALID_CONTEXT;
  char* p = malloc(size);
  if (p == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  pthread_mutex_lock(&mu);
  CUresult r = track(p, size, -1);
  pthread_mutex_unlock(&mu);
  if (r != CUDA_SUCCESS) {
    free(p);
    return r;
  }
  *pp = p;
  return CUDA_SUCCESS;
}

CUresult
cuMemFreeHost(void* p)
{
  pthread_mutex_lock(&mu);
  CUresult r = untrack(p, 1);
  pthread_mutex_unlock(&mu);
  if (r == CUDA_SUCCESS)
    free(p);
  return r;
}

// copy checks a copy touching device memory at dev_side, n bytes, and
// counts it in *counter.
static CUresult
copy(
    void* dst, const void* src, const char* dev_side, size_t n,
    int64_t* counter)
{
  if (current == NULL)
    return CUDA_ERROR_INVALID_CONTEXT;
  pthread_mutex_lock(&mu);
  struct alloc* a = find(dev_side, n);
  CUresult r = CUDA_ERROR_INVALID_VALUE;
  if (a != NULL && a->device >= 0) {
    if (a->device != current->device)
      stats.device_mismatches++;
    (*counter)++;
    r = CUDA_SUCCESS;
    report();
  }
  pthread_mutex_unlock(&mu);
  if (r == CUDA_SUCCESS && n > 0)
    memcpy(dst, src, n);
  return r;
}

CUresult
cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t n)
{
  char* d = (char*)(uintptr_t)dst;
  return copy(d, src, d, n, &stats.htod);
}

CUresult
cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t n)
{
  const char* s = (const char*)(uintptr_t)src;
  return copy(dst, s, s, n, &stats.dtoh);
}

// The handle of the allocation holding dptr: "fakecuda", its device and
// its base address.
CUresult
cuIpcGetMemHandle(void* handle, CUdeviceptr dptr)
{
  if (handle == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&mu);
  struct alloc* a = find((const char*)(uintptr_t)dptr, 1);
  CUresult r = CUDA_ERROR_INVALID_VALUE;
  if (a != NULL && a->device >= 0) {
    memset(handle, 0, 64);
    memcpy(handle, "fakecuda", 8);
    memcpy((char*)handle + 8, &a->device, sizeof(int));
    uint64_t base = (uint64_t)(uintptr_t)a->base;
    memcpy((char*)handle + 16, &base, sizeof(base));
    r = CUDA_SUCCESS;
  }
  pthread_mutex_unlock(&mu);
  return r;
}

CUresult
cuGetErrorString(CUresult error, const char** str)
{
  if (str == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  switch (error) {
    case CUDA_SUCCESS:
      *str = "no error";
      break;
    case CUDA_ERROR_INVALID_VALUE:
      *str = "invalid argument";
      break;
    case CUDA_ERROR_OUT_OF_MEMORY:
      *str = "out of memory";
      break;
    case CUDA_ERROR_NOT_INITIALIZED:
      *str = "initialization error";
      break;
    case CUDA_ERROR_INVALID_DEVICE:
      *str = "invalid device ordinal";
      break;
    case CUDA_ERROR_INVALID_CONTEXT:
      *str = "invalid device context";
      break;
    default:
      *str = NULL;
      return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

// ---- Introspection (not part of the driver API) -----------------------------

void
fakecuda_stats(struct fakecuda_stats* out)
{
  pthread_mutex_lock(&mu);
  *out = stats;
  out->set_current = __atomic_load_n(&stats.set_current, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&mu);
}

// The device of the calling thread's current context, -1 when none.
int
fakecuda_current_device(void)
{
  return current == NULL ? -1 : current->device;
}
