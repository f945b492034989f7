// bls.cc: the "bls" backend (libtriton_bls.so), which answers each request
// by running another model of the server on it, through the in-process
// server API of tritonserver.h (Triton's business-logic-scripting pattern).
//
// Model configuration:
//   parameters { key: "bls_model" value: { string_value: "<callee>" } }
//     the model each request is passed to (its newest ready version), with
//     every input of the request and the outputs it asks for. Required.
//   parameters { key: "bls_timeout_ms" value: { string_value: "<ms>" } }
//     how long Execute waits for the callee when the model is not
//     decoupled (default 30000); then the request gets an UNAVAILABLE error
//     and the callee's request is cancelled.
//   The inputs must be inputs of the callee, of the same data type, and the
//   outputs should be outputs of the callee.
//
// A model that is not decoupled calls synchronously: Execute starts a call
// per request of its batch, then waits for each callee's one response (one
// deadline for the batch) and answers with a copy of it. A decoupled model
// forwards: Execute starts the calls and returns, and each response of the
// callee (square_int32, say, which sends k) is sent on as a response of the
// request, from the thread the server delivers it on, with its flags; a
// flags-only final stays one. Before the first call an instance checks the
// callee with the model queries (TRITONSERVER_ServerModelIsReady,
// ServerModelConfig, ServerModelMetadata): ready, decoupled only if this model
// is, and taking this model's inputs.
//
// Statistics: a request's work ends when its answer is sent (waiting) or
// when the callee hands its request back (forwarding: after its last
// response, which comes on a thread of the server after Execute returned);
// the layer's AsyncRequestBatch reports the request and the execution
// there, and releases the request, never before the callee is done with its
// input buffers.
//
// Built on the C++ backend layer (backends_c/layer); bls_call.hpp has the
// call itself.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "async_request_batch.hpp"
#include "backend_entry_points.hpp"
#include "backend_model.hpp"
#include "backend_model_instance.hpp"
#include "bls_call.hpp"
#include "callee_check.hpp"
#include "cpu_outputs.hpp"
#include "errors.hpp"
#include "logging.hpp"
#include "state_handles.hpp"

namespace tritonhost { namespace backend { namespace bls {

//
// ModelState: the callee, the deadline, the server and the allocator.
//
class ModelState : public BackendModel {
 public:
  static TRITONSERVER_Error* Create(
      TRITONBACKEND_Model* model, std::unique_ptr<ModelState>* out);

  TRITONSERVER_Server* Server() const { return server_; }
  const std::string& Callee() const { return callee_; }
  std::chrono::milliseconds Timeout() const { return timeout_; }
  TRITONSERVER_ResponseAllocator* Allocator() const
  {
    return allocator_->Handle();
  }

  // Checks the callee once it passes (CheckCallee, callee_check.hpp); until
  // then every call checks again, as the callee may still be loading.
  TRITONSERVER_Error* EnsureCalleeChecked();

 private:
  explicit ModelState(TRITONBACKEND_Model* model) : BackendModel(model) {}
  TRITONSERVER_Error* ReadParameters();

  TRITONSERVER_Server* server_ = nullptr;
  std::string callee_;
  std::chrono::milliseconds timeout_{30000};
  std::unique_ptr<CpuAllocator> allocator_;
  std::atomic<bool> callee_checked_{false};
};

TRITONSERVER_Error*
ModelState::Create(TRITONBACKEND_Model* model, std::unique_ptr<ModelState>* out)
{
  std::unique_ptr<ModelState> state(new ModelState(model));
  THOST_RETURN_IF_ERROR(state->Init());
  THOST_RETURN_IF_ERROR(state->ReadParameters());
  THOST_RETURN_IF_ERROR(TRITONBACKEND_ModelServer(model, &state->server_));
  THOST_RETURN_IF_ERROR(CpuAllocator::Create(&state->allocator_));
  *out = std::move(state);
  return nullptr;
}

TRITONSERVER_Error*
ModelState::ReadParameters()
{
  const auto& params = Config().Parameters();
  auto it = params.find("bls_model");
  if (it == params.end() || it->second.empty()) {
    return ConfigError(
        "parameters.bls_model", "is missing; name the model to call");
  }
  if (it->second == Name()) {
    return ConfigError(
        "parameters.bls_model", "names this model itself; name another one");
  }
  callee_ = it->second;
  it = params.find("bls_timeout_ms");
  if (it != params.end()) {
    char* end = nullptr;
    const long long ms = std::strtoll(it->second.c_str(), &end, 10);
    if (end == it->second.c_str() || *end != '\0' || ms <= 0) {
      return ConfigError(
          "parameters.bls_timeout_ms",
          "is '" + it->second + "'; want a positive number of milliseconds");
    }
    timeout_ = std::chrono::milliseconds(ms);
  }
  return nullptr;
}

TRITONSERVER_Error*
ModelState::EnsureCalleeChecked()
{
  if (callee_checked_.load(std::memory_order_acquire)) {
    return nullptr;
  }
  THOST_RETURN_IF_ERROR(CheckCallee(*this, server_, callee_));
  callee_checked_.store(true, std::memory_order_release);
  return nullptr;
}

//
// ModelInstanceState: starts a call per request; waits for it unless the
// model is decoupled.
//
class ModelInstanceState : public BackendModelInstance {
 public:
  static TRITONSERVER_Error* Create(
      TRITONBACKEND_ModelInstance* instance,
      std::unique_ptr<ModelInstanceState>* out);
  // Waits until the callbacks of every call have returned.
  ~ModelInstanceState() override { calls_.WaitIdle(); }

