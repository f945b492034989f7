// formatting.hpp: text for messages: a shape as "[d0,d1,...]", a request
// by its id.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "triton/core/tritonbackend.h"

namespace tritonhost { namespace backend {

// "[d0,d1,...]"
inline std::string
ShapeToString(const int64_t* dims, uint32_t dims_count)
{
  std::string s = "[";
  for (uint32_t i = 0; i < dims_count; ++i) {
    if (i > 0) {
      s += ",";
    }
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

inline std::string
ShapeToString(const std::vector<int64_t>& shape)
{
  return ShapeToString(shape.data(), static_cast<uint32_t>(shape.size()));
}

// The request's id for messages; "<id_unknown>" when it has none.
inline std::string
RequestIdString(TRITONBACKEND_Request* request)
{
  const char* id = nullptr;
  TRITONSERVER_Error* err = TRITONBACKEND_RequestId(request, &id);
  if (err != nullptr) {
    TRITONSERVER_ErrorDelete(err);
    id = nullptr;
  }
  return (id == nullptr || id[0] == '\0') ? "<id_unknown>" : id;
}

}}  // namespace tritonhost::backend
