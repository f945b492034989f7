// backend_io.cc: input and output tensors in CPU memory.
#include "backend_io.hpp"

#include "errors.hpp"
#include "formatting.hpp"

namespace tritonhost { namespace backend {

int64_t
ElementCount(const std::vector<int64_t>& shape)
{
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) {
      return -1;
    }
    n *= d;
  }
  return n;
}

// "input 'NAME' of request ID: ", for messages.
static std::string
InputContext(TRITONBACKEND_Request* request, const std::string& name)
{
  return "input '" + name + "' of request " + RequestIdString(request) + ": ";
}

TRITONSERVER_Error*
ReadInput(
    TRITONBACKEND_Request* request, const std::string& name, InputTensor* out,
    const char* host_policy)
{
  TRITONBACKEND_Input* input = nullptr;
  THOST_RETURN_IF_ERROR(
      TRITONBACKEND_RequestInput(request, name.c_str(), &input));
  const int64_t* shape = nullptr;
  uint32_t dims_count = 0;
  uint32_t buffer_count = 0;
  THOST_RETURN_IF_ERROR(TRITONBACKEND_InputPropertiesForHostPolicy(
      input, host_policy, nullptr /* name */, &out->data_type_, &shape,
      &dims_count, &out->byte_size_, &buffer_count));
  out->name_ = name;
  out->shape_.assign(shape, shape + dims_count);
  out->copy_.clear();
  out->data_ = nullptr;

  uint64_t seen = 0;
  for (uint32_t b = 0; b < buffer_count; ++b) {
    const void* src = nullptr;
    uint64_t size = 0;
    TRITONSERVER_MemoryType memory_type = TRITONSERVER_MEMORY_CPU;
    int64_t memory_type_id = 0;
    THOST_RETURN_IF_ERROR(TRITONBACKEND_InputBufferForHostPolicy(
        input, host_policy, b, &src, &size, &memory_type, &memory_type_id));
    THOST_RETURN_ERROR_IF_FALSE(
        memory_type != TRITONSERVER_MEMORY_GPU, TRITONSERVER_ERROR_UNSUPPORTED,
        InputContext(request, name) +
            "buffer is in GPU memory; this backend reads CPU memory only");
    THOST_RETURN_ERROR_IF_FALSE(
        size <= out->byte_size_ - seen, TRITONSERVER_ERROR_INTERNAL,
        InputContext(request, name) + "buffers hold more than its byte size " +
            std::to_string(out->byte_size_));
    if (buffer_count == 1) {
      out->data_ = static_cast<const char*>(src);
    } else if (size > 0) {
      out->copy_.resize(out->byte_size_);
      std::memcpy(out->copy_.data() + seen, src, size);
    }
    seen += size;
  }
  THOST_RETURN_ERROR_IF_FALSE(
      seen == out->byte_size_, TRITONSERVER_ERROR_INTERNAL,
      InputContext(request, name) + "buffers hold " + std::to_string(seen) +
          " bytes, its byte size is " + std::to_string(out->byte_size_));
  if (buffer_count != 1) {
    out->data_ = out->copy_.data();
  }
  return nullptr;
}

TRITONSERVER_Error*
CheckInput(const InputTensor& input, TRITONSERVER_DataType data_type)
{
  THOST_RETURN_ERROR_IF_FALSE(
      input.DataType() == data_type, TRITONSERVER_ERROR_INVALID_ARG,
      "input '" + input.Name() + "': data type " +
          TRITONSERVER_DataTypeString(input.DataType()) + ", expected " +
          TRITONSERVER_DataTypeString(data_type));
  if (data_type == TRITONSERVER_TYPE_BYTES) {
    return nullptr;
  }
  const int64_t count = ElementCount(input.Shape());
  const uint64_t want =
      static_cast<uint64_t>(count) * TRITONSERVER_DataTypeByteSize(data_type);
  THOST_RETURN_ERROR_IF_FALSE(
      count >= 0 && input.ByteSize() == want, TRITONSERVER_ERROR_INVALID_ARG,
      "input '" + input.Name() + "': " + std::to_string(input.ByteSize()) +
          " bytes, shape " + ShapeToString(input.Shape()) + " of " +
          TRITONSERVER_DataTypeString(data_type) + " needs " +
          std::to_string(want));
  return nullptr;
}

TRITONSERVER_Error*
RequestedOutputs(
    TRITONBACKEND_Request* request, std::vector<std::string>* names)
{
  uint32_t count = 0;
  THOST_RETURN_IF_ERROR(TRITONBACKEND_RequestOutputCount(request, &count));
  names->clear();
  for (uint32_t i = 0; i < count; ++i) {
    const char* name = nullptr;
    THOST_RETURN_IF_ERROR(TRITONBACKEND_RequestOutputName(request, i, &name));
    names->emplace_back(name);  // copied: the string dies with the request
  }
  return nullptr;
}

TRITONSERVER_Error*
AllocateOutput(
    TRITONBACKEND_Response* response, const std::string& name,
    TRITONSERVER_DataType data_type, const std::vector<int64_t>& shape,
    uint64_t byte_size, char** buffer)
{
  TRITONBACKEND_Output* output = nullptr;
  THOST_RETURN_IF_ERROR(TRITONBACKEND_ResponseOutput(
      response, &output, name.c_str(), data_type, shape.data(),
      static_cast<uint32_t>(shape.size())));
  void* raw = nullptr;
  TRITONSERVER_MemoryType memory_type = TRITONSERVER_MEMORY_CPU;
  int64_t memory_type_id = 0;
  THOST_RETURN_IF_ERROR(TRITONBACKEND_OutputBuffer(
      output, &raw, byte_size, &memory_type, &memory_type_id));
  THOST_RETURN_ERROR_IF_FALSE(
      memory_type != TRITONSERVER_MEMORY_GPU, TRITONSERVER_ERROR_UNSUPPORTED,
      "output '" + name +
          "': the host gave a buffer in GPU memory; this backend writes CPU "
          "memory only");
  *buffer = static_cast<char*>(raw);
  return nullptr;
}

TRITONSERVER_Error*
AllocateOutput(
    TRITONBACKEND_Response* response, const std::string& name,
    TRITONSERVER_DataType data_type, const std::vector<int64_t>& shape,
    char** buffer)
{
  const int64_t count = ElementCount(shape);
  THOST_RETURN_ERROR_IF_FALSE(
      data_type != TRITONSERVER_TYPE_BYTES && count >= 0,
      TRITONSERVER_ERROR_INVALID_ARG,
      "output '" + name + "': the byte size of " +
          TRITONSERVER_DataTypeString(data_type) + " shape " +
          ShapeToString(shape) + " is not known from its shape");
  return AllocateOutput(
      response, name, data_type, shape,
      static_cast<uint64_t>(count) * TRITONSERVER_DataTypeByteSize(data_type),
      buffer);
}

}}  // namespace tritonhost::backend
