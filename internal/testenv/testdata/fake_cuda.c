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
// Device memory is shared as CUDA IPC shares it, across processes: each
// device allocation is a memfd mapping, its IPC handle names the owning
// process, the descriptor and the allocation's number, and
// cuIpcOpenMemHandle maps /proc/<pid>/fd/<fd> after checking that it is
// still that allocation. Unlike the real driver, a process may open its own
// handles (the in-process tests do). The fake's GPUs have no peer access: a
// handle opens only in a context of the device that holds the memory.
//
// Environment: FAKECUDA_DEVICES is the device count (default 2);
// FAKECUDA_REPORT names a file rewritten with the counters after every
// change, for tests that read them from another process; "{pid}" in it
// stands for the process's id (a server and its worker processes each
// write their own).
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct fake_ctx* CUcontext;
typedef struct {
  char reserved[64];
} CUipcMemHandle;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_NOT_FOUND = 500,
};

// CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS, the only flag cuIpcOpenMemHandle
// takes.
#define IPC_LAZY_ENABLE_PEER_ACCESS 0x1

#define MAX_DEVICES 16
#define MAX_ALLOCS 4096

struct fake_ctx {
  int device;
  int refs;
};

struct alloc {
  char* base;
  size_t size;
  int device;   // -1: page-locked host memory
  int fd;       // device memory allocated here: its memfd; else -1
  int ipc;      // 1: device memory mapped by cuIpcOpenMemHandle
  uint64_t id;  // device memory allocated here: its number
};

