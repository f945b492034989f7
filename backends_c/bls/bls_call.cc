// bls_call.cc: see bls_call.hpp.
#include "bls_call.hpp"

#include <utility>
#include <vector>

#include "backend_io.hpp"
#include "cpu_outputs.hpp"
#include "errors.hpp"
#include "logging.hpp"

namespace tritonhost { namespace backend { namespace bls {

// ---- CallCounter ----------------------------------------------------------

void
CallCounter::Add()
{
  std::lock_guard<std::mutex> lock(mu_);
  ++count_;
}

void
CallCounter::Done()
{
  std::lock_guard<std::mutex> lock(mu_);
  if (--count_ == 0) {
    idle_.notify_all();
  }
}

void
CallCounter::WaitIdle()
{
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [this] { return count_ == 0; });
}

// ---- Call: starting -------------------------------------------------------

Call::Call(const CallTarget& target, TRITONBACKEND_Request* request, Mode mode)
    : target_(target), mode_(mode), request_(request)
{
  target_.counter->Add();
}

Call::~Call()
{
  if (response_ != nullptr) {
    THOST_LOG_IF_ERROR(
        TRITONSERVER_InferenceResponseDelete(response_),
        target_.message_prefix + "failed to delete a response");
  }
  TRITONSERVER_ErrorDelete(error_);
  factory_.reset();
  end_.Done();              // may end the request: before the instance goes
  target_.counter->Done();  // last: the instance may be finalized now
}

TRITONSERVER_Error*
Call::Start(
    const CallTarget& target, TRITONBACKEND_Request* request, Mode mode,
    RequestEnd end, std::shared_ptr<Call>* out)
{
  std::shared_ptr<Call> call(new Call(target, request, mode));
  call->end_ = std::move(end);
  if (mode == Mode::kForward) {
    TRITONBACKEND_ResponseFactory* factory = nullptr;
    THOST_RETURN_IF_ERROR(TRITONBACKEND_ResponseFactoryNew(&factory, request));
    call->factory_.reset(factory);
  }
  TRITONSERVER_Error* err = call->Build();
  if (err == nullptr) {
    call->self_ = call;  // the callbacks' reference, dropped by OnRelease
    // A traced request has the call traced as its child, as python backend
    // does for a BLS call: a child spawned from the request's trace, which
    // the server owns once the call is submitted.
    TRITONSERVER_InferenceTrace* trace = nullptr;
    TRITONSERVER_InferenceTrace* child = nullptr;
    err = TRITONBACKEND_RequestTrace(request, &trace);
    if (err == nullptr && trace != nullptr) {
      err = TRITONSERVER_InferenceTraceSpawnChildTrace(trace, &child);
    }
    if (err == nullptr) {
      err = TRITONSERVER_ServerInferAsync(target.server, call->inner_, child);
      if (err != nullptr && child != nullptr) {
        THOST_LOG_IF_ERROR(
            TRITONSERVER_InferenceTraceDelete(child),
            target.message_prefix + "failed to delete a trace");
      }
    }
    if (err != nullptr) {
      call->self_.reset();
    }
  }
  if (err != nullptr) {
    if (call->inner_ != nullptr) {
      THOST_LOG_IF_ERROR(
          TRITONSERVER_InferenceRequestDelete(call->inner_),
          target.message_prefix + "failed to delete a request");
    }
    return err;
  }
  *out = std::move(call);
  return nullptr;
}

TRITONSERVER_Error*
Call::Build()
{
  THOST_RETURN_IF_ERROR(TRITONSERVER_InferenceRequestNew(
      &inner_, target_.server, target_.model.c_str(), -1 /* newest */));
  const char* id = nullptr;
  THOST_RETURN_IF_ERROR(TRITONBACKEND_RequestId(request_, &id));
  THOST_RETURN_IF_ERROR(TRITONSERVER_InferenceRequestSetId(inner_, id));
  THOST_RETURN_IF_ERROR(AddInputs());
  THOST_RETURN_IF_ERROR(AddRequestedOutputs());
  THOST_RETURN_IF_ERROR(
      TRITONSERVER_InferenceRequestSetReleaseCallback(inner_, OnRelease, this));
  return TRITONSERVER_InferenceRequestSetResponseCallback(
      inner_, target_.allocator, nullptr, OnResponse, this);
}

// Every input of the outer request, its buffers passed on as they are.
TRITONSERVER_Error*
Call::AddInputs()
{
  uint32_t count = 0;
  THOST_RETURN_IF_ERROR(TRITONBACKEND_RequestInputCount(request_, &count));
  for (uint32_t i = 0; i < count; ++i) {
    TRITONBACKEND_Input* input = nullptr;
    THOST_RETURN_IF_ERROR(
        TRITONBACKEND_RequestInputByIndex(request_, i, &input));
    const char* name = nullptr;
    TRITONSERVER_DataType datatype = TRITONSERVER_TYPE_INVALID;
    const int64_t* shape = nullptr;
    uint32_t dims = 0;
    uint32_t buffers = 0;
    THOST_RETURN_IF_ERROR(TRITONBACKEND_InputProperties(
        input, &name, &datatype, &shape, &dims, nullptr, &buffers));
    THOST_RETURN_IF_ERROR(TRITONSERVER_InferenceRequestAddInput(
        inner_, name, datatype, shape, dims));
    for (uint32_t b = 0; b < buffers; ++b) {
      const void* base = nullptr;
      uint64_t size = 0;
      TRITONSERVER_MemoryType memory_type = TRITONSERVER_MEMORY_CPU;
      int64_t memory_type_id = 0;
      THOST_RETURN_IF_ERROR(TRITONBACKEND_InputBuffer(
          input, b, &base, &size, &memory_type, &memory_type_id));
      THOST_RETURN_IF_ERROR(TRITONSERVER_InferenceRequestAppendInputData(
          inner_, name, base, size, memory_type, memory_type_id));
    }
  }
  return nullptr;
}

TRITONSERVER_Error*
Call::AddRequestedOutputs()
{
  std::vector<std::string> names;
  THOST_RETURN_IF_ERROR(RequestedOutputs(request_, &names));
  for (const std::string& name : names) {
    THOST_RETURN_IF_ERROR(
        TRITONSERVER_InferenceRequestAddRequestedOutput(inner_, name.c_str()));
  }
  return nullptr;
}

// ---- Call: waiting (Mode::kWait) ------------------------------------------

bool
Call::Wait(
    std::chrono::milliseconds left, std::chrono::milliseconds timeout,
    TRITONSERVER_InferenceResponse** response, TRITONSERVER_Error** error)
{
  std::unique_lock<std::mutex> lock(mu_);
  if (!back_cv_.wait_for(lock, left, [this] { return back_; })) {
    GiveUp(timeout);  // under the lock, so OnRelease comes after
    return false;
  }
  *response = std::exchange(response_, nullptr);
  *error = std::exchange(error_, nullptr);
  return true;
}

// Stops waiting for the callee: it is cancelled and the outer request is
// answered now; it ends, failed, once OnRelease lets go of it. Called with
// mu_ held: OnRelease (which deletes inner_) waits for it.
void
Call::GiveUp(std::chrono::milliseconds timeout)
{
  abandoned_ = true;
  THOST_LOG_IF_ERROR(
      TRITONSERVER_InferenceRequestCancel(inner_),
      target_.message_prefix + "failed to cancel a request");
  TRITONBACKEND_Response* response = nullptr;
  TRITONSERVER_Error* err = TRITONBACKEND_ResponseNew(&response, request_);
  if (err == nullptr) {
    err = MakeError(
        TRITONSERVER_ERROR_UNAVAILABLE,
        target_.message_prefix + "model '" + target_.model +
            "' did not answer within " + std::to_string(timeout.count()) +
            " ms (bls_timeout_ms); the request to it is cancelled");
    THOST_LOG_IF_ERROR(
        TRITONBACKEND_ResponseSend(
            response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, err),
        target_.message_prefix + "failed to send a response");
  }
  TRITONSERVER_ErrorDelete(err);
  end_.Fail();
}

void
Call::Keep(TRITONSERVER_InferenceResponse* response, uint32_t flags)
{
  (void)flags;  // the release comes after the final response anyway
  if (response == nullptr) {
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  // The response's error is a new object each call, and this call owns it.
  TRITONSERVER_Error* err = TRITONSERVER_InferenceResponseError(response);
  if (err == nullptr && response_ != nullptr) {
    err = MakeError(
        TRITONSERVER_ERROR_INTERNAL, target_.message_prefix + "model '" +
                                         target_.model +
                                         "' sent more than one response");
  }
  if (err == nullptr) {
    response_ = response;
    return;
  }
  if (error_ == nullptr) {
    error_ = err;  // the first error wins
  } else {
    TRITONSERVER_ErrorDelete(err);
  }
  THOST_LOG_IF_ERROR(
      TRITONSERVER_InferenceResponseDelete(response),
      target_.message_prefix + "failed to delete a response");
}

// ---- Call: forwarding (Mode::kForward) ------------------------------------

void
Call::Forward(TRITONSERVER_InferenceResponse* response, uint32_t flags)
{
  TRITONBACKEND_ResponseFactory* factory = factory_.get();
  bool cancelled = false;
  if (TRITONBACKEND_ResponseFactoryIsCancelled(factory, &cancelled) ==
          nullptr &&
      cancelled) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!cancelled_ && !back_) {  // the client gave up: so does the callee
      cancelled_ = true;
      THOST_LOG_IF_ERROR(
          TRITONSERVER_InferenceRequestCancel(inner_),
          target_.message_prefix + "failed to cancel a request");
    }
  }
  const uint32_t send_flags = flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL;
  if (response == nullptr) {
    if (send_flags != 0) {
      THOST_LOG_IF_ERROR(
          TRITONBACKEND_ResponseFactorySendFlags(factory, send_flags),
          target_.message_prefix + "failed to send the final flag");
    }
    return;
  }
  TRITONBACKEND_Response* out = nullptr;
  TRITONSERVER_Error* err = TRITONBACKEND_ResponseNewFromFactory(&out, factory);
  if (err == nullptr) {
    // The callee's error is ours to delete (below, once it is sent).
    err = TRITONSERVER_InferenceResponseError(response);
    if (err == nullptr) {
      err = CopyResponse(response, out);
    }
    if (err != nullptr) {
      std::lock_guard<std::mutex> lock(mu_);
      failed_ = true;
    }
    THOST_LOG_IF_ERROR(
        TRITONBACKEND_ResponseSend(out, send_flags, err),
        target_.message_prefix + "failed to send a response");
  }
  TRITONSERVER_ErrorDelete(err);
  THOST_LOG_IF_ERROR(
      TRITONSERVER_InferenceResponseDelete(response),
      target_.message_prefix + "failed to delete a response");
}

// ---- Call: the callbacks --------------------------------------------------

void
Call::OnResponse(
    TRITONSERVER_InferenceResponse* response, const uint32_t flags, void* userp)
{
  Call* call = static_cast<Call*>(userp);
  if (call->mode_ == Mode::kWait) {
    call->Keep(response, flags);
  } else {
    call->Forward(response, flags);
  }
}

void
Call::OnRelease(
    TRITONSERVER_InferenceRequest* request, const uint32_t flags, void* userp)
{
  (void)request;  // the same as inner_
  if ((flags & TRITONSERVER_REQUEST_RELEASE_ALL) != 0) {
    static_cast<Call*>(userp)->Released();
  }
}

// The callee is done with the inner request (and so with the outer
// request's input buffers): the call lets go of the outer request.
void
Call::Released()
{
  std::shared_ptr<Call> self;  // dropped last, after the lock
  RequestEnd end;              // let go after the lock
  std::unique_lock<std::mutex> lock(mu_);
  self = std::move(self_);
  end = std::move(end_);
  back_ = true;
  THOST_LOG_IF_ERROR(
      TRITONSERVER_InferenceRequestDelete(inner_),
      target_.message_prefix + "failed to delete a request");
  inner_ = nullptr;
  if (mode_ == Mode::kWait && !abandoned_) {
    // Execute, which holds the request too, answers it and ends it there.
    end.Done();
    back_cv_.notify_all();
    return;
  }
  const bool success = (mode_ == Mode::kForward) && !failed_;
  lock.unlock();
  // kForward: the callee's last response has been passed on; kWait past the
  // deadline: the request was answered with an error. Its work ends here.
  end.Done(success);
}

}}}  // namespace tritonhost::backend::bls
