// cpu_outputs.cc: see cpu_outputs.hpp.
#include "cpu_outputs.hpp"

#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "backend_io.hpp"
#include "errors.hpp"
#include "logging.hpp"

namespace tritonhost { namespace backend { namespace bls {

// ---- CpuAllocator ---------------------------------------------------------

static TRITONSERVER_Error*
AllocCpu(
    TRITONSERVER_ResponseAllocator*, const char* tensor_name, size_t byte_size,
    TRITONSERVER_MemoryType, int64_t, void*, void** buffer, void** buffer_userp,
    TRITONSERVER_MemoryType* actual_memory_type, int64_t* actual_memory_type_id)
{
  *buffer = nullptr;
  if (byte_size > 0) {
    *buffer = std::malloc(byte_size);
    THOST_RETURN_ERROR_IF_FALSE(
        *buffer != nullptr, TRITONSERVER_ERROR_UNAVAILABLE,
        "bls backend: cannot allocate " + std::to_string(byte_size) +
            " bytes for output '" + tensor_name + "'");
  }
  *buffer_userp = nullptr;
  *actual_memory_type = TRITONSERVER_MEMORY_CPU;  // whatever was preferred
  *actual_memory_type_id = 0;
  return nullptr;
}

static TRITONSERVER_Error*
ReleaseCpu(
    TRITONSERVER_ResponseAllocator*, void* buffer, void*, size_t,
    TRITONSERVER_MemoryType, int64_t)
{
  std::free(buffer);
  return nullptr;
}

static TRITONSERVER_Error*
QueryCpu(
    TRITONSERVER_ResponseAllocator*, void*, const char*, size_t*,
    TRITONSERVER_MemoryType* memory_type, int64_t* memory_type_id)
{
  *memory_type = TRITONSERVER_MEMORY_CPU;
  *memory_type_id = 0;
  return nullptr;
}

TRITONSERVER_Error*
CpuAllocator::Create(std::unique_ptr<CpuAllocator>* out)
{
  std::unique_ptr<CpuAllocator> a(new CpuAllocator());
  THOST_RETURN_IF_ERROR(TRITONSERVER_ResponseAllocatorNew(
      &a->allocator_, AllocCpu, ReleaseCpu, nullptr /* start_fn */));
  THOST_RETURN_IF_ERROR(
      TRITONSERVER_ResponseAllocatorSetQueryFunction(a->allocator_, QueryCpu));
  *out = std::move(a);
  return nullptr;
}

CpuAllocator::~CpuAllocator()
{
  if (allocator_ != nullptr) {
    THOST_LOG_IF_ERROR(
        TRITONSERVER_ResponseAllocatorDelete(allocator_),
        "bls backend: failed to delete the response allocator");
  }
}

// ---- Copying a response ---------------------------------------------------

TRITONSERVER_Error*
CopyResponse(TRITONSERVER_InferenceResponse* from, TRITONBACKEND_Response* to)
{
  uint32_t count = 0;
  THOST_RETURN_IF_ERROR(
      TRITONSERVER_InferenceResponseOutputCount(from, &count));
  for (uint32_t i = 0; i < count; ++i) {
    const char* name = nullptr;
    TRITONSERVER_DataType datatype = TRITONSERVER_TYPE_INVALID;
    const int64_t* shape = nullptr;
    uint64_t dims = 0;
    const void* base = nullptr;
    size_t size = 0;
    TRITONSERVER_MemoryType memory_type = TRITONSERVER_MEMORY_CPU;
    int64_t memory_type_id = 0;
    void* userp = nullptr;
    THOST_RETURN_IF_ERROR(TRITONSERVER_InferenceResponseOutput(
        from, i, &name, &datatype, &shape, &dims, &base, &size, &memory_type,
        &memory_type_id, &userp));
    THOST_RETURN_ERROR_IF_FALSE(
        memory_type != TRITONSERVER_MEMORY_GPU, TRITONSERVER_ERROR_INTERNAL,
        std::string("bls backend: output '") + name + "' is in GPU memory");
    char* buffer = nullptr;
    THOST_RETURN_IF_ERROR(AllocateOutput(
        to, name, datatype, std::vector<int64_t>(shape, shape + dims), size,
        &buffer));
    if (size > 0) {
      std::memcpy(buffer, base, size);
    }
  }
  THOST_RETURN_IF_ERROR(
      TRITONSERVER_InferenceResponseParameterCount(from, &count));
  for (uint32_t i = 0; i < count; ++i) {
    const char* name = nullptr;
    TRITONSERVER_ParameterType type = TRITONSERVER_PARAMETER_STRING;
    const void* value = nullptr;
    THOST_RETURN_IF_ERROR(
        TRITONSERVER_InferenceResponseParameter(from, i, &name, &type, &value));
    switch (type) {
      case TRITONSERVER_PARAMETER_STRING:
        THOST_RETURN_IF_ERROR(TRITONBACKEND_ResponseSetStringParameter(
            to, name, static_cast<const char*>(value)));
        break;
      case TRITONSERVER_PARAMETER_INT:
        THOST_RETURN_IF_ERROR(TRITONBACKEND_ResponseSetIntParameter(
            to, name, *static_cast<const int64_t*>(value)));
        break;
      case TRITONSERVER_PARAMETER_BOOL:
        THOST_RETURN_IF_ERROR(TRITONBACKEND_ResponseSetBoolParameter(
            to, name, *static_cast<const bool*>(value)));
        break;
      case TRITONSERVER_PARAMETER_DOUBLE:
        THOST_RETURN_IF_ERROR(TRITONBACKEND_ResponseSetDoubleParameter(
            to, name, *static_cast<const double*>(value)));
        break;
      default:
        break;  // BYTES parameters do not reach responses
    }
  }
  return nullptr;
}

}}}  // namespace tritonhost::backend::bls
