// backend_model_instance.hpp: BackendModelInstance, the base of a C++
// backend's ModelInstanceState.
//
// A backend derives its ModelInstanceState from BackendModelInstance,
// constructs it from the TRITONBACKEND_ModelInstance* that
// TRITONBACKEND_ModelInstanceInitialize receives and the model's state
// (fetched with ModelStateOf, state_handles.hpp), and calls Init():
//
//   ModelState* model_state = nullptr;
//   THOST_RETURN_IF_ERROR(ModelStateOf(instance, &model_state));
//   std::unique_ptr<ModelInstanceState> state(
//       new ModelInstanceState(instance, model_state));
//   THOST_RETURN_IF_ERROR(state->Init());
//
// A backend whose model calls BackendModel::InitMinimal() calls
// InitMinimal() here too.
//
// Threads: Init() or InitMinimal() runs once, in
// TRITONBACKEND_ModelInstanceInitialize; afterwards the base is immutable.
// The host never runs two Execute calls on one instance at once, so what a
// derived class keeps per instance needs no lock when only Execute touches
// it.
#pragma once

#include <cstdint>
#include <string>

#include "backend_model.hpp"
#include "errors.hpp"
#include "logging.hpp"
#include "triton/core/tritonbackend.h"

namespace tritonhost { namespace backend {

// The parts of a model instance that every backend needs, read once from
// the host.
class BackendModelInstance {
 public:
  virtual ~BackendModelInstance() = default;
  BackendModelInstance(const BackendModelInstance&) = delete;
  BackendModelInstance& operator=(const BackendModelInstance&) = delete;

  // The handle this instance was created with; it lives as long as the
  // instance.
  TRITONBACKEND_ModelInstance* TritonModelInstance() const { return instance_; }
  // The state of the model this instance belongs to; it outlives the
  // instance (models are finalized after their instances).
  BackendModel* Model() const { return model_; }

  // "<group name>_<index>".
  const std::string& Name() const { return name_; }
  TRITONSERVER_InstanceGroupKind Kind() const { return kind_; }
  // The GPU ordinal for GPU instances, 0 otherwise.
  int32_t DeviceId() const { return device_id_; }
  // The name of the instance's host policy ("cpu" unless the configuration
  // sets one), the name to pass when reading inputs for this instance.
  const std::string& HostPolicyName() const { return host_policy_name_; }

  // "<backend> backend: model '<model>': instance '<name>': ", to prefix
  // messages.
  std::string MessagePrefix() const;

 protected:
  // Keeps both pointers; reads nothing yet (see Init). 'model' must be the
  // state of the instance's model.
  BackendModelInstance(
      TRITONBACKEND_ModelInstance* instance, BackendModel* model)
      : instance_(instance), model_(model)
  {
  }

  // Reads the instance's name, kind, device id and host policy. The host
  // policy is a message of exactly one member, the policy's name; anything
  // else is INTERNAL. Call it once, before anything else.
  TRITONSERVER_Error* Init();

  // Reads only the instance's name, kind and device id, and logs at INFO,
  // as Triton's repeat and square backends do:
  //   TRITONBACKEND_ModelInstanceInitialize: <name> (<kind> device <id>)
  // HostPolicyName() stays empty (nullptr, the host's default buffers, is
  // what to read inputs with then), and MessagePrefix() is for Init() only.
  // Call it once, instead of Init(). Inline, so that a backend using it
  // rather than Init() links none of backend_model_instance.cc and imports
  // no host function it does not call.
  TRITONSERVER_Error* InitMinimal()
  {
    THOST_RETURN_IF_ERROR(ReadNameKindAndDevice());
    THOST_LOG_MESSAGE(
        TRITONSERVER_LOG_INFO,
        "TRITONBACKEND_ModelInstanceInitialize: " + name_ + " (" +
            TRITONSERVER_InstanceGroupKindString(kind_) + " device " +
            std::to_string(device_id_) + ")");
    return nullptr;
  }

 private:
  // The first step of Init() and InitMinimal().
  TRITONSERVER_Error* ReadNameKindAndDevice()
  {
    const char* name = nullptr;
    THOST_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceName(instance_, &name));
    name_ = name;  // copied: the host's string lives as long as the instance
    THOST_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceKind(instance_, &kind_));
    return TRITONBACKEND_ModelInstanceDeviceId(instance_, &device_id_);
  }
  TRITONSERVER_Error* ReadHostPolicyName();

  TRITONBACKEND_ModelInstance* instance_;
  BackendModel* model_;
  std::string name_;
  TRITONSERVER_InstanceGroupKind kind_ = TRITONSERVER_INSTANCEGROUPKIND_CPU;
  int32_t device_id_ = 0;
  std::string host_policy_name_;
};

}}  // namespace tritonhost::backend
