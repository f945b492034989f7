// repeat.cc: the "repeat" backend (libtriton_repeat.so), a decoupled model
// that answers one request with one response per element of its input.
//
// Model: max_batch_size 0; inputs IN (INT32, 1-D), DELAY (UINT32, IN's
// dims), WAIT (UINT32, [1]); outputs OUT (INT32, [1]), IDX (UINT32, [1]).
//
// For a request with n elements, a detached thread sends n responses: for
// element e it sleeps DELAY[e] ms, then sends OUT = IN[e], IDX = e (not
// final). Then it sends a flags-only FINAL. Execute itself sleeps WAIT ms
// before letting go of the request. Execute takes one request at a time.
//
// A request's work ends when both Execute (after WAIT) and its response
// thread (after its last response) are done with it: its request and batch
// statistics are reported there, and it is released there
// (async_request_batch.hpp), so its compute time covers WAIT and every
// DELAY. A request whose thread could not send a response has failed.
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "async_request_batch.hpp"
#include "backend_entry_points.hpp"
#include "backend_io.hpp"
#include "backend_model.hpp"
#include "backend_model_instance.hpp"
#include "config_checks.hpp"
#include "decoupled_responses.hpp"
#include "errors.hpp"
#include "formatting.hpp"
#include "host_objects.hpp"
#include "logging.hpp"
#include "model_config.hpp"
#include "state_handles.hpp"

namespace tritonhost { namespace backend { namespace repeat {

//
// ModelState: the model's configuration, checked once at load.
//
class ModelState : public BackendModel {
 public:
  static TRITONSERVER_Error* Create(
      TRITONBACKEND_Model* model, std::unique_ptr<ModelState>* out);

 private:
  explicit ModelState(TRITONBACKEND_Model* model) : BackendModel(model) {}
  TRITONSERVER_Error* ValidateConfig() const;
};

TRITONSERVER_Error*
ModelState::Create(TRITONBACKEND_Model* model, std::unique_ptr<ModelState>* out)
{
  std::unique_ptr<ModelState> state(new ModelState(model));
  // Name, version and configuration, logged; ValidateConfig checks the rest.
  THOST_RETURN_IF_ERROR(state->InitMinimal());
  THOST_RETURN_IF_ERROR(state->ValidateConfig());
  *out = std::move(state);
  return nullptr;
}

// The start of every message about the configuration.
static const std::string kConfigPrefix = "repeat backend: ";

// Checks one tensor's name and data type, in that order.
static TRITONSERVER_Error*
CheckTensor(
    const TensorConfig& t, const std::string& kind, size_t index,
    const std::string& name, const std::string& data_type)
{
  THOST_RETURN_ERROR_IF_FALSE(
      t.name == name, TRITONSERVER_ERROR_INVALID_ARG,
      kConfigPrefix + "expected " + kind + " " + std::to_string(index) +
          " to be named " + name + ", got '" + t.name + "'");
  return CheckTensorDataType(kConfigPrefix, t, data_type);
}

TRITONSERVER_Error*
ModelState::ValidateConfig() const
{
  THOST_RETURN_ERROR_IF_FALSE(
      MaxBatchSize() == 0, TRITONSERVER_ERROR_INVALID_ARG,
      kConfigPrefix + "expected max_batch_size 0 (no batching), got " +
          std::to_string(MaxBatchSize()));
  const auto& in = Config().Inputs();
  const auto& out = Config().Outputs();
  THOST_RETURN_IF_ERROR(
      CheckTensorCount(kConfigPrefix, in, "input", {"IN", "DELAY", "WAIT"}));
  THOST_RETURN_IF_ERROR(
      CheckTensorCount(kConfigPrefix, out, "output", {"OUT", "IDX"}));

  THOST_RETURN_IF_ERROR(CheckTensor(in[0], "input", 0, "IN", "TYPE_INT32"));
  THOST_RETURN_IF_ERROR(CheckTensor(in[1], "input", 1, "DELAY", "TYPE_UINT32"));
  THOST_RETURN_IF_ERROR(CheckTensor(in[2], "input", 2, "WAIT", "TYPE_UINT32"));
  THOST_RETURN_ERROR_IF_FALSE(
      in[0].dims.size() == 1, TRITONSERVER_ERROR_INVALID_ARG,
      kConfigPrefix + "expected IN to have 1 dimension, got " +
          ShapeToString(in[0].dims));
  THOST_RETURN_ERROR_IF_FALSE(
      in[1].dims == in[0].dims, TRITONSERVER_ERROR_INVALID_ARG,
      kConfigPrefix + "expected DELAY dims to equal IN dims " +
          ShapeToString(in[0].dims) + ", got " + ShapeToString(in[1].dims));
  THOST_RETURN_IF_ERROR(CheckTensorDims(kConfigPrefix, in[2], {1}));

  THOST_RETURN_IF_ERROR(CheckTensor(out[0], "output", 0, "OUT", "TYPE_INT32"));
  THOST_RETURN_IF_ERROR(CheckTensor(out[1], "output", 1, "IDX", "TYPE_UINT32"));
  THOST_RETURN_IF_ERROR(CheckTensorDims(kConfigPrefix, out[0], {1}));
  return CheckTensorDims(kConfigPrefix, out[1], {1});
}

//
// ModelInstanceState: one instance, and the response threads it started
// (decoupled_responses.hpp tells their life).
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
      : BackendModelInstance(instance, model_state)
  {
  }
  TRITONSERVER_Error* ProcessRequest(
      AsyncRequestBatch& batch, uint32_t i, uint32_t* wait_ms);
  void ResponseThread(
      ResponseFactoryPtr factory, RequestEnd end, std::vector<int32_t> in,
      std::vector<uint32_t> delay);

