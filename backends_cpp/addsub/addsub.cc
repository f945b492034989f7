// addsub.cc: the "addsub" backend (libtriton_addsub.so), which serves
// Triton's classic example model "simple": elementwise
//   OUTPUT0 = INPUT0 + INPUT1    OUTPUT1 = INPUT0 - INPUT1
//
// Model: inputs INPUT0 and INPUT1 and outputs OUTPUT0 and OUTPUT1, all of
// one data type (TYPE_INT32 or TYPE_FP32) and the same dims; checked at
// load, where a mismatch is an INVALID_ARG naming the configuration field.
// Any max_batch_size: with batching, the requests of a batch come in one
// Execute and each gets the rows it sent. Not decoupled: one response per
// request, holding only the outputs it asked for (INT32 arithmetic wraps).
// A request whose INPUT0 and INPUT1 shapes differ (possible with -1 dims)
// gets an INVALID_ARG response. Statistics are reported per request and
// per batch.
//
// Built on the C++ backend layer in backends_cpp/layer: BackendModel,
// BackendModelInstance, backend_io.hpp and RequestBatch.
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
#include "request_batch.hpp"
#include "state_handles.hpp"

namespace tritonhost { namespace backend { namespace addsub {

//
// ModelState: the model's configuration, checked once at load.
//
class ModelState : public BackendModel {
 public:
  static TRITONSERVER_Error* Create(
      TRITONBACKEND_Model* model, std::unique_ptr<ModelState>* out);

  // The data type of every input and output.
  TRITONSERVER_DataType DataType() const { return data_type_; }

 private:
  explicit ModelState(TRITONBACKEND_Model* model) : BackendModel(model) {}
  TRITONSERVER_Error* ValidateConfig();
  TRITONSERVER_Error* CheckPair(
      const std::vector<TensorDesc>& tensors, const char* kind,
      const TensorDesc* first, const TensorDesc* second) const;
  TRITONSERVER_Error* CheckLike(
      const TensorDesc& t, const TensorDesc& model) const;

