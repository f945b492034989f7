// A fake NVML with two GPUs (testenv.FakeNVML builds it), the functions
// tritonhost's NVML loader (gpu/nvml_library.go) registers, with NVML's
// signatures and return codes. Calls before nvmlInit_v2 or after
// nvmlShutdown return NVML_ERROR_UNINITIALIZED, as NVML's do. Built with
// FAKENVML_NO_ENERGY it lacks the energy counter, as drivers older than
// Volta's do. The GPUs' figures are fixed (testenv's FakeNVMLGPU*).
#include <stdio.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct fake_device* nvmlDevice_t;

enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
};

struct fake_device {
  const char* uuid;
  const char* name;
  unsigned long long total, used;
  int major, minor;
  unsigned int util, mw, limit_mw;
  unsigned long long mj;
};

static struct fake_device devices[2] = {
    {"GPU-11111111-2222-3333-4444-555555555555", "Fake H100", 80ULL << 30,
     3ULL << 30, 9, 0, 42, 123456, 700000, 9000},
    {"GPU-66666666-7777-8888-9999-000000000000", "Fake A100", 40ULL << 30,
     1ULL << 30, 8, 0, 50, 100000, 400000, 0},
};
static int initialized;

typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
  unsigned int gpu, memory;
} nvmlUtilization_t;

nvmlReturn_t
nvmlInit_v2(void)
{
  initialized = 1;
  return NVML_SUCCESS;
}

nvmlReturn_t
nvmlShutdown(void)
{
  if (!initialized)
    return NVML_ERROR_UNINITIALIZED;
  initialized = 0;
  return NVML_SUCCESS;
}

static nvmlReturn_t
text(const char* s, char* buf, unsigned int n)
{
  if (!initialized)
    return NVML_ERROR_UNINITIALIZED;
  if (buf == NULL)
    return NVML_ERROR_INVALID_ARGUMENT;
  if (strlen(s) + 1 > n)
    return NVML_ERROR_INSUFFICIENT_SIZE;
  strcpy(buf, s);
  return NVML_SUCCESS;
}

nvmlReturn_t
nvmlSystemGetDriverVersion(char* buf, unsigned int n)
{
  return text("999.1.2", buf, n);
}

nvmlReturn_t
nvmlDeviceGetCount_v2(unsigned int* count)
{
  if (!initialized)
    return NVML_ERROR_UNINITIALIZED;
  *count = 2;
  return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t* dev)
{
  if (!initialized)
    return NVML_ERROR_UNINITIALIZED;
  if (i >= 2 || dev == NULL)
    return NVML_ERROR_INVALID_ARGUMENT;
  *dev = &devices[i];
  return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetUUID(nvmlDevice_t d, char* buf, unsigned int n)
{
  return text(d->uuid, buf, n);
}

nvmlReturn_t
nvmlDeviceGetName(nvmlDevice_t d, char* buf, unsigned int n)
{
  return text(d->name, buf, n);
}

nvmlReturn_t
nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* m)
{
  if (!initialized)
    return NVML_ERROR_UNINITIALIZED;
  m->total = d->total;
  m->used = d->used;
  m->free = d->total - d->used;
  return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int* major, int* minor)
{
  if (!initialized)
    return NVML_ERROR_UNINITIALIZED;
  *major = d->major;
  *minor = d->minor;
  return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t* u)
{
  if (!initialized)
    return NVML_ERROR_UNINITIALIZED;
  u->gpu = d->util;
  u->memory = 0;
  return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int* mw)
{
  if (!initialized)
    return NVML_ERROR_UNINITIALIZED;
  if (d->limit_mw == 0)
    return NVML_ERROR_NOT_SUPPORTED;
  *mw = d->mw;
  return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned int* mw)
{
  if (!initialized)
    return NVML_ERROR_UNINITIALIZED;
  if (d->limit_mw == 0)
    return NVML_ERROR_NOT_SUPPORTED;
  *mw = d->limit_mw;
  return NVML_SUCCESS;
}

#ifndef FAKENVML_NO_ENERGY
nvmlReturn_t
nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long* mj)
{
  if (!initialized)
    return NVML_ERROR_UNINITIALIZED;
  *mj = d->mj;
  return NVML_SUCCESS;
}
#endif

const char*
nvmlErrorString(nvmlReturn_t r)
{
  switch (r) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    default:
      return "Unknown Error";
  }
}