// The fake's IPC handle (CUipcMemHandle's 64 bytes).
struct fake_ipc_handle {
  char magic[8];  // "fakecuda"
  int32_t device;
  int32_t pid;    // the process that allocated the memory
  uint64_t base;  // its address there
  uint64_t size;
  uint64_t id;  // its number there, also in its memfd's name
  int32_t fd;   // its memfd there
  char unused[20];
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
  int64_t live_ipc;           // IPC handles opened and not closed
  int64_t ipc_opened;         // IPC handles opened
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int initialized;
static int device_count = 2;
static struct fake_ctx contexts[MAX_DEVICES];
static struct alloc allocs[MAX_ALLOCS];
static struct fakecuda_stats stats;
static uint64_t next_id;
static __thread CUcontext current;

// report rewrites FAKECUDA_REPORT; called with mu held.
static void
report(void)
{
  const char* path = getenv("FAKECUDA_REPORT");
  if (path == NULL || path[0] == '\0')
    return;
  char named[4096];
  const char* pid = strstr(path, "{pid}");
  if (pid != NULL) {
    snprintf(
        named, sizeof(named), "%.*s%d%s", (int)(pid - path), path,
        (int)getpid(), pid + 5);
    path = named;
  }
  FILE* f = fopen(path, "w");
  if (f == NULL)
    return;
  fprintf(
      f,
      "live_device=%lld live_host=%lld live_bytes=%lld contexts=%lld "
      "htod=%lld dtoh=%lld set_current=%lld device_mismatches=%lld "
      "live_ipc=%lld ipc_opened=%lld\n",
      (long long)stats.live_device, (long long)stats.live_host,
      (long long)stats.live_bytes, (long long)stats.contexts,
      (long long)stats.htod, (long long)stats.dtoh,
      (long long)stats.set_current, (long long)stats.device_mismatches,
      (long long)stats.live_ipc, (long long)stats.ipc_opened);
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

// The kinds of allocation: device memory allocated here, page-locked host
// memory, device memory of another allocation opened from its IPC handle.
enum kind { KIND_DEVICE, KIND_HOST, KIND_IPC };

static enum kind
kind_of(const struct alloc* a)
{
  if (a->ipc)
    return KIND_IPC;
  return a->device < 0 ? KIND_HOST : KIND_DEVICE;
}

// count adds delta allocations of a's kind to the counters; mu held.
static void
count(const struct alloc* a, int delta)
{
  switch (kind_of(a)) {
    case KIND_DEVICE:
      stats.live_device += delta;
      stats.live_bytes += delta * (int64_t)a->size;
      break;
    case KIND_HOST:
      stats.live_host += delta;
      stats.live_bytes += delta * (int64_t)a->size;
      break;
    case KIND_IPC:
      stats.live_ipc += delta;
      if (delta > 0)
        stats.ipc_opened += delta;
      break;
  }
  report();
}

// track records a new allocation; called with mu held.
static CUresult
track(struct alloc a)
{
  for (int i = 0; i < MAX_ALLOCS; i++) {
    if (allocs[i].base == NULL) {
      allocs[i] = a;
      count(&a, 1);
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_OUT_OF_MEMORY;
}

// untrack forgets the allocation at base of kind k and returns it in *out;
// mu held.
static CUresult
untrack(char* base, enum kind k, struct alloc* out)
{
  for (int i = 0; i < MAX_ALLOCS; i++) {
    struct alloc* a = &allocs[i];
    if (a->base == base && base != NULL && kind_of(a) == k) {
      *out = *a;
      count(a, -1);
      a->base = NULL;
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

// Device memory is a shared mapping of a memfd named after the
// allocation's number, so that another process can open it (cuIpc*).
CUresult
cuMemAlloc_v2(CUdeviceptr* dptr, size_t size)
{
  if (dptr == NULL || size == 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (current == NULL)
    return CUDA_ERROR_INVALID_CONTEXT;
  pthread_mutex_lock(&mu);
  uint64_t id = ++next_id;
  pthread_mutex_unlock(&mu);
  char name[32];
  snprintf(name, sizeof name, "fakecuda-%llu", (unsigned long long)id);
  int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0)
    return CUDA_ERROR_OUT_OF_MEMORY;
  char* p = MAP_FAILED;
  if (ftruncate(fd, (off_t)size) == 0)
    p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    close(fd);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  pthread_mutex_lock(&mu);
  CUresult r = track((struct alloc){p, size, current->device, fd, 0, id});
  pthread_mutex_unlock(&mu);
  if (r != CUDA_SUCCESS) {
    munmap(p, size);
    close(fd);
    return r;
  }
  *dptr = (CUdeviceptr)(uintptr_t)p;
  return CUDA_SUCCESS;
}

CUresult
cuMemFree_v2(CUdeviceptr dptr)
{
  struct alloc a;
  pthread_mutex_lock(&mu);
  CUresult r = untrack((char*)(uintptr_t)dptr, KIND_DEVICE, &a);
  pthread_mutex_unlock(&mu);
  if (r == CUDA_SUCCESS) {
    munmap(a.base, a.size);
    close(a.fd);
  }
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
  CUresult r = track((struct alloc){p, size, -1, -1, 0, 0});
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
  struct alloc a;
  pthread_mutex_lock(&mu);
  CUresult r = untrack(p, KIND_HOST, &a);
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

_Static_assert(
    sizeof(struct fake_ipc_handle) == sizeof(CUipcMemHandle),
    "the fake IPC handle is a CUipcMemHandle");

// The handle of the device allocation holding dptr (struct
// fake_ipc_handle). Memory opened from a handle has none.
CUresult
cuIpcGetMemHandle(CUipcMemHandle* handle, CUdeviceptr dptr)
{
  if (handle == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&mu);
  struct alloc* a = find((const char*)(uintptr_t)dptr, 1);
  CUresult r = CUDA_ERROR_INVALID_VALUE;
  if (a != NULL && kind_of(a) == KIND_DEVICE) {
    struct fake_ipc_handle h = {
        .device = a->device,
        .pid = (int32_t)getpid(),
        .base = (uint64_t)(uintptr_t)a->base,
        .size = a->size,
        .id = a->id,
        .fd = a->fd};
    memcpy(h.magic, "fakecuda", 8);
    memcpy(handle, &h, sizeof h);
    r = CUDA_SUCCESS;
  }
  pthread_mutex_unlock(&mu);
  return r;
}

// open_exported opens the memfd a handle names, in the process that owns
// it, checking that the descriptor is still that allocation's.
static int
open_exported(const struct fake_ipc_handle* h)
{
  char path[64], target[128], want[64];
  snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)h->pid, (int)h->fd);
  snprintf(
      want, sizeof want, "/memfd:fakecuda-%llu (deleted)",
      (unsigned long long)h->id);
  ssize_t n = readlink(path, target, sizeof target - 1);
  if (n < 0)
    return -1;
  target[n] = '\0';
  if (strcmp(target, want) != 0)
    return -1;
  return open(path, O_RDWR | O_CLOEXEC);
}

// Maps the allocation a handle names into this process, in the current
// context, which must be of the allocation's device.
CUresult
cuIpcOpenMemHandle_v2(
    CUdeviceptr* dptr, CUipcMemHandle handle, unsigned int flags)
{
  struct fake_ipc_handle h;
  memcpy(&h, &handle, sizeof h);
  if (dptr == NULL || (flags & ~IPC_LAZY_ENABLE_PEER_ACCESS) != 0 ||
      memcmp(h.magic, "fakecuda", 8) != 0 || h.size == 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (current == NULL)
    return CUDA_ERROR_INVALID_CONTEXT;
  if (h.device != current->device)
    return CUDA_ERROR_INVALID_DEVICE;
  int fd = open_exported(&h);
  if (fd < 0)
    return CUDA_ERROR_INVALID_VALUE;
  struct stat st;
  char* p = MAP_FAILED;
  if (fstat(fd, &st) == 0 && (uint64_t)st.st_size >= h.size)
    p = mmap(NULL, h.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&mu);
  CUresult r = track((struct alloc){p, h.size, h.device, -1, 1, 0});
  pthread_mutex_unlock(&mu);
  if (r != CUDA_SUCCESS) {
    munmap(p, h.size);
    return r;
  }
  *dptr = (CUdeviceptr)(uintptr_t)p;
  return CUDA_SUCCESS;
}

CUresult
cuIpcCloseMemHandle(CUdeviceptr dptr)
{
  if (current == NULL)
    return CUDA_ERROR_INVALID_CONTEXT;
  struct alloc a;
  pthread_mutex_lock(&mu);
  CUresult r = untrack((char*)(uintptr_t)dptr, KIND_IPC, &a);
  pthread_mutex_unlock(&mu);
  if (r == CUDA_SUCCESS)
    munmap(a.base, a.size);
  return r;
}

// The base and size of the device allocation, or opened IPC memory,
// holding dptr; either result may be NULL.
CUresult
cuMemGetAddressRange_v2(CUdeviceptr* base, size_t* size, CUdeviceptr dptr)
{
  if (current == NULL)
    return CUDA_ERROR_INVALID_CONTEXT;
  pthread_mutex_lock(&mu);
  struct alloc* a = find((const char*)(uintptr_t)dptr, 1);
  CUresult r = CUDA_ERROR_NOT_FOUND;
  if (a != NULL && a->device >= 0) {
    if (base != NULL)
      *base = (CUdeviceptr)(uintptr_t)a->base;
    if (size != NULL)
      *size = a->size;
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
    case CUDA_ERROR_NOT_FOUND:
      *str = "named symbol not found";
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
