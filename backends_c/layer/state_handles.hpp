// state_handles.hpp: attaching a backend's ModelState and
// ModelInstanceState objects to the host's model and instance handles, and
// reading them back (TRITONBACKEND_ModelSetState / ModelState and their
// instance counterparts). A state is stored as a plain T*, so it must be
// read back as the same T. backend_entry_points.hpp uses these for the
// five model entry points; a backend's ModelInstanceState::Create uses
// ModelStateOf to reach its model's state. Any thread may call them.
#pragma once

#include <memory>

#include "errors.hpp"
#include "triton/core/tritonbackend.h"
#include "triton/core/tritonserver.h"

namespace tritonhost { namespace backend {

// The host calls that keep a state for a handle of type Handle, and what
// to say when there is none.
template <typename Handle>
struct StateSlot;

template <>
struct StateSlot<TRITONBACKEND_Model> {
  static TRITONSERVER_Error* Set(TRITONBACKEND_Model* model, void* state)
  {
    return TRITONBACKEND_ModelSetState(model, state);
  }
  static TRITONSERVER_Error* Get(TRITONBACKEND_Model* model, void** state)
  {
    return TRITONBACKEND_ModelState(model, state);
  }
  static constexpr const char* kMissing =
      "the model has no state; did TRITONBACKEND_ModelInitialize succeed?";
};

template <>
struct StateSlot<TRITONBACKEND_ModelInstance> {
  static TRITONSERVER_Error* Set(
      TRITONBACKEND_ModelInstance* instance, void* state)
  {
    return TRITONBACKEND_ModelInstanceSetState(instance, state);
  }
  static TRITONSERVER_Error* Get(
      TRITONBACKEND_ModelInstance* instance, void** state)
  {
    return TRITONBACKEND_ModelInstanceState(instance, state);
  }
  static constexpr const char* kMissing =
      "the model instance has no state; did "
      "TRITONBACKEND_ModelInstanceInitialize succeed?";
};

// Attaches 'state' to 'handle' (a TRITONBACKEND_Model or
// TRITONBACKEND_ModelInstance) and gives up ownership on success (the
// matching finalizer deletes it); on failure 'state' is destroyed here.
template <typename T, typename Handle>
TRITONSERVER_Error*
SetState(Handle* handle, std::unique_ptr<T> state)
{
  THOST_RETURN_IF_ERROR(StateSlot<Handle>::Set(handle, state.get()));
  state.release();
  return nullptr;
}

// Reads back the T* that SetState<T> stored for 'handle'. INTERNAL if there
// is none (its initializer failed or never ran).
template <typename T, typename Handle>
TRITONSERVER_Error*
GetState(Handle* handle, T** out)
{
  void* state = nullptr;
  THOST_RETURN_IF_ERROR(StateSlot<Handle>::Get(handle, &state));
  THOST_RETURN_ERROR_IF_FALSE(
      state != nullptr, TRITONSERVER_ERROR_INTERNAL,
      StateSlot<Handle>::kMissing);
  *out = static_cast<T*>(state);
  return nullptr;
}

// Reads the T* that SetState<T> stored for the model of 'instance'.
template <typename T>
TRITONSERVER_Error*
ModelStateOf(TRITONBACKEND_ModelInstance* instance, T** out)
{
  TRITONBACKEND_Model* model = nullptr;
  THOST_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceModel(instance, &model));
  return GetState(model, out);
}

}}  // namespace tritonhost::backend
