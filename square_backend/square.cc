// square.cc: the "square" backend (libtriton_square.so), a decoupled model
// that answers a request whose IN holds k with k responses, each OUT = k.
//
// Model: input IN (INT32, [1]) and output OUT (INT32, [1]); max_batch_size
// is not checked, but every request must be batch-1 (IN of shape [1] or
// [1,1]); OUT gets as many dimensions as IN, each 1.
//
// Optional parameters (string_value holding decimal digits; anything else
// is logged and ignored), all 0 by default:
//   CUSTOM_INFER_DELAY_NS   sleep before each response
//   CUSTOM_OUTPUT_DELAY_NS  sleep after filling each response's output
//   CUSTOM_CANCEL_DELAY_NS  sleep instead of the infer delay once cancelled
//   CUSTOM_FAIL_COUNT       the last FAIL_COUNT responses before the empty
//                           ones carry UNKNOWN "simulated failure"
//   CUSTOM_EMPTY_COUNT      the last EMPTY_COUNT iterations send nothing
// Each iteration reports response statistics. If the request is cancelled,
// that iteration sends nothing, reports a CANCELLED error in its statistics
// and ends the loop. Every request ends with a flags-only FINAL.
//
// Request and batch statistics (what /v2/models/<m>/stats counts as
// inferences and executions, with queue and compute times) are reported
// where a request's work ends: in its response thread, after its last
// response and before its FINAL, not when Execute returns, which is before
// the first response (async_request_batch.hpp). The request is released
// there too. A request succeeds unless one of its responses failed, it was
// cancelled or its thread could not send.
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
#include "clock.hpp"
#include "config_checks.hpp"
#include "decoupled_responses.hpp"
#include "errors.hpp"
#include "formatting.hpp"
#include "host_objects.hpp"
#include "logging.hpp"
#include "model_config.hpp"
#include "state_handles.hpp"

namespace tritonhost { namespace backend { namespace square {

// The parameters of one model; copied into each response thread.
struct Parameters {
  uint64_t infer_delay_ns = 0;
  uint64_t output_delay_ns = 0;
  uint64_t cancel_delay_ns = 0;
  uint64_t fail_count = 0;
  uint64_t empty_count = 0;
};

enum class Result { kSuccess, kFail, kEmpty };

// Iteration e of n: success first, then FAIL_COUNT failures, then
// EMPTY_COUNT empty iterations.
static Result
ResultFor(const Parameters& p, uint64_t e, uint64_t n)
{
  if (e + p.fail_count + p.empty_count < n) {
    return Result::kSuccess;
  }
  return (e + p.empty_count < n) ? Result::kFail : Result::kEmpty;
}

static void
SleepNs(uint64_t ns)
{
  if (ns > 0) {
    std::this_thread::sleep_for(std::chrono::nanoseconds(ns));
  }
}

//
// ModelState: the model's configuration, checked once at load, and its
// parameters.
//
class ModelState : public BackendModel {
 public:
  static TRITONSERVER_Error* Create(
      TRITONBACKEND_Model* model, std::unique_ptr<ModelState>* out);

  const Parameters& Params() const { return params_; }

 private:
  explicit ModelState(TRITONBACKEND_Model* model) : BackendModel(model) {}
  TRITONSERVER_Error* ValidateConfig() const;
  void ReadParameters();