  // Last, so that its destructor waits for the threads before the members
  // they use go.
  ResponseThreads threads_;
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
  THOST_RETURN_IF_ERROR(state->InitMinimal());  // name, kind, device, logged
  *out = std::move(state);
  return nullptr;
}

TRITONSERVER_Error*
ModelInstanceState::Execute(
    TRITONBACKEND_Request** requests, uint32_t request_count)
{
  // An error here hands the requests back to the host, untouched.
  THOST_RETURN_ERROR_IF_FALSE(
      request_count <= 1, TRITONSERVER_ERROR_INVALID_ARG,
      "repeat backend does not support batched request execution");
  AsyncRequestBatch batch(*this, requests, request_count);
  uint32_t wait_ms = 0;
  for (uint32_t r = 0; r < batch.Size(); ++r) {
    batch.Fail(r, ProcessRequest(batch, r, &wait_ms));
  }
  THOST_LOG_MESSAGE(
      TRITONSERVER_LOG_VERBOSE, "instance " + Name() + ": waiting " +
                                    std::to_string(wait_ms) +
                                    " ms before letting go of the request");
  std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
  // The request ends (statistics, release) when its thread is done too.
  batch.Finish();
  return nullptr;
}

// Checks the request, copies IN and DELAY (the request may be released
// before the responses are done) and starts the response thread. Sets
// *wait_ms as soon as WAIT has been read.
TRITONSERVER_Error*
ModelInstanceState::ProcessRequest(
    AsyncRequestBatch& batch, uint32_t i, uint32_t* wait_ms)
{
  TRITONBACKEND_Request* request = batch.Request(i);
  uint32_t wait = 0;
  size_t wait_size = sizeof(wait);
  THOST_RETURN_IF_ERROR(ReadInputTensor(
      request, "WAIT", reinterpret_cast<char*>(&wait), &wait_size));
  THOST_RETURN_ERROR_IF_FALSE(
      wait_size == sizeof(wait), TRITONSERVER_ERROR_INVALID_ARG,
      "unexpected size for WAIT input: " + std::to_string(wait_size) +
          " bytes, expected 4");
  *wait_ms = wait;

  TRITONBACKEND_Input* in = nullptr;
  TRITONBACKEND_Input* delay = nullptr;
  const int64_t* in_shape = nullptr;
  const int64_t* delay_shape = nullptr;
  uint32_t in_dims = 0, delay_dims = 0;
  uint64_t in_bytes = 0, delay_bytes = 0;
  THOST_RETURN_IF_ERROR(TRITONBACKEND_RequestInput(request, "IN", &in));
  THOST_RETURN_IF_ERROR(TRITONBACKEND_RequestInput(request, "DELAY", &delay));
  THOST_RETURN_IF_ERROR(TRITONBACKEND_InputProperties(
      in, nullptr, nullptr, &in_shape, &in_dims, &in_bytes, nullptr));
  THOST_RETURN_IF_ERROR(TRITONBACKEND_InputProperties(
      delay, nullptr, nullptr, &delay_shape, &delay_dims, &delay_bytes,
      nullptr));
  THOST_RETURN_ERROR_IF_FALSE(
      std::vector<int64_t>(in_shape, in_shape + in_dims) ==
          std::vector<int64_t>(delay_shape, delay_shape + delay_dims),
      TRITONSERVER_ERROR_INVALID_ARG,
      "expected IN and DELAY shape to match, got " +
          ShapeToString(in_shape, in_dims) + " and " +
          ShapeToString(delay_shape, delay_dims));

  // One element per 4 bytes of IN; DELAY must hold as many.
  std::vector<int32_t> in_values(in_bytes / sizeof(int32_t));
  std::vector<uint32_t> delay_values(in_values.size());
  size_t in_size = in_values.size() * sizeof(int32_t);
  size_t delay_size = delay_values.size() * sizeof(uint32_t);
  THOST_RETURN_IF_ERROR(ReadInputTensor(
      request, "IN", reinterpret_cast<char*>(in_values.data()), &in_size));
  THOST_RETURN_IF_ERROR(ReadInputTensor(
      request, "DELAY", reinterpret_cast<char*>(delay_values.data()),
      &delay_size));
  THOST_RETURN_ERROR_IF_FALSE(
      delay_size == delay_values.size() * sizeof(uint32_t),
      TRITONSERVER_ERROR_INVALID_ARG,
      "expected DELAY to hold " + std::to_string(delay_values.size()) +
          " elements, got " + std::to_string(delay_size) + " bytes");

  return threads_.Start(
      request, batch.Hold(i),
      [this, in = std::move(in_values), delay = std::move(delay_values)](
          ResponseFactoryPtr factory, RequestEnd end) mutable {
        ResponseThread(
            std::move(factory), std::move(end), std::move(in),
            std::move(delay));
      });
}

// Builds and sends (not final) the response for element 'idx'. On error,
// the response (if created) is returned in *response so the caller can
// send it as the FINAL error response.
static TRITONSERVER_Error*
SendElement(
    TRITONBACKEND_ResponseFactory* factory, int32_t value, uint32_t idx,
    TRITONBACKEND_Response** response)
{
  const int64_t shape[1] = {1};
  TRITONBACKEND_Output* out = nullptr;
  TRITONBACKEND_Output* out_idx = nullptr;
  void* out_buffer = nullptr;
  void* idx_buffer = nullptr;
  TRITONSERVER_MemoryType out_type = TRITONSERVER_MEMORY_CPU;
  TRITONSERVER_MemoryType idx_type = TRITONSERVER_MEMORY_CPU;
  int64_t out_type_id = 0, idx_type_id = 0;

  THOST_RETURN_IF_ERROR(
      TRITONBACKEND_ResponseNewFromFactory(response, factory));
  THOST_RETURN_IF_ERROR(TRITONBACKEND_ResponseOutput(
      *response, &out, "OUT", TRITONSERVER_TYPE_INT32, shape, 1));
  THOST_RETURN_IF_ERROR(TRITONBACKEND_ResponseOutput(
      *response, &out_idx, "IDX", TRITONSERVER_TYPE_UINT32, shape, 1));
  THOST_RETURN_IF_ERROR(TRITONBACKEND_OutputBuffer(
      out, &out_buffer, sizeof(int32_t), &out_type, &out_type_id));
  THOST_RETURN_IF_ERROR(TRITONBACKEND_OutputBuffer(
      out_idx, &idx_buffer, sizeof(uint32_t), &idx_type, &idx_type_id));
  THOST_RETURN_ERROR_IF_FALSE(
      out_type != TRITONSERVER_MEMORY_GPU &&
          idx_type != TRITONSERVER_MEMORY_GPU,
      TRITONSERVER_ERROR_INTERNAL,
      "failed to create output buffers in CPU memory");
  std::memcpy(out_buffer, &value, sizeof(value));
  std::memcpy(idx_buffer, &idx, sizeof(idx));

  TRITONBACKEND_Response* sending = *response;
  *response = nullptr;  // the host owns it from here, even on failure
  return TRITONBACKEND_ResponseSend(sending, 0 /* flags */, nullptr);
}

void
ModelInstanceState::ResponseThread(
    ResponseFactoryPtr factory, RequestEnd end, std::vector<int32_t> in,
    std::vector<uint32_t> delay)
{
  const size_t n = in.size();
  for (size_t e = 0; e < n; ++e) {
    THOST_LOG_MESSAGE(
        TRITONSERVER_LOG_VERBOSE,
        "waiting " + std::to_string(delay[e]) + " ms, then sending response " +
            std::to_string(e + 1) + " of " + std::to_string(n));
    std::this_thread::sleep_for(std::chrono::milliseconds(delay[e]));

    TRITONBACKEND_Response* response = nullptr;
    TRITONSERVER_Error* err =
        SendElement(factory.get(), in[e], static_cast<uint32_t>(e), &response);
    if (err != nullptr) {
      end.Done(false);
      // On the half-built response if there is one, else on a new one.
      return SendFinalError(factory.get(), response, err);
    }
  }
  if (n == 0) {
    THOST_LOG_MESSAGE(
        TRITONSERVER_LOG_VERBOSE, "IN size is zero, no responses sent");
  }
  end.Done();  // this thread's part of the request's work ends here
  SendFinalFlags(factory.get());
}

}}}  // namespace tritonhost::backend::repeat

//
// Entry points: TRITONBACKEND_ModelInitialize, ModelFinalize,
// ModelInstanceInitialize, ModelInstanceFinalize and ModelInstanceExecute,
// each creating, fetching or destroying a state and calling it.
//
THOST_BACKEND_ENTRY_POINTS(
    tritonhost::backend::repeat::ModelState,
    tritonhost::backend::repeat::ModelInstanceState);
