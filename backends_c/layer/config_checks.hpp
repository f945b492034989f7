// config_checks.hpp: checks of the inputs and outputs a model configuration
// lists, for a backend that checks its whole configuration itself, in its
// own words (one whose ModelState calls BackendModel::InitMinimal, as repeat
// and square do). Each returns nullptr if the check passes, else a new
// INVALID_ARG error the caller owns, whose message starts with the
// backend's 'prefix' (e.g. "repeat backend: "):
//
//   CheckTensorCount(prefix, Config().Inputs(), "input", {"IN", "DELAY"})
//       "<prefix>expected 2 inputs (IN, DELAY), got 3"
//       "<prefix>expected 1 output (OUT), got 0"
//   CheckTensorDataType(prefix, t, "TYPE_INT32")
//       "<prefix>expected IN data type TYPE_INT32, got 'TYPE_FP32'"
//   CheckTensorDims(prefix, t, {1})
//       "<prefix>expected WAIT dims [1], got [2]"
//
// A backend built on BackendModel::Init gets ConfigError (backend_model.hpp)
// for this instead. Any thread may call these. Inline, so that a backend
// needs no object file of the layer for them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "errors.hpp"
#include "formatting.hpp"
#include "model_config.hpp"
#include "triton/core/tritonserver.h"

namespace tritonhost { namespace backend {

// 'tensors' (the configuration's inputs or outputs, as 'kind' says: "input"
// or "output") has one entry per name in 'names', the names the backend
// expects, in order. Only the count is checked here.
inline TRITONSERVER_Error*
CheckTensorCount(
    const std::string& prefix, const std::vector<TensorConfig>& tensors,
    const std::string& kind, const std::vector<std::string>& names)
{
  std::string listed;
  for (const std::string& name : names) {
    listed += (listed.empty() ? "" : ", ") + name;
  }
  THOST_RETURN_ERROR_IF_FALSE(
      tensors.size() == names.size(), TRITONSERVER_ERROR_INVALID_ARG,
      prefix + "expected " + std::to_string(names.size()) + " " + kind +
          (names.size() == 1 ? "" : "s") + " (" + listed + "), got " +
          std::to_string(tensors.size()));
  return nullptr;
}

// 't' has the configuration data type 'data_type' ("TYPE_INT32").
inline TRITONSERVER_Error*
CheckTensorDataType(
    const std::string& prefix, const TensorConfig& t,
    const std::string& data_type)
{
  THOST_RETURN_ERROR_IF_FALSE(
      t.data_type == data_type, TRITONSERVER_ERROR_INVALID_ARG,
      prefix + "expected " + t.name + " data type " + data_type + ", got '" +
          t.data_type + "'");
  return nullptr;
}

// 't' has exactly the dims 'dims'.
inline TRITONSERVER_Error*
CheckTensorDims(
    const std::string& prefix, const TensorConfig& t,
    const std::vector<int64_t>& dims)
{
  THOST_RETURN_ERROR_IF_FALSE(
      t.dims == dims, TRITONSERVER_ERROR_INVALID_ARG,
      prefix + "expected " + t.name + " dims " + ShapeToString(dims) +
          ", got " + ShapeToString(t.dims));
  return nullptr;
}

}}  // namespace tritonhost::backend