  TRITONSERVER_Error* Execute(
      TRITONBACKEND_Request** requests, uint32_t request_count);

 private:
  ModelInstanceState(
      TRITONBACKEND_ModelInstance* instance, ModelState* model_state)
      : BackendModelInstance(instance, model_state), model_state_(model_state)
  {
  }
  void Finish(
      AsyncRequestBatch& batch, uint32_t i, Call* call,
      std::chrono::steady_clock::time_point deadline);
  void Answer(
      AsyncRequestBatch& batch, uint32_t i,
      TRITONSERVER_InferenceResponse* from, TRITONSERVER_Error* err);

  ModelState* model_state_;
  CallTarget target_;
  CallCounter calls_;  // the destructor waits for it
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
  state->target_.server = model_state->Server();
  state->target_.model = model_state->Callee();
  state->target_.allocator = model_state->Allocator();
  state->target_.message_prefix = state->MessagePrefix();
  state->target_.counter = &state->calls_;
  *out = std::move(state);
  return nullptr;
}

TRITONSERVER_Error*
ModelInstanceState::Execute(
    TRITONBACKEND_Request** requests, uint32_t request_count)
{
  AsyncRequestBatch batch(*this, requests, request_count);
  const Call::Mode mode =
      model_state_->IsDecoupled() ? Call::Mode::kForward : Call::Mode::kWait;
  // Every call of the batch starts before any is waited for, so the callee
  // works on all of them at once.
  std::vector<std::pair<uint32_t, std::shared_ptr<Call>>> calls;
  for (uint32_t i = 0; i < batch.Size(); ++i) {
    std::shared_ptr<Call> call;
    TRITONSERVER_Error* err = model_state_->EnsureCalleeChecked();
    if (err == nullptr) {
      err = Call::Start(target_, batch.Request(i), mode, batch.Hold(i), &call);
    }
    if (err != nullptr) {
      batch.Fail(i, err);  // answered by Finish
    } else {
      calls.emplace_back(i, std::move(call));
    }
  }
  // kForward: the calls answer their requests.
  if (mode == Call::Mode::kWait) {
    const auto deadline =
        std::chrono::steady_clock::now() + model_state_->Timeout();
    for (auto& [i, call] : calls) {
      Finish(batch, i, call.get(), deadline);
    }
  }
  batch.Finish();
  return nullptr;  // every request is answered, or will be by its call
}

// Waits for 'call' until 'deadline' and answers request i of 'batch'.
void
ModelInstanceState::Finish(
    AsyncRequestBatch& batch, uint32_t i, Call* call,
    std::chrono::steady_clock::time_point deadline)
{
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  TRITONSERVER_InferenceResponse* response = nullptr;
  TRITONSERVER_Error* err = nullptr;
  if (!call->Wait(
          std::max(left, std::chrono::milliseconds(0)), model_state_->Timeout(),
          &response, &err)) {
    batch.Done(i, false);  // answered by Wait; the call lets go last
    return;
  }
  if (err == nullptr && response == nullptr) {
    err = MakeError(
        TRITONSERVER_ERROR_INTERNAL, MessagePrefix() + "model '" +
                                         model_state_->Callee() +
                                         "' sent no response");
  }
  Answer(batch, i, response, err);
}

// Answers request i of 'batch' with a copy of 'from', or with 'err' (taken
// over). 'from' is deleted. The request ends (statistics, release) before
// the answer goes, so a client holding it finds it counted.
void
ModelInstanceState::Answer(
    AsyncRequestBatch& batch, uint32_t i, TRITONSERVER_InferenceResponse* from,
    TRITONSERVER_Error* err)
{
  TRITONBACKEND_Request* request = batch.Request(i);
  TRITONBACKEND_Response* response = nullptr;
  if (err == nullptr) {
    err = TRITONBACKEND_ResponseNew(&response, request);
    if (err == nullptr) {
      err = CopyResponse(from, response);
    }
  } else {
    THOST_LOG_IF_ERROR(
        TRITONBACKEND_ResponseNew(&response, request),
        MessagePrefix() + "failed to create a response");
  }
  if (from != nullptr) {
    THOST_LOG_IF_ERROR(
        TRITONSERVER_InferenceResponseDelete(from),
        MessagePrefix() + "failed to delete a response");
  }
  // The call let go when the callee handed its request back, so this ends
  // the request; a response made before its release may be sent after it.
  batch.Done(i, err == nullptr);
  if (response != nullptr) {
    THOST_LOG_IF_ERROR(
        TRITONBACKEND_ResponseSend(
            response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, err),
        MessagePrefix() + "failed to send a response");
  }
  TRITONSERVER_ErrorDelete(err);
}

}}}  // namespace tritonhost::backend::bls

//
// Entry points: TRITONBACKEND_ModelInitialize, ModelFinalize,
// ModelInstanceInitialize, ModelInstanceFinalize and ModelInstanceExecute.
//
THOST_BACKEND_ENTRY_POINTS(
    tritonhost::backend::bls::ModelState,
    tritonhost::backend::bls::ModelInstanceState);
