// bls_call.hpp: one request of the bls backend passed on to another model
// of the server through the in-process API (tritonserver.h: inference
// requests, response allocators, TRITONSERVER_ServerInferAsync), Triton's
// business-logic-scripting pattern.
//
// The life of a Call, for one request of the bls model (the "outer"
// request) and the request it makes of the callee (the "inner" one):
//   1. Start builds the inner request from the outer one: every input with
//      its buffers, not copied (so the outer request stays unreleased until
//      the callee hands the inner one back), the outputs the outer request
//      asks for, and its id; then submits it.
//   2. The callee's responses reach OnResponse on a thread of the server.
//      In Mode::kWait, the Execute thread that started the call waits in
//      Wait (up to a deadline) and answers the outer request itself. In
//      Mode::kForward, each response is sent on at once as a response of
//      the outer request, through its response factory, flags and all.
//   3. OnRelease, when the callee hands the inner request back, deletes it
//      and lets go of the call's RequestEnd (async_request_batch.hpp): the
//      outer request's buffers are free then, and in Mode::kForward (or
//      kWait past the deadline) its work is done, so unless Execute still
//      holds it, its statistics are reported and it is released there.
// A Call lives until both Execute and the callbacks let go of it (it holds
// itself until OnRelease); the instance's CallCounter counts it until then,
// so the instance's finalizer can wait for the callbacks to finish.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "async_request_batch.hpp"
#include "host_objects.hpp"
#include "triton/core/tritonbackend.h"
#include "triton/core/tritonserver.h"

namespace tritonhost { namespace backend { namespace bls {

// The calls an instance has started and whose callbacks have not all
// returned.
class CallCounter {
 public:
  void Add();
  void Done();
  // Blocks until the count is zero (the instance's finalizer; the host
  // bounds how long finalizing may take).
  void WaitIdle();

 private:
  std::mutex mu_;
  std::condition_variable idle_;
  size_t count_ = 0;
};

// What a Call needs of its model and instance; all of it outlives the call.
struct CallTarget {
  TRITONSERVER_Server* server = nullptr;
  std::string model;  // the callee
  TRITONSERVER_ResponseAllocator* allocator = nullptr;
  std::string message_prefix;
  CallCounter* counter = nullptr;
};

class Call {
 public:
  enum class Mode { kWait, kForward };

  // Starts the call for 'request' (step 1), which 'end' holds. On error
  // nothing was submitted, 'end' was let go, and the outer request is still
  // the caller's to answer.
  static TRITONSERVER_Error* Start(
      const CallTarget& target, TRITONBACKEND_Request* request, Mode mode,
      RequestEnd end, std::shared_ptr<Call>* out);
  ~Call();
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;

  // Mode::kWait: waits until the callee hands the inner request back, or
  // until 'left' has passed. In time: returns true with the callee's one
  // response (owned by the caller; nullptr when it sent none) or its error
  // (owned), and the caller answers and releases the outer request. Too late:
  // cancels the inner request, answers the outer one with an UNAVAILABLE
  // error and returns false; the outer request ends, failed, once the
  // callee hands the inner one back (OnRelease).
  // 'left' is how long to wait; 'timeout' the configured deadline, for the
  // error message.
  bool Wait(
      std::chrono::milliseconds left, std::chrono::milliseconds timeout,
      TRITONSERVER_InferenceResponse** response, TRITONSERVER_Error** error);

 private:
  Call(const CallTarget& target, TRITONBACKEND_Request* request, Mode mode);
  TRITONSERVER_Error* Build();
  TRITONSERVER_Error* AddInputs();
  TRITONSERVER_Error* AddRequestedOutputs();
  void GiveUp(std::chrono::milliseconds timeout);
  void Keep(TRITONSERVER_InferenceResponse* response, uint32_t flags);
  void Forward(TRITONSERVER_InferenceResponse* response, uint32_t flags);
  void Released();

  static void OnResponse(
      TRITONSERVER_InferenceResponse* response, const uint32_t flags,
      void* userp);
  static void OnRelease(
      TRITONSERVER_InferenceRequest* request, const uint32_t flags,
      void* userp);

  const CallTarget& target_;
  const Mode mode_;
  TRITONBACKEND_Request* request_;  // the outer request
  TRITONSERVER_InferenceRequest* inner_ = nullptr;
  ResponseFactoryPtr factory_;  // kForward
  RequestEnd end_;              // let go by Released (or the destructor)

  std::mutex mu_;
  std::condition_variable back_cv_;
  bool back_ = false;       // the callee handed the inner request back
  bool abandoned_ = false;  // kWait: Execute stopped waiting
  bool failed_ = false;     // kForward: an error was sent on
  bool cancelled_ = false;  // the inner request was cancelled
  TRITONSERVER_InferenceResponse* response_ = nullptr;  // kWait
  TRITONSERVER_Error* error_ = nullptr;                 // kWait
  std::shared_ptr<Call> self_;  // held from submission to OnRelease
};

}}}  // namespace tritonhost::backend::bls
