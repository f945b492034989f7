// Compiles and links against the installed headers and utilities: the
// model entry points from THOST_BACKEND_ENTRY_POINTS, the configuration
// read with ModelConfig (whose JsonValue needs the installed RapidJSON).
#include <memory>
#include <utility>

#include "backend_entry_points.hpp"
#include "logging.hpp"
#include "model_config.hpp"

namespace echo {

class ModelState {
 public:
  static TRITONSERVER_Error* Create(
      TRITONBACKEND_Model* model, std::unique_ptr<ModelState>* out)
  {
    auto state = std::make_unique<ModelState>();
    THOST_RETURN_IF_ERROR(
        tritonhost::backend::ModelConfig::Read(model, &state->config_));
    *out = std::move(state);
    return nullptr;
  }

 private:
  tritonhost::backend::ModelConfig config_;
};

class ModelInstanceState {
 public:
  static TRITONSERVER_Error* Create(
      TRITONBACKEND_ModelInstance*, std::unique_ptr<ModelInstanceState>* out)
  {
    *out = std::make_unique<ModelInstanceState>();
    return nullptr;
  }

  TRITONSERVER_Error* Execute(
      TRITONBACKEND_Request** requests, uint32_t request_count)
  {
    for (uint32_t r = 0; r < request_count; ++r) {
      THOST_LOG_IF_ERROR(
          TRITONBACKEND_RequestRelease(
              requests[r], TRITONSERVER_REQUEST_RELEASE_ALL),
          "release");
    }
    return nullptr;
  }
};

}  // namespace echo

THOST_BACKEND_ENTRY_POINTS(echo::ModelState, echo::ModelInstanceState);
