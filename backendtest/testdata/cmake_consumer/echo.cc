// Compiles and links against the installed headers and utilities.
#include "logging.hpp"
#include "model_config.hpp"

extern "C" TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance*, TRITONBACKEND_Request** requests,
    const uint32_t request_count)
{
  for (uint32_t r = 0; r < request_count; ++r) {
    THOST_LOG_IF_ERROR(
        TRITONBACKEND_RequestRelease(requests[r], TRITONSERVER_REQUEST_RELEASE_ALL),
        "release");
  }
  tritonhost::backend::ModelConfig config;
  THOST_RETURN_IF_ERROR(tritonhost::backend::ModelConfig::Parse("{}", 2, &config));
  return nullptr;
}
