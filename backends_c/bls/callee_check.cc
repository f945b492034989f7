// callee_check.cc: see callee_check.hpp.
#include "callee_check.hpp"

#include "errors.hpp"
#include "host_objects.hpp"
#include "json_value.hpp"

namespace tritonhost { namespace backend { namespace bls {

// Parses the JSON of a message the caller owns into *out, deleting the
// message.
static TRITONSERVER_Error*
ParseMessage(TRITONSERVER_Message* message, JsonValue* out)
{
  MessagePtr owned(message);
  const char* base = nullptr;
  size_t size = 0;
  THOST_RETURN_IF_ERROR(
      TRITONSERVER_MessageSerializeToJson(message, &base, &size));
  return out->Parse(base, size);
}

static TRITONSERVER_Error*
CheckTransactionPolicy(
    const BackendModel& model, TRITONSERVER_Server* server,
    const std::string& callee)
{
  TRITONSERVER_Message* message = nullptr;
  THOST_RETURN_IF_ERROR(TRITONSERVER_ServerModelConfig(
      server, callee.c_str(), -1, 1 /* config version */, &message));
  JsonValue config, policy;
  THOST_RETURN_IF_ERROR(ParseMessage(message, &config));
  bool decoupled = false;
  if (config.Find("model_transaction_policy", &policy) &&
      policy.Find("decoupled")) {
    THOST_RETURN_IF_ERROR(policy.MemberAsBool("decoupled", &decoupled));
  }
  if (decoupled && !model.IsDecoupled()) {
    return model.ConfigError(
        "parameters.bls_model",
        "names model '" + callee +
            "', which is decoupled; only a decoupled model may call it");
  }
  return nullptr;
}

static TRITONSERVER_Error*
CheckInputs(
    const BackendModel& model, TRITONSERVER_Server* server,
    const std::string& callee)
{
  TRITONSERVER_Message* message = nullptr;
  THOST_RETURN_IF_ERROR(
      TRITONSERVER_ServerModelMetadata(server, callee.c_str(), -1, &message));
  JsonValue metadata, inputs;
  THOST_RETURN_IF_ERROR(ParseMessage(message, &metadata));
  THOST_RETURN_IF_ERROR(metadata.MemberAsArray("inputs", &inputs));
  for (const TensorDesc& mine : model.Inputs()) {
    bool found = false;
    for (size_t i = 0; i < inputs.ArraySize() && !found; ++i) {
      JsonValue input;
      std::string name, datatype;
      THOST_RETURN_IF_ERROR(inputs.IndexAsObject(i, &input));
      THOST_RETURN_IF_ERROR(input.MemberAsString("name", &name));
      THOST_RETURN_IF_ERROR(input.MemberAsString("datatype", &datatype));
      found = name == mine.name &&
              TRITONSERVER_StringToDataType(datatype.c_str()) == mine.data_type;
    }
    if (!found) {
      return model.ConfigError(
          mine.config_path, "(" + mine.name + ", " + mine.config_data_type +
                                ") is not an input of model '" + callee +
                                "' of that data type");
    }
  }
  return nullptr;
}

TRITONSERVER_Error*
CheckCallee(
    const BackendModel& model, TRITONSERVER_Server* server,
    const std::string& callee)
{
  bool ready = false;
  THOST_RETURN_IF_ERROR(
      TRITONSERVER_ServerModelIsReady(server, callee.c_str(), -1, &ready));
  THOST_RETURN_ERROR_IF_FALSE(
      ready, TRITONSERVER_ERROR_UNAVAILABLE,
      model.MessagePrefix() + "model '" + callee + "' is not ready");
  THOST_RETURN_IF_ERROR(CheckTransactionPolicy(model, server, callee));
  return CheckInputs(model, server, callee);
}

}}}  // namespace tritonhost::backend::bls
