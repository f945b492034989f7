// backend_io.hpp: reading a request's input tensors and creating a
// response's output tensors, in CPU memory.
//
//   InputTensor in;
//   THOST_RETURN_IF_ERROR(ReadInput(request, "INPUT0", &in, policy));
//   THOST_RETURN_IF_ERROR(CheckInput(in, TRITONSERVER_TYPE_INT32));
//   char* out = nullptr;
//   THOST_RETURN_IF_ERROR(AllocateOutput(
//       response, "OUTPUT0", TRITONSERVER_TYPE_INT32, in.Shape(), &out));
//   StoreElement<int32_t>(out, 0, LoadElement<int32_t>(in.Data(), 0));
//
// Buffers from the host carry no alignment promise, so elements are read and
// written with LoadElement/StoreElement (a memcpy each, which compilers turn
// into a plain load or store). Every function here may be called from any
// thread, on requests and responses the caller currently owns.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "errors.hpp"
#include "formatting.hpp"
#include "triton/core/tritonbackend.h"
#include "triton/core/tritonserver.h"

namespace tritonhost { namespace backend {

// The number of elements of 'shape' (1 for a scalar []); -1 if a dimension
// is negative.
int64_t ElementCount(const std::vector<int64_t>& shape);

// One input tensor of a request, its data in one contiguous block of CPU
// memory. Data() points into the request's own buffer when the tensor is a
// single buffer, or to a copy the InputTensor owns when it is split over
// several; either way it is valid until the request is released or the
// InputTensor is destroyed, whichever comes first.
class InputTensor {
 public:
  const std::string& Name() const { return name_; }
  TRITONSERVER_DataType DataType() const { return data_type_; }
  // With the batch dimension, if the model batches.
  const std::vector<int64_t>& Shape() const { return shape_; }
  uint64_t ByteSize() const { return byte_size_; }
  const char* Data() const { return data_; }

 private:
  friend TRITONSERVER_Error* ReadInput(
      TRITONBACKEND_Request*, const std::string&, InputTensor*, const char*);

