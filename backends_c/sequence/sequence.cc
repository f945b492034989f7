// sequence.cc: the "sequence" backend (libtriton_sequence.so), which serves
// Triton's example model "simple_sequence" as Triton's sequence example
// clients (simple_grpc_sequence_stream_infer_client and the sync ones)
// expect it: for each row of each request
//   OUTPUT = INPUT + START    when READY is true
//   OUTPUT = 0                when it is not
// so the first request of a sequence gets its value plus one and every
// later one its value back.
//
// Model: one input INPUT and one output OUTPUT, both TYPE_INT32 with the
// same dims, and sequence_batching with a CONTROL_SEQUENCE_START and a
// CONTROL_SEQUENCE_READY control input, each given as int32_false_true
// (so the sequence batcher sends them as INT32, one element per row); other
// controls (END, CORRID) may be there too and are not read. Checked at
// load, where a mismatch is an INVALID_ARG naming the configuration field.
// START's value is added as the batcher sends it; READY is true when it
// equals its configured true value. Any max_batch_size. Not decoupled: one
// response per request. A request whose START or READY does not hold one
// element per row of INPUT gets an INVALID_ARG response. The backend keeps
// no state between requests: the sequence batcher's ordering and controls
// are what make the sequence. Statistics are reported per request and per
// batch.
//
// Built on the C++ backend layer in backends_c/layer: BackendModel,
// BackendModelInstance, backend_io.hpp and RequestBatch.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend_entry_points.hpp"
#include "backend_io.hpp"
#include "backend_model.hpp"
#include "backend_model_instance.hpp"
#include "errors.hpp"
#include "formatting.hpp"
#include "json_value.hpp"
#include "request_batch.hpp"
#include "state_handles.hpp"

namespace tritonhost { namespace backend { namespace sequence {

// One control input the backend reads: the name the batcher gives it and
// the value it sends for true.
struct Control {
  std::string input;
  int32_t true_value = 1;
};

//
// ModelState: the model's configuration, checked once at load.
//
class ModelState : public BackendModel {
 public:
  static TRITONSERVER_Error* Create(
      TRITONBACKEND_Model* model, std::unique_ptr<ModelState>* out);

  const Control& Start() const { return start_; }
  const Control& Ready() const { return ready_; }

 private:
  explicit ModelState(TRITONBACKEND_Model* model) : BackendModel(model) {}
  TRITONSERVER_Error* ValidateConfig();
  TRITONSERVER_Error* CheckTensors() const;
  TRITONSERVER_Error* ReadControls();
  TRITONSERVER_Error* ReadControl(
      const JsonValue& control, const std::string& field,
      const std::string& input, Control* out) const;

