// backend_model_instance.cc: BackendModelInstance::Init.
#include "backend_model_instance.hpp"

#include <string>
#include <vector>

#include "errors.hpp"
#include "json_value.hpp"
#include "logging.hpp"

namespace tritonhost { namespace backend {

std::string
BackendModelInstance::MessagePrefix() const
{
  return model_->MessagePrefix() + "instance '" + name_ + "': ";
}

TRITONSERVER_Error*
BackendModelInstance::Init()
{
  THOST_RETURN_IF_ERROR(ReadNameKindAndDevice());
  THOST_RETURN_IF_ERROR(ReadHostPolicyName());
  THOST_LOG_MESSAGE(
      TRITONSERVER_LOG_INFO, MessagePrefix() + "initializing (" +
                                 TRITONSERVER_InstanceGroupKindString(kind_) +
                                 " device " + std::to_string(device_id_) +
                                 ", host policy '" + host_policy_name_ + "')");
  return nullptr;
}

TRITONSERVER_Error*
BackendModelInstance::ReadHostPolicyName()
{
  // The message belongs to the host: serialized, parsed, never deleted.
  TRITONSERVER_Message* policy = nullptr;
  THOST_RETURN_IF_ERROR(
      TRITONBACKEND_ModelInstanceHostPolicy(instance_, &policy));
  const char* json = nullptr;
  size_t size = 0;
  THOST_RETURN_IF_ERROR(
      TRITONSERVER_MessageSerializeToJson(policy, &json, &size));

  JsonValue root;
  TRITONSERVER_Error* err = root.Parse(json, size);
  if (err != nullptr) {
    // "<prefix>host policy is not valid JSON: <reason> at line L, ..."
    return PrefixError(MessagePrefix() + "host policy is ", err);
  }
  std::vector<std::string> names;
  if (root.IsObject()) {
    THOST_RETURN_IF_ERROR(root.Members(&names));
  }
  THOST_RETURN_ERROR_IF_FALSE(
      names.size() == 1, TRITONSERVER_ERROR_INTERNAL,
      MessagePrefix() +
          "host policy must be a JSON object of exactly one member, got " +
          std::string(json, size));
  host_policy_name_ = names[0];
  return nullptr;
}

}}  // namespace tritonhost::backend