  std::string name_;
  TRITONSERVER_DataType data_type_ = TRITONSERVER_TYPE_INVALID;
  std::vector<int64_t> shape_;
  uint64_t byte_size_ = 0;
  std::vector<char> copy_;  // used only for a tensor split over buffers
  const char* data_ = nullptr;
};

// Copies input tensor 'name' of 'request' into 'buffer', concatenating all
// of its buffers (the host's default buffers: host policy nullptr). On entry
// *buffer_byte_size is the capacity of 'buffer'; on success it is the number
// of bytes copied. INVALID_ARG if the tensor is larger than the buffer,
// UNSUPPORTED if a buffer is in GPU memory (this layer copies on the CPU).
// Inline, so that a backend using only this needs none of backend_io.cc.
inline TRITONSERVER_Error*
ReadInputTensor(
    TRITONBACKEND_Request* request, const std::string& name, char* buffer,
    size_t* buffer_byte_size)
{
  TRITONBACKEND_Input* input = nullptr;
  THOST_RETURN_IF_ERROR(
      TRITONBACKEND_RequestInput(request, name.c_str(), &input));

  uint64_t byte_size = 0;
  uint32_t buffer_count = 0;
  THOST_RETURN_IF_ERROR(TRITONBACKEND_InputPropertiesForHostPolicy(
      input, nullptr /* host_policy */, nullptr /* name */,
      nullptr /* datatype */, nullptr /* shape */, nullptr /* dims_count */,
      &byte_size, &buffer_count));
  THOST_RETURN_ERROR_IF_FALSE(
      byte_size <= *buffer_byte_size, TRITONSERVER_ERROR_INVALID_ARG,
      "buffer too small for input tensor '" + name + "' of request " +
          RequestIdString(request) + ": need " + std::to_string(byte_size) +
          " bytes, have " + std::to_string(*buffer_byte_size));

  size_t copied = 0;
  for (uint32_t b = 0; b < buffer_count; ++b) {
    const void* src = nullptr;
    uint64_t src_size = 0;
    TRITONSERVER_MemoryType memory_type = TRITONSERVER_MEMORY_CPU;
    int64_t memory_type_id = 0;
    THOST_RETURN_IF_ERROR(TRITONBACKEND_InputBufferForHostPolicy(
        input, nullptr /* host_policy */, b, &src, &src_size, &memory_type,
        &memory_type_id));
    THOST_RETURN_ERROR_IF_FALSE(
        memory_type != TRITONSERVER_MEMORY_GPU, TRITONSERVER_ERROR_UNSUPPORTED,
        "input tensor '" + name + "' of request " + RequestIdString(request) +
            " is in GPU memory; this backend reads CPU memory only");
    THOST_RETURN_ERROR_IF_FALSE(
        src_size <= *buffer_byte_size - copied, TRITONSERVER_ERROR_INTERNAL,
        "buffers of input tensor '" + name + "' of request " +
            RequestIdString(request) + " hold more than its byte size " +
            std::to_string(byte_size));
    if (src_size > 0) {
      std::memcpy(buffer + copied, src, src_size);
    }
    copied += src_size;
  }
  *buffer_byte_size = copied;
  return nullptr;
}

// Reads input 'name' of 'request': its properties and all of its buffers, as
// supplied for host policy 'host_policy' (nullptr, or a policy the client
// sent nothing special for: the default buffers). Errors: INVALID_ARG if the
// request has no such input, UNSUPPORTED if a buffer is in GPU memory,
// INTERNAL if the buffers add up to more or less than the byte size.
TRITONSERVER_Error* ReadInput(
    TRITONBACKEND_Request* request, const std::string& name, InputTensor* out,
    const char* host_policy = nullptr);

// INVALID_ARG unless 'input' has 'data_type' and, for fixed-size types,
// exactly the bytes its shape calls for.
TRITONSERVER_Error* CheckInput(
    const InputTensor& input, TRITONSERVER_DataType data_type);

// The batch size of 'request': the first dimension of its first input when
// the model batches ('first_dim_batching'), 1 otherwise or when the request
// has no input. Inline, so that reporting statistics (RequestBatch,
// AsyncRequestBatch) links none of backend_io.cc.
inline TRITONSERVER_Error*
RequestBatchSize(
    TRITONBACKEND_Request* request, bool first_dim_batching, uint64_t* size)
{
  *size = 1;
  uint32_t input_count = 0;
  THOST_RETURN_IF_ERROR(TRITONBACKEND_RequestInputCount(request, &input_count));
  if (!first_dim_batching || input_count == 0) {
    return nullptr;
  }
  TRITONBACKEND_Input* input = nullptr;
  const int64_t* shape = nullptr;
  uint32_t dims_count = 0;
  THOST_RETURN_IF_ERROR(TRITONBACKEND_RequestInputByIndex(request, 0, &input));
  THOST_RETURN_IF_ERROR(TRITONBACKEND_InputProperties(
      input, nullptr, nullptr, &shape, &dims_count, nullptr, nullptr));
  if (dims_count > 0 && shape[0] > 0) {
    *size = static_cast<uint64_t>(shape[0]);
  }
  return nullptr;
}

// The names of the outputs 'request' asks for, in the order asked. When the
// client named none, the host lists every configured output.
TRITONSERVER_Error* RequestedOutputs(
    TRITONBACKEND_Request* request, std::vector<std::string>* names);

// Adds output 'name' of 'data_type' and 'shape' to 'response' and allocates
// its buffer of 'byte_size' bytes in CPU memory; *buffer belongs to the
// response and is valid until the response is sent or deleted. UNSUPPORTED if
// the host hands out a buffer in GPU memory.
TRITONSERVER_Error* AllocateOutput(
    TRITONBACKEND_Response* response, const std::string& name,
    TRITONSERVER_DataType data_type, const std::vector<int64_t>& shape,
    uint64_t byte_size, char** buffer);

// As above, with the byte size that 'shape' calls for; INVALID_ARG for
// TRITONSERVER_TYPE_BYTES, whose size the shape does not tell.
TRITONSERVER_Error* AllocateOutput(
    TRITONBACKEND_Response* response, const std::string& name,
    TRITONSERVER_DataType data_type, const std::vector<int64_t>& shape,
    char** buffer);

// Element 'index' of an array of T at 'base', which need not be aligned.
template <typename T>
inline T
LoadElement(const char* base, size_t index)
{
  T value;
  std::memcpy(&value, base + index * sizeof(T), sizeof(T));
  return value;
}

// Stores 'value' as element 'index' of an array of T at 'base', which need
// not be aligned.
template <typename T>
inline void
StoreElement(char* base, size_t index, T value)
{
  std::memcpy(base + index * sizeof(T), &value, sizeof(T));
}

}}  // namespace tritonhost::backend