  Control start_;
  Control ready_;
};

TRITONSERVER_Error*
ModelState::Create(TRITONBACKEND_Model* model, std::unique_ptr<ModelState>* out)
{
  std::unique_ptr<ModelState> state(new ModelState(model));
  THOST_RETURN_IF_ERROR(state->Init());
  THOST_RETURN_IF_ERROR(state->ValidateConfig());
  *out = std::move(state);
  return nullptr;
}

// INPUT and OUTPUT, TYPE_INT32, the same dims, and nothing else.
TRITONSERVER_Error*
ModelState::CheckTensors() const
{
  const TensorDesc* in = FindInput("INPUT");
  const TensorDesc* out = FindOutput("OUTPUT");
  if (in == nullptr) {
    return ConfigError("input", "has no INPUT; sequence needs INPUT only");
  }
  if (out == nullptr) {
    return ConfigError("output", "has no OUTPUT; sequence needs OUTPUT only");
  }
  if (Inputs().size() != 1) {
    return ConfigError(
        "input", "has " + std::to_string(Inputs().size()) +
                     " entries; sequence needs INPUT only");
  }
  if (Outputs().size() != 1) {
    return ConfigError(
        "output", "has " + std::to_string(Outputs().size()) +
                      " entries; sequence needs OUTPUT only");
  }
  for (const TensorDesc* t : {in, out}) {
    if (t->data_type != TRITONSERVER_TYPE_INT32) {
      return ConfigError(
          t->config_path + ".data_type", "(" + t->name + ") is " +
                                             t->config_data_type +
                                             "; sequence supports TYPE_INT32");
    }
  }
  if (in->optional) {
    return ConfigError(
        in->config_path + ".optional", "is true; sequence needs INPUT");
  }
  if (out->dims != in->dims) {
    return ConfigError(
        out->config_path + ".dims",
        "(OUTPUT) is " + ShapeToString(out->dims) + ", but " + in->config_path +
            ".dims (INPUT) is " + ShapeToString(in->dims) +
            "; sequence needs the same dims for both");
  }
  return nullptr;
}

// 'control' (at 'field', of control input 'input') as an INT32 control:
// its int32_false_true pair.
TRITONSERVER_Error*
ModelState::ReadControl(
    const JsonValue& control, const std::string& field,
    const std::string& input, Control* out) const
{
  JsonValue pair;
  if (!control.Find("int32_false_true", &pair) || pair.ArraySize() != 2) {
    return ConfigError(
        field + ".int32_false_true",
        "(" + input +
            ") is not a pair [false, true]; sequence reads START and READY "
            "as INT32 controls");
  }
  int64_t values[2] = {0, 0};
  for (size_t i = 0; i < 2; ++i) {
    TRITONSERVER_Error* err = pair.IndexAsInt(i, &values[i]);
    if (err != nullptr) {
      TRITONSERVER_ErrorDelete(err);
      return ConfigError(
          field + ".int32_false_true",
          "(" + input + ") holds something other than integers");
    }
  }
  out->input = input;
  out->true_value = static_cast<int32_t>(values[1]);
  return nullptr;
}

// Finds the START and READY controls in sequence_batching.control_input.
TRITONSERVER_Error*
ModelState::ReadControls()
{
  const std::string need =
      "; sequence needs CONTROL_SEQUENCE_START and CONTROL_SEQUENCE_READY "
      "control inputs";
  JsonValue batching;
  if (!Config().Root().Find("sequence_batching", &batching) ||
      !batching.IsObject()) {
    return ConfigError("sequence_batching", "is not set" + need);
  }
  JsonValue inputs;
  batching.Find("control_input", &inputs);
  bool have_start = false, have_ready = false;
  for (size_t i = 0; i < inputs.ArraySize(); ++i) {
    const std::string field =
        "sequence_batching.control_input[" + std::to_string(i) + "]";
    JsonValue input, controls;
    std::string name;
    TRITONSERVER_Error* err = inputs.IndexAsObject(i, &input);
    if (err == nullptr) {
      err = input.MemberAsString("name", &name);
    }
    if (err != nullptr) {
      TRITONSERVER_ErrorDelete(err);
      return ConfigError(field + ".name", "is not a string");
    }
    input.Find("control", &controls);
    for (size_t j = 0; j < controls.ArraySize(); ++j) {
      const std::string control_field =
          field + ".control[" + std::to_string(j) + "]";
      JsonValue control;
      std::string kind;
      err = controls.IndexAsObject(j, &control);
      if (err == nullptr) {
        err = control.MemberAsString("kind", &kind);
      }
      if (err != nullptr) {
        TRITONSERVER_ErrorDelete(err);
        return ConfigError(control_field + ".kind", "is not a control kind");
      }
      Control* target = nullptr;
      bool* seen = nullptr;
      if (kind == "CONTROL_SEQUENCE_START") {
        target = &start_;
        seen = &have_start;
      } else if (kind == "CONTROL_SEQUENCE_READY") {
        target = &ready_;
        seen = &have_ready;
      } else {
        continue;  // END, CORRID: sent, not read
      }
      if (*seen) {
        return ConfigError(
            control_field + ".kind", "repeats " + kind + need + ", one each");
      }
      THOST_RETURN_IF_ERROR(ReadControl(control, control_field, name, target));
      *seen = true;
    }
  }
  if (!have_start || !have_ready) {
    return ConfigError(
        "sequence_batching.control_input",
        std::string("has no ") +
            (have_start ? "CONTROL_SEQUENCE_READY" : "CONTROL_SEQUENCE_START") +
            need);
  }
  if (start_.input == ready_.input) {
    return ConfigError(
        "sequence_batching.control_input",
        "gives START and READY the one input '" + start_.input + "'" + need +
            " on two inputs");
  }
  return nullptr;
}

TRITONSERVER_Error*
ModelState::ValidateConfig()
{
  if (IsDecoupled()) {
    return ConfigError(
        "model_transaction_policy.decoupled",
        "is true; sequence sends exactly one response per request");
  }
  THOST_RETURN_IF_ERROR(CheckTensors());
  return ReadControls();
}

//
// ModelInstanceState: computes OUTPUT for each request of a batch.
//
class ModelInstanceState : public BackendModelInstance {
 public:
  static TRITONSERVER_Error* Create(
      TRITONBACKEND_ModelInstance* instance,
      std::unique_ptr<ModelInstanceState>* out);

