// backend_model.hpp: BackendModel, the base of a C++ backend's ModelState.
//
// A backend derives its ModelState from BackendModel, constructs it from the
// TRITONBACKEND_Model* that TRITONBACKEND_ModelInitialize receives, calls
// Init() (which reads everything below from the host, in one place) and then
// checks the configuration for what the backend itself needs:
//
//   class ModelState : public BackendModel {
//    public:
//     static TRITONSERVER_Error* Create(
//         TRITONBACKEND_Model* model, std::unique_ptr<ModelState>* out)
//     {
//       std::unique_ptr<ModelState> state(new ModelState(model));
//       THOST_RETURN_IF_ERROR(state->Init());
//       THOST_RETURN_IF_ERROR(state->ValidateConfig());
//       *out = std::move(state);
//       return nullptr;
//     }
//     ...
//   };
//
// and the entry points come from THOST_BACKEND_ENTRY_POINTS
// (backend_entry_points.hpp). This is our own take on what Triton's backend
// utility library offers (triton::backend::BackendModel), without exceptions:
// every fallible call returns a TRITONSERVER_Error* the caller owns.
//
// A backend that checks its whole configuration itself, with messages of
// its own, calls InitMinimal() instead of Init() (repeat and square do).
//
// Threads: Init() or InitMinimal() runs once, in
// TRITONBACKEND_ModelInitialize. Afterwards a BackendModel is immutable, so
// the instances of the model may read it from their Execute threads at once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "errors.hpp"
#include "logging.hpp"
#include "model_config.hpp"
#include "triton/core/tritonbackend.h"
#include "triton/core/tritonserver.h"

namespace tritonhost { namespace backend {

// The data type a configuration names ("TYPE_INT32", "TYPE_STRING", ...) as
// a TRITONSERVER_DataType; TRITONSERVER_TYPE_INVALID for an unknown name.
TRITONSERVER_DataType ConfigDataType(const std::string& config_name);

// One entry of the configuration's "input" or "output" array.
struct TensorDesc {
  std::string name;
  TRITONSERVER_DataType data_type = TRITONSERVER_TYPE_INVALID;
  std::string config_data_type;  // as written, e.g. "TYPE_INT32"
  // Without the batch dimension; -1 for a dimension of any size.
  std::vector<int64_t> dims;
  bool optional = false;  // inputs only
  // Where the entry is in the configuration, for messages: "input[1]".
  std::string config_path;
};

// The parts of a model that every backend needs, read once from the host.
class BackendModel {
 public:
  virtual ~BackendModel() = default;
  BackendModel(const BackendModel&) = delete;
  BackendModel& operator=(const BackendModel&) = delete;

  // The handles this model was created with; they live as long as the model.
  TRITONBACKEND_Model* TritonModel() const { return model_; }
  TRITONBACKEND_Backend* TritonBackend() const { return backend_; }

  const std::string& Name() const { return name_; }
  uint64_t Version() const { return version_; }
  // The model's directory in the repository (holding config.pbtxt and the
  // version directories).
  const std::string& RepositoryPath() const { return repository_path_; }
  // The name of the backend serving the model ("addsub").
  const std::string& BackendName() const { return backend_name_; }

  // The configuration, parsed into a JsonValue; Config().Root() reaches
  // fields this class does not read.
  const ModelConfig& Config() const { return config_; }
  int64_t MaxBatchSize() const { return config_.MaxBatchSize(); }
  // Whether the first dimension of every input and output is the batch
  // dimension, as with max_batch_size > 0 (Triton's rule).
  bool SupportsFirstDimBatching() const { return config_.MaxBatchSize() > 0; }
  // model_transaction_policy.decoupled.
  bool IsDecoupled() const { return decoupled_; }

  const std::vector<TensorDesc>& Inputs() const { return inputs_; }
  const std::vector<TensorDesc>& Outputs() const { return outputs_; }
  // The configured input or output called 'name'; nullptr if there is none.
  const TensorDesc* FindInput(const std::string& name) const;
  const TensorDesc* FindOutput(const std::string& name) const;

  // A new INVALID_ARG error "<backend> backend: model '<name>':
  // configuration field '<field>' <problem>", the form every configuration
  // complaint should take so the user knows which file and line to fix.
  TRITONSERVER_Error* ConfigError(
      const std::string& field, const std::string& problem) const;
  // "<backend> backend: model '<name>': ", to prefix other messages.
  std::string MessagePrefix() const;

 protected:
  // Keeps 'model'; reads nothing yet (see Init).
  explicit BackendModel(TRITONBACKEND_Model* model) : model_(model) {}

  // Reads, in this order: the model's name, version, repository (which must
  // be a file system directory, else UNSUPPORTED), backend and its name, and
  // configuration version 1; then checks max_batch_size >= 0 and that every
  // input and output names a known data type (INVALID_ARG naming the field
  // otherwise). Call it once, before anything else.
  TRITONSERVER_Error* Init();

  // Reads only the model's name, version and configuration version 1, and
  // logs at INFO, as Triton's repeat and square backends do:
  //   TRITONBACKEND_ModelInitialize: <name> (version <version>)
  //   model configuration:
  //   <the configuration JSON>
  // It checks nothing in the configuration beyond parsing it: the backend
  // checks all of it itself. So Name(), Version(), Config() and
  // MaxBatchSize() are set, and the rest keep their empty defaults (no
  // backend, repository, inputs or outputs; not decoupled): read Config()
  // for those, and leave MessagePrefix() and ConfigError() alone. Call it
  // once, instead of Init(). Inline, so that a backend using it rather than
  // Init() links none of backend_model.cc and imports no host function it
  // does not call.
  TRITONSERVER_Error* InitMinimal()
  {
    THOST_RETURN_IF_ERROR(ReadNameAndVersion());
    THOST_LOG_MESSAGE(
        TRITONSERVER_LOG_INFO, "TRITONBACKEND_ModelInitialize: " + name_ +
                                   " (version " + std::to_string(version_) +
                                   ")");
    THOST_RETURN_IF_ERROR(ModelConfig::Read(model_, &config_));
    THOST_LOG_MESSAGE(
        TRITONSERVER_LOG_INFO, "model configuration:\n" + config_.Json());
    return nullptr;
  }

 private:
  // The first step of Init() and InitMinimal().
  TRITONSERVER_Error* ReadNameAndVersion()
  {
    const char* name = nullptr;
    THOST_RETURN_IF_ERROR(TRITONBACKEND_ModelName(model_, &name));
    name_ = name;  // copied: the host's string lives as long as the model
    return TRITONBACKEND_ModelVersion(model_, &version_);
  }
  TRITONSERVER_Error* ReadTensors(
      const std::vector<TensorConfig>& from, const char* key,
      std::vector<TensorDesc>* to) const;

  TRITONBACKEND_Model* model_;
  TRITONBACKEND_Backend* backend_ = nullptr;
  std::string name_;
  uint64_t version_ = 0;
  std::string repository_path_;
  std::string backend_name_;
  ModelConfig config_;
  bool decoupled_ = false;
  std::vector<TensorDesc> inputs_;
  std::vector<TensorDesc> outputs_;
};

}}  // namespace tritonhost::backend
