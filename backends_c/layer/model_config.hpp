// model_config.hpp: ModelConfig, the parts of a model's configuration that
// a backend usually needs, read through TRITONBACKEND_ModelConfig.
//
// The configuration arrives as JSON with Triton's snake_case field names
// (as Triton serialises its ModelConfig protobuf). A field that is absent
// reads as its protobuf default (0, "", false, empty); a field that is
// present with the wrong JSON type is an INVALID_ARG error naming the
// field. A ModelConfig is not changed after Read or Parse, so any number
// of threads may read it at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "json_value.hpp"
#include "triton/core/tritonbackend.h"
#include "triton/core/tritonserver.h"

namespace tritonhost { namespace backend {

// One entry of the config's "input" or "output" array.
struct TensorConfig {
  std::string name;
  std::string data_type;      // e.g. "TYPE_INT32"
  std::vector<int64_t> dims;  // without the batch dimension
  bool optional = false;      // inputs only
};

class ModelConfig {
 public:
  // Reads version 1 of 'model's configuration from the host.
  static TRITONSERVER_Error* Read(TRITONBACKEND_Model* model, ModelConfig* out);

  // Parses configuration JSON text (exposed for tests and tools); copies
  // what it keeps.
  static TRITONSERVER_Error* Parse(
      const char* json, size_t size, ModelConfig* out);

  const std::string& Name() const { return name_; }
  int64_t MaxBatchSize() const { return max_batch_size_; }
  const std::vector<TensorConfig>& Inputs() const { return inputs_; }
  const std::vector<TensorConfig>& Outputs() const { return outputs_; }
  // parameters.<key>.string_value for every key.
  const std::map<std::string, std::string>& Parameters() const
  {
    return parameters_;
  }
  // The JSON text as received, for logging.
  const std::string& Json() const { return json_; }
  // The parsed document, for fields this class does not read.
  const JsonValue& Root() const { return root_; }

 private:
  JsonValue root_;
  std::string json_;
  std::string name_;
  int64_t max_batch_size_ = 0;
  std::vector<TensorConfig> inputs_;
  std::vector<TensorConfig> outputs_;
  std::map<std::string, std::string> parameters_;
};

}}  // namespace tritonhost::backend