  TRITONSERVER_Error* Execute(
      TRITONBACKEND_Request** requests, uint32_t request_count);

 private:
  ModelInstanceState(
      TRITONBACKEND_ModelInstance* instance, ModelState* model_state)
      : BackendModelInstance(instance, model_state), model_state_(model_state)
  {
  }
  TRITONSERVER_Error* Compute(
      TRITONBACKEND_Request* request, TRITONBACKEND_Response* response) const;
  TRITONSERVER_Error* ReadControlInput(
      TRITONBACKEND_Request* request, const Control& control, size_t rows,
      InputTensor* out) const;

  ModelState* model_state_;
};

TRITONSERVER_Error*
ModelInstanceState::Create(
    TRITONBACKEND_ModelInstance* instance,
    std::unique_ptr<ModelInstanceState>* out)
{
  ModelState* model_state = nullptr;
  THOST_RETURN_IF_ERROR(ModelStateOf(instance, &model_state));
  std::unique_ptr<ModelInstanceState> state(
      new ModelInstanceState(instance, model_state));
  THOST_RETURN_IF_ERROR(state->Init());
  THOST_RETURN_ERROR_IF_FALSE(
      state->Kind() != TRITONSERVER_INSTANCEGROUPKIND_GPU,
      TRITONSERVER_ERROR_UNSUPPORTED,
      state->MessagePrefix() +
          "KIND_GPU instances are not supported; use KIND_CPU");
  *out = std::move(state);
  return nullptr;
}

TRITONSERVER_Error*
ModelInstanceState::Execute(
    TRITONBACKEND_Request** requests, uint32_t request_count)
{
  RequestBatch batch(*this, requests, request_count);
  batch.ForEach(
      [this](TRITONBACKEND_Request* request, TRITONBACKEND_Response* response) {
        return Compute(request, response);
      });
  batch.Finish();
  return nullptr;  // every request was answered and released
}

// Reads control input 'control' of 'request': INT32, one element per row.
TRITONSERVER_Error*
ModelInstanceState::ReadControlInput(
    TRITONBACKEND_Request* request, const Control& control, size_t rows,
    InputTensor* out) const
{
  THOST_RETURN_IF_ERROR(
      ReadInput(request, control.input, out, HostPolicyName().c_str()));
  THOST_RETURN_IF_ERROR(CheckInput(*out, TRITONSERVER_TYPE_INT32));
  const int64_t count = ElementCount(out->Shape());
  THOST_RETURN_ERROR_IF_FALSE(
      count == static_cast<int64_t>(rows), TRITONSERVER_ERROR_INVALID_ARG,
      MessagePrefix() + "control input '" + control.input + "' has shape " +
          ShapeToString(out->Shape()) + " for " + std::to_string(rows) +
          " rows of INPUT; sequence needs one element per row");
  return nullptr;
}

// OUTPUT = INPUT + START where READY is true, 0 where it is not, row by
// row (INT32 arithmetic wraps).
TRITONSERVER_Error*
ModelInstanceState::Compute(
    TRITONBACKEND_Request* request, TRITONBACKEND_Response* response) const
{
  InputTensor in;
  THOST_RETURN_IF_ERROR(
      ReadInput(request, "INPUT", &in, HostPolicyName().c_str()));
  THOST_RETURN_IF_ERROR(CheckInput(in, TRITONSERVER_TYPE_INT32));
  // CheckInput made sure the count is not negative.
  const size_t count = static_cast<size_t>(ElementCount(in.Shape()));
  size_t rows = 1;
  if (model_state_->SupportsFirstDimBatching()) {
    THOST_RETURN_ERROR_IF_FALSE(
        !in.Shape().empty(), TRITONSERVER_ERROR_INVALID_ARG,
        MessagePrefix() + "INPUT has no batch dimension");
    rows = static_cast<size_t>(in.Shape()[0]);
  }
  const size_t per_row = (rows == 0) ? 0 : count / rows;

  InputTensor start, ready;
  THOST_RETURN_IF_ERROR(
      ReadControlInput(request, model_state_->Start(), rows, &start));
  THOST_RETURN_IF_ERROR(
      ReadControlInput(request, model_state_->Ready(), rows, &ready));

  std::vector<std::string> outputs;
  THOST_RETURN_IF_ERROR(RequestedOutputs(request, &outputs));
  for (const std::string& name : outputs) {
    THOST_RETURN_ERROR_IF_FALSE(
        name == "OUTPUT", TRITONSERVER_ERROR_INVALID_ARG,
        MessagePrefix() + "unknown output '" + name + "' requested");
    char* out = nullptr;
    THOST_RETURN_IF_ERROR(AllocateOutput(
        response, name, TRITONSERVER_TYPE_INT32, in.Shape(), &out));
    const int32_t ready_value = model_state_->Ready().true_value;
    for (size_t r = 0; r < rows; ++r) {
      const bool is_ready =
          LoadElement<int32_t>(ready.Data(), r) == ready_value;
      // Computed unsigned so that overflow wraps instead of being undefined.
      const uint32_t add =
          static_cast<uint32_t>(LoadElement<int32_t>(start.Data(), r));
      for (size_t e = r * per_row; e < (r + 1) * per_row; ++e) {
        const uint32_t value =
            static_cast<uint32_t>(LoadElement<int32_t>(in.Data(), e));
        StoreElement<int32_t>(
            out, e, is_ready ? static_cast<int32_t>(value + add) : 0);
      }
    }
  }
  return nullptr;
}

}}}  // namespace tritonhost::backend::sequence

//
// Entry points: TRITONBACKEND_ModelInitialize, ModelFinalize,
// ModelInstanceInitialize, ModelInstanceFinalize and ModelInstanceExecute,
// each creating, fetching or destroying a state and calling it.
//
THOST_BACKEND_ENTRY_POINTS(
    tritonhost::backend::sequence::ModelState,
    tritonhost::backend::sequence::ModelInstanceState);

//
// sequence computes on the CPU: it prefers KIND_CPU, so a model without
// instance_group gets one CPU instance on a server with GPUs too, as with
// addsub.
//
extern "C" TRITONSERVER_Error*
TRITONBACKEND_GetBackendAttribute(
    TRITONBACKEND_Backend* /* backend */,
    TRITONBACKEND_BackendAttribute* backend_attributes)
{
  return TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup(
      backend_attributes, TRITONSERVER_INSTANCEGROUPKIND_CPU, 1, nullptr, 0);
}