  Parameters params_;
};

TRITONSERVER_Error*
ModelState::Create(TRITONBACKEND_Model* model, std::unique_ptr<ModelState>* out)
{
  std::unique_ptr<ModelState> state(new ModelState(model));
  // Name, version and configuration, logged; ValidateConfig checks the rest.
  THOST_RETURN_IF_ERROR(state->InitMinimal());
  THOST_RETURN_IF_ERROR(state->ValidateConfig());
  state->ReadParameters();
  *out = std::move(state);
  return nullptr;
}

// The start of every message about the configuration.
static const std::string kConfigPrefix = "square backend: ";

// Checks one tensor's name, dims ([1]) and data type (TYPE_INT32), in
// that order.
static TRITONSERVER_Error*
CheckTensor(
    const TensorConfig& t, const std::string& kind, const std::string& name)
{
  THOST_RETURN_ERROR_IF_FALSE(
      t.name == name, TRITONSERVER_ERROR_INVALID_ARG,
      kConfigPrefix + "expected " + kind + " tensor name to be " + name +
          ", got '" + t.name + "'");
  THOST_RETURN_IF_ERROR(CheckTensorDims(kConfigPrefix, t, {1}));
  return CheckTensorDataType(kConfigPrefix, t, "TYPE_INT32");
}

TRITONSERVER_Error*
ModelState::ValidateConfig() const
{
  const auto& in = Config().Inputs();
  const auto& out = Config().Outputs();
  THOST_RETURN_IF_ERROR(CheckTensorCount(kConfigPrefix, in, "input", {"IN"}));
  THOST_RETURN_IF_ERROR(
      CheckTensorCount(kConfigPrefix, out, "output", {"OUT"}));
  THOST_RETURN_IF_ERROR(CheckTensor(in[0], "input", "IN"));
  return CheckTensor(out[0], "output", "OUT");
}

// Parses a non-empty string of decimal digits that fits uint64_t.
static bool
ParseDecimal(const std::string& s, uint64_t* out)
{
  uint64_t v = 0;
  if (s.empty()) {
    return false;
  }
  for (char c : s) {
    if (c < '0' || c > '9' || v > (UINT64_MAX - (c - '0')) / 10) {
      return false;
    }
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = v;
  return true;
}

void
ModelState::ReadParameters()
{
  const std::pair<const char*, uint64_t*> known[] = {
      {"CUSTOM_INFER_DELAY_NS", &params_.infer_delay_ns},
      {"CUSTOM_OUTPUT_DELAY_NS", &params_.output_delay_ns},
      {"CUSTOM_CANCEL_DELAY_NS", &params_.cancel_delay_ns},
      {"CUSTOM_FAIL_COUNT", &params_.fail_count},
      {"CUSTOM_EMPTY_COUNT", &params_.empty_count},
  };
  const auto& given = Config().Parameters();
  for (const auto& [key, value] : known) {
    auto it = given.find(key);
    if (it != given.end() && !ParseDecimal(it->second, value)) {
      THOST_LOG_MESSAGE(
          TRITONSERVER_LOG_WARN, kConfigPrefix + "ignoring parameter " + key +
                                     " = '" + it->second +
                                     "': not a decimal number");
    }
  }
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
      : BackendModelInstance(instance, model_state),
        params_(model_state->Params())
  {
  }
  TRITONSERVER_Error* ProcessRequest(AsyncRequestBatch& batch, uint32_t i);
  void ResponseThread(
      ResponseFactoryPtr factory, RequestEnd end, uint32_t n,
      uint32_t dims_count);
  TRITONSERVER_Error* ReportResponseStatistics(
      TRITONBACKEND_ResponseFactory* factory, uint64_t response_start_ns,
      uint64_t compute_output_start_ns, uint64_t response_end_ns,
      TRITONSERVER_Error* error) const;

  const Parameters params_;  // the model's, copied
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
  AsyncRequestBatch batch(*this, requests, request_count);
  for (uint32_t r = 0; r < batch.Size(); ++r) {
    batch.Fail(r, ProcessRequest(batch, r));
  }
  // Each response thread holds its request until its work is done; the
  // batch lets go of them here.
  batch.Finish();
  return nullptr;
}

TRITONSERVER_Error*
ModelInstanceState::ProcessRequest(AsyncRequestBatch& batch, uint32_t i)
{
  TRITONBACKEND_Request* request = batch.Request(i);
  TRITONBACKEND_Input* in = nullptr;
  const int64_t* shape = nullptr;
  uint32_t dims_count = 0;
  uint64_t byte_size = 0;
  THOST_RETURN_IF_ERROR(TRITONBACKEND_RequestInput(request, "IN", &in));
  THOST_RETURN_IF_ERROR(TRITONBACKEND_InputProperties(
      in, nullptr, nullptr, &shape, &dims_count, &byte_size, nullptr));
  THOST_RETURN_ERROR_IF_FALSE(
      (dims_count == 1 || dims_count == 2) && shape[0] == 1 &&
          shape[dims_count - 1] == 1,
      TRITONSERVER_ERROR_INVALID_ARG,
      "unexpected shape for IN input: " + ShapeToString(shape, dims_count) +
          ", expected [1] or [1,1]");

  int32_t value = 0;
  size_t size = sizeof(value);
  THOST_RETURN_IF_ERROR(
      ReadInputTensor(request, "IN", reinterpret_cast<char*>(&value), &size));
  THOST_RETURN_ERROR_IF_FALSE(
      size == sizeof(value), TRITONSERVER_ERROR_INVALID_ARG,
      "unexpected size for IN input: " + std::to_string(size) +
          " bytes, expected 4");
  THOST_RETURN_ERROR_IF_FALSE(
      value >= 0, TRITONSERVER_ERROR_INVALID_ARG,
      "IN must not be negative, got " + std::to_string(value));

  const uint32_t n = static_cast<uint32_t>(value);
  return threads_.Start(
      request, batch.Hold(i),
      [this, n, dims_count](ResponseFactoryPtr factory, RequestEnd end) {
        ResponseThread(std::move(factory), std::move(end), n, dims_count);
      });
}

// Creates a response with OUT = value, of shape (every dimension 1). On error
// the half-built response, if any, stays in *response for the caller to end.
static TRITONSERVER_Error*
BuildResponse(
    TRITONBACKEND_ResponseFactory* factory, int32_t value,
    const std::vector<int64_t>& shape, TRITONBACKEND_Response** response)
{
  TRITONBACKEND_Output* out = nullptr;
  void* buffer = nullptr;
  TRITONSERVER_MemoryType memory_type = TRITONSERVER_MEMORY_CPU;
  int64_t memory_type_id = 0;
  THOST_RETURN_IF_ERROR(
      TRITONBACKEND_ResponseNewFromFactory(response, factory));
  THOST_RETURN_IF_ERROR(TRITONBACKEND_ResponseOutput(
      *response, &out, "OUT", TRITONSERVER_TYPE_INT32, shape.data(),
      static_cast<uint32_t>(shape.size())));
  THOST_RETURN_IF_ERROR(TRITONBACKEND_OutputBuffer(
      out, &buffer, sizeof(int32_t), &memory_type, &memory_type_id));
  THOST_RETURN_ERROR_IF_FALSE(
      memory_type != TRITONSERVER_MEMORY_GPU, TRITONSERVER_ERROR_INTERNAL,
      "failed to create output buffer in CPU memory");
  std::memcpy(buffer, &value, sizeof(value));
  return nullptr;
}

void
ModelInstanceState::ResponseThread(
    ResponseFactoryPtr factory, RequestEnd end, uint32_t n, uint32_t dims_count)
{
  const std::vector<int64_t> shape(dims_count, 1);  // every response's
  bool failed = false;  // a response failed or the request was cancelled
  // One clock read per response unless a delay is configured: a response
  // starts when the one before it ended (its send included), and computes
  // its output from its start when no delay comes between.
  uint64_t response_start_ns = NowNs();
  for (uint32_t e = 0; e < n; ++e) {
    bool cancelled = false;
    TRITONSERVER_Error* err =
        TRITONBACKEND_ResponseFactoryIsCancelled(factory.get(), &cancelled);
    if (err != nullptr) {
      end.Done(false);
      return SendFinalError(factory.get(), nullptr, err);
    }
    const uint64_t delay_ns =
        cancelled ? params_.cancel_delay_ns : params_.infer_delay_ns;
    SleepNs(delay_ns);

    const Result result = ResultFor(params_, e, n);
    uint64_t compute_output_start_ns = 0;
    TRITONBACKEND_Response* response = nullptr;
    if (!cancelled && result != Result::kEmpty) {
      compute_output_start_ns = delay_ns > 0 ? NowNs() : response_start_ns;
      err = BuildResponse(
          factory.get(), static_cast<int32_t>(n), shape, &response);
      if (err != nullptr) {
        end.Done(false);
        return SendFinalError(factory.get(), response, err);
      }
      SleepNs(params_.output_delay_ns);
    }

    ErrorPtr error;
    failed = failed || cancelled || result == Result::kFail;
    if (cancelled) {
      error.reset(MakeError(TRITONSERVER_ERROR_CANCELLED, "cancelled"));
    } else if (result == Result::kFail) {
      error.reset(MakeError(TRITONSERVER_ERROR_UNKNOWN, "simulated failure"));
    }
    if (response != nullptr) {
      THOST_LOG_IF_ERROR(
          TRITONBACKEND_ResponseSend(response, 0 /* flags */, error.get()),
          "failed to send response");
    }
    const uint64_t response_end_ns = NowNs();
    err = ReportResponseStatistics(
        factory.get(), response_start_ns, compute_output_start_ns,
        response_end_ns, error.get());
    response_start_ns = response_end_ns;
    if (err != nullptr) {
      end.Done(false);
      return SendFinalError(factory.get(), nullptr, err);
    }
    THOST_LOG_MESSAGE(
        TRITONSERVER_LOG_VERBOSE, "finished response " + std::to_string(e + 1) +
                                      " of " + std::to_string(n) +
                                      (cancelled ? " (cancelled)" : ""));
    if (cancelled) {
      break;
    }
  }
  if (n == 0) {
    THOST_LOG_MESSAGE(
        TRITONSERVER_LOG_VERBOSE, "IN is zero, no responses sent");
  }
  end.Done(!failed);  // the request's work ends here: statistics, release
  SendFinalFlags(factory.get());
}

TRITONSERVER_Error*
ModelInstanceState::ReportResponseStatistics(
    TRITONBACKEND_ResponseFactory* factory, uint64_t response_start_ns,
    uint64_t compute_output_start_ns, uint64_t response_end_ns,
    TRITONSERVER_Error* error) const
{
  TRITONBACKEND_ModelInstanceResponseStatistics* raw = nullptr;
  THOST_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceResponseStatisticsNew(&raw));
  ResponseStatisticsPtr stats(raw);
  THOST_RETURN_IF_ERROR(
      TRITONBACKEND_ModelInstanceResponseStatisticsSetModelInstance(
          stats.get(), TritonModelInstance()));
  THOST_RETURN_IF_ERROR(
      TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseFactory(
          stats.get(), factory));
  THOST_RETURN_IF_ERROR(
      TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseStart(
          stats.get(), response_start_ns));
  THOST_RETURN_IF_ERROR(
      TRITONBACKEND_ModelInstanceResponseStatisticsSetComputeOutputStart(
          stats.get(), compute_output_start_ns));
  THOST_RETURN_IF_ERROR(
      TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseEnd(
          stats.get(), response_end_ns));
  THOST_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceResponseStatisticsSetError(
      stats.get(), error));
  return TRITONBACKEND_ModelInstanceReportResponseStatistics(stats.get());
}

}}}  // namespace tritonhost::backend::square

//
// Entry points: TRITONBACKEND_ModelInitialize, ModelFinalize,
// ModelInstanceInitialize, ModelInstanceFinalize and ModelInstanceExecute,
// each creating, fetching or destroying a state and calling it.
//
THOST_BACKEND_ENTRY_POINTS(
    tritonhost::backend::square::ModelState,
    tritonhost::backend::square::ModelInstanceState);
