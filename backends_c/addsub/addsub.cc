// addsub.cc: the "addsub" backend (libtriton_addsub.so), which serves
// Triton's example models "simple", "simple_int8" and "simple_string":
// elementwise
//   OUTPUT0 = INPUT0 + INPUT1    OUTPUT1 = INPUT0 - INPUT1
//
// Model: inputs INPUT0 and INPUT1 and outputs OUTPUT0 and OUTPUT1, all of
// one data type and the same dims; checked at load, where a mismatch is an
// INVALID_ARG naming the configuration field. The data types:
//   TYPE_INT8, TYPE_INT32  integer arithmetic, wrapping on overflow;
//   TYPE_FP32              float arithmetic;
//   TYPE_STRING            BYTES elements (a 4-byte little-endian length,
//                          then the bytes), each the decimal text of an
//                          int64, as Triton's simple_string model takes
//                          them; the outputs are the decimal text of the
//                          int64 sum and difference (wrapping). An element
//                          that is not a decimal int64 gets its request an
//                          INVALID_ARG response naming the input and the
//                          element.
// Any max_batch_size: with batching, the requests of a batch come in one
// Execute and each gets the rows it sent. Not decoupled: one response per
// request, holding only the outputs it asked for. A request whose INPUT0
// and INPUT1 shapes differ (possible with -1 dims) gets an INVALID_ARG
// response. Statistics are reported per request and per batch.
//
// Built on the C++ backend layer in backends_c/layer: BackendModel,
// BackendModelInstance, backend_io.hpp and RequestBatch.
#include <charconv>
#include <cstdint>
#include <memory>
#include <string>
#include <system_error>
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
  if (data_type_ != TRITONSERVER_TYPE_INT8 &&
      data_type_ != TRITONSERVER_TYPE_INT32 &&
      data_type_ != TRITONSERVER_TYPE_FP32 &&
      data_type_ != TRITONSERVER_TYPE_BYTES) {
    return ConfigError(
        in0->config_path + ".data_type",
        "(INPUT0) is " + in0->config_data_type +
            "; addsub supports TYPE_INT8, TYPE_INT32, TYPE_FP32 and "
            "TYPE_STRING");
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
  TRITONSERVER_Error* ParseDecimals(
      const InputTensor& input, size_t count,
      std::vector<int64_t>* values) const;

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

static int8_t
Apply(Op op, int8_t a, int8_t b)
{
  const uint8_t ua = static_cast<uint8_t>(a);
  const uint8_t ub = static_cast<uint8_t>(b);
  return static_cast<int8_t>(
      static_cast<uint8_t>(op == Op::kAdd ? ua + ub : ua - ub));
}

static int64_t
Apply(Op op, int64_t a, int64_t b)
{
  const uint64_t ua = static_cast<uint64_t>(a);
  const uint64_t ub = static_cast<uint64_t>(b);
  return static_cast<int64_t>(op == Op::kAdd ? ua + ub : ua - ub);
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

// Element 'text' of a BYTES input for a message: quoted, at most 32 bytes,
// anything but printable ASCII as \xNN.
static std::string
QuoteElement(const char* text, size_t size)
{
  static const char kHex[] = "0123456789abcdef";
  const size_t shown = size < 32 ? size : 32;
  std::string s = "\"";
  for (size_t i = 0; i < shown; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      s += '\\';
      s += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      s += static_cast<char>(c);
    } else {
      s += "\\x";
      s += kHex[c >> 4];
      s += kHex[c & 0xf];
    }
  }
  s += "\"";
  if (shown < size) {
    s += " (" + std::to_string(size) + " bytes)";
  }
  return s;
}

// Reads the 'count' BYTES elements of 'input', each the decimal text of an
// int64 (an optional '-', then digits: what Triton's example clients send,
// str() of a Python int), into *values. The elements must fill the tensor's
// bytes exactly.
TRITONSERVER_Error*
ModelInstanceState::ParseDecimals(
    const InputTensor& input, size_t count, std::vector<int64_t>* values) const
{
  const std::string where = MessagePrefix() + "input '" + input.Name() + "' ";
  const char* p = input.Data();
  uint64_t left = input.ByteSize();
  values->resize(count);
  for (size_t i = 0; i < count; ++i) {
    THOST_RETURN_ERROR_IF_FALSE(
        left >= 4, TRITONSERVER_ERROR_INVALID_ARG,
        where + "ends before the length of element " + std::to_string(i) +
            " (" + std::to_string(left) + " bytes left, " +
            std::to_string(count) + " elements expected)");
    // The length is little-endian whatever the host's byte order.
    const unsigned char* u = reinterpret_cast<const unsigned char*>(p);
    const uint32_t size = static_cast<uint32_t>(u[0]) |
                          (static_cast<uint32_t>(u[1]) << 8) |
                          (static_cast<uint32_t>(u[2]) << 16) |
                          (static_cast<uint32_t>(u[3]) << 24);
    p += 4;
    left -= 4;
    THOST_RETURN_ERROR_IF_FALSE(
        size <= left, TRITONSERVER_ERROR_INVALID_ARG,
        where + "element " + std::to_string(i) + " has length " +
            std::to_string(size) + " but " + std::to_string(left) +
            " bytes are left");
    int64_t value = 0;
    const std::from_chars_result r = std::from_chars(p, p + size, value);
    THOST_RETURN_ERROR_IF_FALSE(
        size > 0 && r.ec == std::errc() && r.ptr == p + size,
        TRITONSERVER_ERROR_INVALID_ARG,
        where + "element " + std::to_string(i) + " " + QuoteElement(p, size) +
            " is not a decimal integer in the range of int64; addsub reads "
            "each TYPE_STRING element as one");
    (*values)[i] = value;
    p += size;
    left -= size;
  }
  THOST_RETURN_ERROR_IF_FALSE(
      left == 0, TRITONSERVER_ERROR_INVALID_ARG,
      where + "has " + std::to_string(left) + " bytes after its " +
          std::to_string(count) + " elements");
  return nullptr;
}

// The decimal text of a[i] op b[i] for every element, as one BYTES tensor
// (a 4-byte little-endian length before each).
static std::string
DecimalElements(
    Op op, const std::vector<int64_t>& a, const std::vector<int64_t>& b)
{
  std::string out;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string text = std::to_string(Apply(op, a[i], b[i]));
    const uint32_t size = static_cast<uint32_t>(text.size());
    for (int shift = 0; shift < 32; shift += 8) {
      out += static_cast<char>((size >> shift) & 0xff);
    }
    out += text;
  }
  return out;
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
  const int64_t elements = ElementCount(in0.Shape());
  THOST_RETURN_ERROR_IF_FALSE(
      elements >= 0, TRITONSERVER_ERROR_INVALID_ARG,
      MessagePrefix() + "INPUT0 shape " + ShapeToString(in0.Shape()) +
          " has a negative dimension");
  const size_t count = static_cast<size_t>(elements);

  std::vector<std::string> outputs;
  THOST_RETURN_IF_ERROR(RequestedOutputs(request, &outputs));
  for (const std::string& name : outputs) {
    THOST_RETURN_ERROR_IF_FALSE(
        name == "OUTPUT0" || name == "OUTPUT1", TRITONSERVER_ERROR_INVALID_ARG,
        MessagePrefix() + "unknown output '" + name + "' requested");
  }

  // BYTES: parsed once for both outputs, whose sizes follow from the text.
  std::vector<int64_t> a, b;
  if (dt == TRITONSERVER_TYPE_BYTES) {
    THOST_RETURN_IF_ERROR(ParseDecimals(in0, count, &a));
    THOST_RETURN_IF_ERROR(ParseDecimals(in1, count, &b));
  }
  for (const std::string& name : outputs) {
    const Op op = (name == "OUTPUT0") ? Op::kAdd : Op::kSub;
    char* out = nullptr;
    if (dt == TRITONSERVER_TYPE_BYTES) {
      const std::string text = DecimalElements(op, a, b);
      THOST_RETURN_IF_ERROR(
          AllocateOutput(response, name, dt, in0.Shape(), text.size(), &out));
      text.copy(out, text.size());
      continue;
    }
    THOST_RETURN_IF_ERROR(
        AllocateOutput(response, name, dt, in0.Shape(), &out));
    switch (dt) {
      case TRITONSERVER_TYPE_INT8:
        Elementwise<int8_t>(op, in0.Data(), in1.Data(), out, count);
        break;
      case TRITONSERVER_TYPE_INT32:
        Elementwise<int32_t>(op, in0.Data(), in1.Data(), out, count);
        break;
      default:  // TRITONSERVER_TYPE_FP32, as ValidateConfig allows no other
        Elementwise<float>(op, in0.Data(), in1.Data(), out, count);
        break;
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
