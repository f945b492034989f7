// backend_entry_points.hpp: the five model entry points of a C++ backend,
// written once.
//
// A backend in the ModelState / ModelInstanceState pattern of Triton's
// recommended backend gives its two state classes this contract:
//
//   class ModelState {
//    public:
//     // Reads and checks what the model needs (configuration, resources
//     // its instances share). On error the host fails the model's load.
//     static TRITONSERVER_Error* Create(
//         TRITONBACKEND_Model* model, std::unique_ptr<ModelState>* state);
//     ~ModelState();  // the model is finalized
//   };
//
//   class ModelInstanceState {
//    public:
//     // Sets up one instance; ModelStateOf (state_handles.hpp) reaches the
//     // model's state. On error the host fails the model's load.
//     static TRITONSERVER_Error* Create(
//         TRITONBACKEND_ModelInstance* instance,
//         std::unique_ptr<ModelInstanceState>* state);
//     // TRITONBACKEND_ModelInstanceExecute's contract: nullptr means the
//     // backend took every request (and answers and releases each); an
//     // error hands them all back to the host, untouched.
//     TRITONSERVER_Error* Execute(
//         TRITONBACKEND_Request** requests, uint32_t request_count);
//     // The instance is finalized: wait here for whatever it started (the
//     // host closes the library only after every finalizer has returned).
//     ~ModelInstanceState();
//   };
//
// and then writes, at global scope in one of its .cc files:
//
//   THOST_BACKEND_ENTRY_POINTS(mine::ModelState, mine::ModelInstanceState);
//
// which defines, with C linkage:
//   TRITONBACKEND_ModelInitialize          ModelState::Create, then attaches
//                                          the state to the model
//   TRITONBACKEND_ModelFinalize            deletes the model's state
//   TRITONBACKEND_ModelInstanceInitialize  ModelInstanceState::Create, then
//                                          attaches the state to the instance
//   TRITONBACKEND_ModelInstanceFinalize    deletes the instance's state
//   TRITONBACKEND_ModelInstanceExecute     the instance state's Execute
// A state whose Create failed, or that could not be attached, is destroyed
// at once; a finalizer or Execute that finds no state returns INTERNAL.
// TRITONBACKEND_Initialize, TRITONBACKEND_Finalize and
// TRITONBACKEND_GetBackendAttribute differ from backend to backend: a
// backend that needs them defines them itself, next to the macro.
//
// Threads: the host calls these as Triton does (see tritonbackend.h).
// Execute runs on one thread at a time per instance, while other instances
// of the model may execute at the same time, so a ModelState is read from
// several threads once it is created.
#pragma once

#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>

#include "errors.hpp"
#include "state_handles.hpp"
#include "triton/core/tritonbackend.h"
#include "triton/core/tritonserver.h"

namespace tritonhost { namespace backend {

// The bodies of the entry points that THOST_BACKEND_ENTRY_POINTS defines;
// Handle is TRITONBACKEND_Model for a ModelState, TRITONBACKEND_ModelInstance
// for a ModelInstanceState.

template <typename StateT, typename Handle>
TRITONSERVER_Error*
InitializeState(Handle* handle)
{
  std::unique_ptr<StateT> state;
  THOST_RETURN_IF_ERROR(StateT::Create(handle, &state));
  return SetState(handle, std::move(state));
}

template <typename StateT, typename Handle>
TRITONSERVER_Error*
FinalizeState(Handle* handle)
{
  StateT* state = nullptr;
  THOST_RETURN_IF_ERROR(GetState(handle, &state));
  delete state;  // an instance's waits for what the instance started
  return nullptr;
}

template <typename InstanceStateT>
TRITONSERVER_Error*
ExecuteInstance(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    uint32_t request_count)
{
  InstanceStateT* state = nullptr;
  THOST_RETURN_IF_ERROR(GetState(instance, &state));
  return state->Execute(requests, request_count);
}

}}  // namespace tritonhost::backend

// Defines the five model entry points over MODEL_STATE and INSTANCE_STATE
// (see the top of this file). Use it once, at global scope, followed by a
// semicolon.
#define THOST_BACKEND_ENTRY_POINTS(MODEL_STATE, INSTANCE_STATE)                \
  extern "C" {                                                                 \
  TRITONBACKEND_ISPEC TRITONSERVER_Error* TRITONBACKEND_ModelInitialize(       \
      TRITONBACKEND_Model* model)                                              \
  {                                                                            \
    return ::tritonhost::backend::InitializeState<MODEL_STATE>(model);         \
  }                                                                            \
  TRITONBACKEND_ISPEC TRITONSERVER_Error* TRITONBACKEND_ModelFinalize(         \
      TRITONBACKEND_Model* model)                                              \
  {                                                                            \
    return ::tritonhost::backend::FinalizeState<MODEL_STATE>(model);           \
  }                                                                            \
  TRITONBACKEND_ISPEC TRITONSERVER_Error*                                      \
  TRITONBACKEND_ModelInstanceInitialize(TRITONBACKEND_ModelInstance* instance) \
  {                                                                            \
    return ::tritonhost::backend::InitializeState<INSTANCE_STATE>(instance);   \
  }                                                                            \
  TRITONBACKEND_ISPEC TRITONSERVER_Error* TRITONBACKEND_ModelInstanceFinalize( \
      TRITONBACKEND_ModelInstance* instance)                                   \
  {                                                                            \
    return ::tritonhost::backend::FinalizeState<INSTANCE_STATE>(instance);     \
  }                                                                            \
  TRITONBACKEND_ISPEC TRITONSERVER_Error* TRITONBACKEND_ModelInstanceExecute(  \
      TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests, \
      const uint32_t request_count)                                            \
  {                                                                            \
    return ::tritonhost::backend::ExecuteInstance<INSTANCE_STATE>(             \
        instance, requests, request_count);                                    \
  }                                                                            \
  } /* extern "C" */                                                           \
  static_assert(                                                               \
      std::is_class<MODEL_STATE>::value &&                                     \
          std::is_class<INSTANCE_STATE>::value,                                \
      "THOST_BACKEND_ENTRY_POINTS takes the ModelState and "                   \
      "ModelInstanceState classes")
