// model_config.cc: reading ModelConfig's fields from the configuration JSON.
#include "model_config.hpp"

#include <utility>

#include "errors.hpp"
#include "host_objects.hpp"

namespace tritonhost { namespace backend {

namespace {

TRITONSERVER_Error*
TypeError(const std::string& path, const char* want, const JsonValue& v)
{
  return MakeError(
      TRITONSERVER_ERROR_INVALID_ARG, "model configuration field '" + path +
                                          "' must be " + want + ", got " +
                                          v.TypeName());
}

// Reads member 'key' of 'obj' into *out with 'read' (JsonValue::AsInt,
// ...). An absent member leaves T's default (0, "", false); one that 'is'
// refuses is a TypeError for 'path', saying it must be 'want'.
template <typename T>
TRITONSERVER_Error*
GetMember(
    const JsonValue& obj, const char* key, const std::string& path,
    bool (JsonValue::*is)() const, const char* want,
    TRITONSERVER_Error* (JsonValue::*read)(T*) const, T* out)
{
  JsonValue v;
  *out = T();
  if (!obj.Find(key, &v)) {
    return nullptr;
  }
  if (!(v.*is)()) {
    return TypeError(path, want, v);
  }
  return (v.*read)(out);
}

TRITONSERVER_Error*
GetString(
    const JsonValue& obj, const char* key, const std::string& path,
    std::string* out)
{
  return GetMember(
      obj, key, path, &JsonValue::IsString, "a string", &JsonValue::AsString,
      out);
}

TRITONSERVER_Error*
GetDims(
    const JsonValue& obj, const std::string& path, std::vector<int64_t>* out)
{
  JsonValue dims;
  out->clear();
  if (!obj.Find("dims", &dims)) {
    return nullptr;
  }
  if (!dims.IsArray()) {
    return TypeError(path, "an array of integers", dims);
  }
  for (size_t i = 0; i < dims.ArraySize(); ++i) {
    JsonValue v;
    int64_t d = 0;
    THOST_RETURN_IF_ERROR(dims.At(i, &v));
    if (!v.IsInt()) {
      return TypeError(path + "[" + std::to_string(i) + "]", "an integer", v);
    }
    THOST_RETURN_IF_ERROR(v.AsInt(&d));
    out->push_back(d);
  }
  return nullptr;
}

TRITONSERVER_Error*
GetTensors(
    const JsonValue& root, const char* key, std::vector<TensorConfig>* out)
{
  JsonValue arr;
  out->clear();
  if (!root.Find(key, &arr)) {
    return nullptr;
  }
  if (!arr.IsArray()) {
    return TypeError(key, "an array", arr);
  }
  for (size_t i = 0; i < arr.ArraySize(); ++i) {
    const std::string path = std::string(key) + "[" + std::to_string(i) + "]";
    JsonValue t;
    THOST_RETURN_IF_ERROR(arr.At(i, &t));
    if (!t.IsObject()) {
      return TypeError(path, "an object", t);
    }
    TensorConfig tc;
    THOST_RETURN_IF_ERROR(GetString(t, "name", path + ".name", &tc.name));
    THOST_RETURN_IF_ERROR(
        GetString(t, "data_type", path + ".data_type", &tc.data_type));
    THOST_RETURN_IF_ERROR(GetDims(t, path + ".dims", &tc.dims));
    THOST_RETURN_IF_ERROR(GetMember(
        t, "optional", path + ".optional", &JsonValue::IsBool, "true or false",
        &JsonValue::AsBool, &tc.optional));
    out->push_back(std::move(tc));
  }
  return nullptr;
}

TRITONSERVER_Error*
GetParameters(const JsonValue& root, std::map<std::string, std::string>* out)
{
  JsonValue params;
  out->clear();
  if (!root.Find("parameters", &params)) {
    return nullptr;
  }
  if (!params.IsObject()) {
    return TypeError("parameters", "an object", params);
  }
  std::vector<std::string> keys;
  THOST_RETURN_IF_ERROR(params.Members(&keys));
  for (const std::string& key : keys) {
    JsonValue param;
    JsonValue value;
    std::string s;
    // A repeated key finds its first member each time.
    if (!params.Find(key.c_str(), &param) ||
        !param.Find("string_value", &value) || !value.IsString()) {
      return MakeError(
          TRITONSERVER_ERROR_INVALID_ARG,
          "model configuration field 'parameters." + key +
              ".string_value' must be a string");
    }
    THOST_RETURN_IF_ERROR(value.AsString(&s));
    out->emplace(key, std::move(s));  // first duplicate wins
  }
  return nullptr;
}

}  // namespace

TRITONSERVER_Error*
ModelConfig::Read(TRITONBACKEND_Model* model, ModelConfig* out)
{
  TRITONSERVER_Message* raw = nullptr;
  THOST_RETURN_IF_ERROR(
      TRITONBACKEND_ModelConfig(model, 1 /* config_version */, &raw));
  MessagePtr message(raw);
  const char* json = nullptr;
  size_t size = 0;
  THOST_RETURN_IF_ERROR(
      TRITONSERVER_MessageSerializeToJson(message.get(), &json, &size));
  return Parse(json, size, out);  // copies what it keeps
}

TRITONSERVER_Error*
ModelConfig::Parse(const char* json, size_t size, ModelConfig* out)
{
  JsonValue root;
  TRITONSERVER_Error* err = root.Parse(json, size);
  if (err != nullptr) {
    // "model configuration is not valid JSON: <reason> at line L, ..."
    return PrefixError("model configuration is ", err);
  }
  out->root_ = root;
  out->json_.assign(json, size);
  THOST_RETURN_ERROR_IF_FALSE(
      root.IsObject(), TRITONSERVER_ERROR_INVALID_ARG,
      "model configuration must be a JSON object");
  THOST_RETURN_IF_ERROR(GetString(root, "name", "name", &out->name_));
  THOST_RETURN_IF_ERROR(GetMember(
      root, "max_batch_size", "max_batch_size", &JsonValue::IsInt, "an integer",
      &JsonValue::AsInt, &out->max_batch_size_));
  THOST_RETURN_IF_ERROR(GetTensors(root, "input", &out->inputs_));
  THOST_RETURN_IF_ERROR(GetTensors(root, "output", &out->outputs_));
  return GetParameters(root, &out->parameters_);
}

}}  // namespace tritonhost::backend
