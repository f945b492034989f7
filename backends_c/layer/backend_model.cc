// backend_model.cc: BackendModel::Init and the configuration helpers.
#include "backend_model.hpp"

#include <utility>

#include "errors.hpp"
#include "json_value.hpp"
#include "logging.hpp"

namespace tritonhost { namespace backend {

TRITONSERVER_DataType
ConfigDataType(const std::string& config_name)
{
  static const struct {
    const char* name;
    TRITONSERVER_DataType type;
  } kTypes[] = {
      {"TYPE_BOOL", TRITONSERVER_TYPE_BOOL},
      {"TYPE_UINT8", TRITONSERVER_TYPE_UINT8},
      {"TYPE_UINT16", TRITONSERVER_TYPE_UINT16},
      {"TYPE_UINT32", TRITONSERVER_TYPE_UINT32},
      {"TYPE_UINT64", TRITONSERVER_TYPE_UINT64},
      {"TYPE_INT8", TRITONSERVER_TYPE_INT8},
      {"TYPE_INT16", TRITONSERVER_TYPE_INT16},
      {"TYPE_INT32", TRITONSERVER_TYPE_INT32},
      {"TYPE_INT64", TRITONSERVER_TYPE_INT64},
      {"TYPE_FP16", TRITONSERVER_TYPE_FP16},
      {"TYPE_FP32", TRITONSERVER_TYPE_FP32},
      {"TYPE_FP64", TRITONSERVER_TYPE_FP64},
      {"TYPE_STRING", TRITONSERVER_TYPE_BYTES},
      {"TYPE_BF16", TRITONSERVER_TYPE_BF16},
  };
  for (const auto& t : kTypes) {
    if (config_name == t.name) {
      return t.type;
    }
  }
  return TRITONSERVER_TYPE_INVALID;
}

static const TensorDesc*
FindTensor(const std::vector<TensorDesc>& tensors, const std::string& name)
{
  for (const TensorDesc& t : tensors) {
    if (t.name == name) {
      return &t;
    }
  }
  return nullptr;
}

const TensorDesc*
BackendModel::FindInput(const std::string& name) const
{
  return FindTensor(inputs_, name);
}

const TensorDesc*
BackendModel::FindOutput(const std::string& name) const
{
  return FindTensor(outputs_, name);
}

std::string
BackendModel::MessagePrefix() const
{
  return backend_name_ + " backend: model '" + name_ + "': ";
}

TRITONSERVER_Error*
BackendModel::ConfigError(
    const std::string& field, const std::string& problem) const
{
  return MakeError(
      TRITONSERVER_ERROR_INVALID_ARG,
      MessagePrefix() + "configuration field '" + field + "' " + problem);
}

TRITONSERVER_Error*
BackendModel::Init()
{
  THOST_RETURN_IF_ERROR(ReadNameAndVersion());

  TRITONBACKEND_ArtifactType artifact = TRITONBACKEND_ARTIFACT_FILESYSTEM;
  const char* location = nullptr;
  THOST_RETURN_IF_ERROR(
      TRITONBACKEND_ModelRepository(model_, &artifact, &location));
  THOST_RETURN_ERROR_IF_FALSE(
      artifact == TRITONBACKEND_ARTIFACT_FILESYSTEM,
      TRITONSERVER_ERROR_UNSUPPORTED,
      "model '" + name_ +
          "': only file system model repositories are "
          "supported");
  repository_path_ = (location != nullptr) ? location : "";

  const char* backend_name = nullptr;
  THOST_RETURN_IF_ERROR(TRITONBACKEND_ModelBackend(model_, &backend_));
  THOST_RETURN_IF_ERROR(TRITONBACKEND_BackendName(backend_, &backend_name));
  backend_name_ = backend_name;

  THOST_LOG_MESSAGE(
      TRITONSERVER_LOG_INFO, MessagePrefix() + "initializing version " +
                                 std::to_string(version_) + " from " +
                                 repository_path_);
  THOST_RETURN_IF_ERROR(ModelConfig::Read(model_, &config_));
  THOST_LOG_MESSAGE(
      TRITONSERVER_LOG_VERBOSE,
      MessagePrefix() + "model configuration:\n" + config_.Json());

  if (config_.MaxBatchSize() < 0) {
    return ConfigError(
        "max_batch_size", "is " + std::to_string(config_.MaxBatchSize()) +
                              "; it must be 0 (no batching) or positive");
  }
  JsonValue policy;
  JsonValue decoupled;
  if (config_.Root().Find("model_transaction_policy", &policy) &&
      policy.Find("decoupled", &decoupled)) {
    if (!decoupled.IsBool()) {
      return ConfigError(
          "model_transaction_policy.decoupled", "must be true or false");
    }
    THOST_RETURN_IF_ERROR(decoupled.AsBool(&decoupled_));
  }
  THOST_RETURN_IF_ERROR(ReadTensors(config_.Inputs(), "input", &inputs_));
  return ReadTensors(config_.Outputs(), "output", &outputs_);
}

TRITONSERVER_Error*
BackendModel::ReadTensors(
    const std::vector<TensorConfig>& from, const char* key,
    std::vector<TensorDesc>* to) const
{
  to->clear();
  for (size_t i = 0; i < from.size(); ++i) {
    TensorDesc t;
    t.name = from[i].name;
    t.config_data_type = from[i].data_type;
    t.data_type = ConfigDataType(from[i].data_type);
    t.dims = from[i].dims;
    t.optional = from[i].optional;
    t.config_path = std::string(key) + "[" + std::to_string(i) + "]";
    if (t.data_type == TRITONSERVER_TYPE_INVALID) {
      return ConfigError(
          t.config_path + ".data_type", "('" + t.name +
                                            "') names no known data type: '" +
                                            t.config_data_type + "'");
    }
    to->push_back(std::move(t));
  }
  return nullptr;
}

}}  // namespace tritonhost::backend
