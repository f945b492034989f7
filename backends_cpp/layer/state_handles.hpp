// state_handles.hpp: attaching a backend's ModelState and
// ModelInstanceState objects to the host's model and instance handles, and
// reading them back (TRITONBACKEND_ModelSetState / ModelState and the
// instance counterparts). The states are stored as plain T*, so a T stored
// must be read back as the same T. backend_entry_points.hpp uses these for
// the five model entry points; a backend's ModelInstanceState::Create uses
// ModelStateOf to reach its model's state. Any thread may call them.
#pragma once

#include <memory>

#include "errors.hpp"
#include "triton/core/tritonbackend.h"
#include "triton/core/tritonserver.h"

namespace tritonhost { namespace backend {

// Attaches 'state' to 'model' with TRITONBACKEND_ModelSetState and gives up
// ownership on success (TRITONBACKEND_ModelFinalize deletes it); on failure
// 'state' is destroyed here. Store exactly a T* so GetModelState<T> can
// read it back.
template <typename T>
TRITONSERVER_Error*
SetModelState(TRITONBACKEND_Model* model, std::unique_ptr<T> state)
{
  THOST_RETURN_IF_ERROR(TRITONBACKEND_ModelSetState(model, state.get()));
  state.release();
  return nullptr;
}

// Reads back the T* that SetModelState<T> stored for 'model'. INTERNAL if
// there is none (TRITONBACKEND_ModelInitialize failed or never ran).
template <typename T>
TRITONSERVER_Error*
GetModelState(TRITONBACKEND_Model* model, T** out)
{
  void* state = nullptr;
  THOST_RETURN_IF_ERROR(TRITONBACKEND_ModelState(model, &state));
  THOST_RETURN_ERROR_IF_FALSE(
      state != nullptr, TRITONSERVER_ERROR_INTERNAL,
      "the model has no state; did TRITONBACKEND_ModelInitialize succeed?");
  *out = static_cast<T*>(state);
  return nullptr;
}

// Attaches 'state' to 'instance' with TRITONBACKEND_ModelInstanceSetState and
// gives up ownership on success (TRITONBACKEND_ModelInstanceFinalize deletes
// it); on failure 'state' is destroyed here. Store exactly a T*.
template <typename T>
TRITONSERVER_Error*
SetInstanceState(TRITONBACKEND_ModelInstance* instance, std::unique_ptr<T> state)
{
  THOST_RETURN_IF_ERROR(
      TRITONBACKEND_ModelInstanceSetState(instance, state.get()));
  state.release();
  return nullptr;
}

// Reads back the T* that SetInstanceState<T> stored for 'instance'.
// INTERNAL if there is none.
template <typename T>
TRITONSERVER_Error*
GetInstanceState(TRITONBACKEND_ModelInstance* instance, T** out)
{
  void* state = nullptr;
  THOST_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceState(instance, &state));
  THOST_RETURN_ERROR_IF_FALSE(
      state != nullptr, TRITONSERVER_ERROR_INTERNAL,
      "the model instance has no state; did "
      "TRITONBACKEND_ModelInstanceInitialize succeed?");
  *out = static_cast<T*>(state);
  return nullptr;
}

// Reads the T* that SetModelState<T> stored for the model of 'instance'.
template <typename T>
TRITONSERVER_Error*
ModelStateOf(TRITONBACKEND_ModelInstance* instance, T** out)
{
  TRITONBACKEND_Model* model = nullptr;
  THOST_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceModel(instance, &model));
  return GetModelState(model, out);
}

}}  // namespace tritonhost::backend