  TRITONSERVER_DataType data_type_ = TRITONSERVER_TYPE_INVALID;
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

// Both tensors of a pair exist and are all there is.
TRITONSERVER_Error*
ModelState::CheckPair(
    const std::vector<TensorDesc>& tensors, const char* kind,
    const TensorDesc* first, const TensorDesc* second) const
{
  const std::string a = (std::string(kind) == "input") ? "INPUT0" : "OUTPUT0";
  const std::string b = (std::string(kind) == "input") ? "INPUT1" : "OUTPUT1";
  const std::string need = "; addsub needs " + a + " and " + b;
  if (first == nullptr || second == nullptr) {
    return ConfigError(kind, "has no " + (first == nullptr ? a : b) + need);
  }
  if (tensors.size() != 2) {
    return ConfigError(
        kind,
        "has " + std::to_string(tensors.size()) + " entries" + need + " only");
  }
  return nullptr;
}

// 't' has the data type and dims of 'model' (INPUT0).
TRITONSERVER_Error*
ModelState::CheckLike(const TensorDesc& t, const TensorDesc& model) const
{
  if (t.data_type != model.data_type) {
    return ConfigError(
        t.config_path + ".data_type",
        "(" + t.name + ") is " + t.config_data_type + ", but " +
            model.config_path + ".data_type (" + model.name + ") is " +
            model.config_data_type + "; addsub needs one data type for all");
  }
  if (t.dims != model.dims) {
    return ConfigError(
        t.config_path + ".dims",
        "(" + t.name + ") is " + ShapeToString(t.dims) + ", but " +
            model.config_path + ".dims (" + model.name + ") is " +
            ShapeToString(model.dims) + "; addsub needs the same dims for all");
  }
  return nullptr;
}

TRITONSERVER_Error*
ModelState::ValidateConfig()
{
  if (IsDecoupled()) {
    return ConfigError(
        "model_transaction_policy.decoupled",
        "is true; addsub sends exactly one response per request");
  }
  const TensorDesc* in0 = FindInput("INPUT0");
  const TensorDesc* in1 = FindInput("INPUT1");
  const TensorDesc* out0 = FindOutput("OUTPUT0");
  const TensorDesc* out1 = FindOutput("OUTPUT1");
  THOST_RETURN_IF_ERROR(CheckPair(Inputs(), "input", in0, in1));
  THOST_RETURN_IF_ERROR(CheckPair(Outputs(), "output", out0, out1));
  data_type_ = in0->data_type;
  if (data_type_ != TRITONSERVER_TYPE_INT32 &&
      data_type_ != TRITONSERVER_TYPE_FP32) {
    return ConfigError(
        in0->config_path + ".data_type",
        "(INPUT0) is " + in0->config_data_type +
            "; addsub supports TYPE_INT32 and TYPE_FP32");
  }
  if (in0->optional || in1->optional) {
    return ConfigError(
        (in0->optional ? in0 : in1)->config_path + ".optional",
        "is true; addsub needs both inputs");
  }
  for (const TensorDesc* t : {in1, out0, out1}) {
    THOST_RETURN_IF_ERROR(CheckLike(*t, *in0));
  }
  return nullptr;
}

//
// ModelInstanceState: computes the outputs of each request of a batch.
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

enum class Op { kAdd, kSub };

static int32_t
Apply(Op op, int32_t a, int32_t b)
{
  // Computed unsigned so that overflow wraps instead of being undefined.
  const uint32_t ua = static_cast<uint32_t>(a);
  const uint32_t ub = static_cast<uint32_t>(b);
  return static_cast<int32_t>(op == Op::kAdd ? ua + ub : ua - ub);
}

static float
Apply(Op op, float a, float b)
{
  return op == Op::kAdd ? a + b : a - b;
}

// out[i] = a[i] op b[i] for 'count' elements of T.
template <typename T>
static void
Elementwise(Op op, const char* a, const char* b, char* out, size_t count)
{
  for (size_t i = 0; i < count; ++i) {
    StoreElement<T>(
        out, i, Apply(op, LoadElement<T>(a, i), LoadElement<T>(b, i)));
  }
}

// Reads both inputs and fills each requested output.
TRITONSERVER_Error*
ModelInstanceState::Compute(
    TRITONBACKEND_Request* request, TRITONBACKEND_Response* response) const
{
  const TRITONSERVER_DataType dt = model_state_->DataType();
  const char* policy = HostPolicyName().c_str();
  InputTensor in0, in1;
  THOST_RETURN_IF_ERROR(ReadInput(request, "INPUT0", &in0, policy));
  THOST_RETURN_IF_ERROR(ReadInput(request, "INPUT1", &in1, policy));
  THOST_RETURN_IF_ERROR(CheckInput(in0, dt));
  THOST_RETURN_IF_ERROR(CheckInput(in1, dt));
  THOST_RETURN_ERROR_IF_FALSE(
      in0.Shape() == in1.Shape(), TRITONSERVER_ERROR_INVALID_ARG,
      MessagePrefix() + "INPUT0 shape " + ShapeToString(in0.Shape()) +
          " and INPUT1 shape " + ShapeToString(in1.Shape()) +
          " differ; addsub needs them equal");

  std::vector<std::string> outputs;
  THOST_RETURN_IF_ERROR(RequestedOutputs(request, &outputs));
  // CheckInput made sure the count is not negative.
  const size_t count = static_cast<size_t>(ElementCount(in0.Shape()));
  for (const std::string& name : outputs) {
    THOST_RETURN_ERROR_IF_FALSE(
        name == "OUTPUT0" || name == "OUTPUT1", TRITONSERVER_ERROR_INVALID_ARG,
        MessagePrefix() + "unknown output '" + name + "' requested");
    const Op op = (name == "OUTPUT0") ? Op::kAdd : Op::kSub;
    char* out = nullptr;
    THOST_RETURN_IF_ERROR(
        AllocateOutput(response, name, dt, in0.Shape(), &out));
    if (dt == TRITONSERVER_TYPE_INT32) {
      Elementwise<int32_t>(op, in0.Data(), in1.Data(), out, count);
    } else {
      Elementwise<float>(op, in0.Data(), in1.Data(), out, count);
    }
  }
  return nullptr;
}

}}}  // namespace tritonhost::backend::addsub

//
// Entry points: TRITONBACKEND_ModelInitialize, ModelFinalize,
// ModelInstanceInitialize, ModelInstanceFinalize and ModelInstanceExecute,
// each creating, fetching or destroying a state and calling it.
//
THOST_BACKEND_ENTRY_POINTS(
    tritonhost::backend::addsub::ModelState,
    tritonhost::backend::addsub::ModelInstanceState);

//
// addsub computes on the CPU: it prefers KIND_CPU, so a model without
// instance_group gets one CPU instance on a server with GPUs too (Triton's
// placement of the default group follows the backend's preference).
//
extern "C" TRITONSERVER_Error*
TRITONBACKEND_GetBackendAttribute(
    TRITONBACKEND_Backend* /* backend */,
    TRITONBACKEND_BackendAttribute* backend_attributes)
{
  return TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup(
      backend_attributes, TRITONSERVER_INSTANCEGROUPKIND_CPU, 1, nullptr, 0);
}
