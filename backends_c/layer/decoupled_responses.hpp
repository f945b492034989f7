// decoupled_responses.hpp: answering the requests of a decoupled model,
// whose responses a backend sends from threads of its own through each
// request's response factory (repeat and square do).
//
// The life of one request in such a backend:
//   1. Execute makes an AsyncRequestBatch of its requests
//      (async_request_batch.hpp), which owns them from then on.
//   2. In Execute, the backend checks the request and copies what its
//      thread will need; then ResponseThreads::Start creates the request's
//      response factory and hands it, with a RequestEnd (a holder of the
//      request), to a new detached thread.
//   3. If step 2 fails, the backend hands the error to the batch
//      (AsyncRequestBatch::Fail), which answers the request with one FINAL
//      response carrying it. No factory exists then, so nothing else is
//      ever sent for the request.
//   4. Execute returns; the batch lets go of the request then, and the
//      factory keeps the response path open.
//   5. The thread sends its responses through the factory (not FINAL). When
//      its work is done it lets go of its RequestEnd (Done, failed or not):
//      this is where the request's work ends, so its statistics are
//      reported and it is released there, once Execute has let go too.
//      Then it ends the request's stream exactly once: SendFinalFlags after
//      the last response, or SendFinalError when a response could not be
//      built or sent. The factory is deleted when the thread lets go of its
//      ResponseFactoryPtr.
//   6. When the instance is finalized (TRITONBACKEND_ModelInstanceFinalize
//      deletes its state), the instance's ResponseThreads waits until every
//      thread has finished.
//
// Ownership: a function here that takes a TRITONSERVER_Error* takes it over
// and deletes it. The host calls' own failures are logged, not returned:
// nobody is left to hand them to. Threads: any thread may call these, on a
// request, factory or response it currently owns. All inline, so that a
// backend needs no object file of the layer for them.
#pragma once

#include <chrono>
#include <utility>

#include "async_request_batch.hpp"
#include "errors.hpp"
#include "host_objects.hpp"
#include "logging.hpp"
#include "thread_tracker.hpp"
#include "triton/core/tritonbackend.h"
#include "triton/core/tritonserver.h"

namespace tritonhost { namespace backend {

// The response threads of one model instance. Make it the last member of
// the instance's state: members are destroyed in reverse order, so its
// destructor, which waits until every thread it started has finished, runs
// before any other member goes, and the threads may use the state to the
// end (the entry points' finalizer deletes the state, so
// TRITONBACKEND_ModelInstanceFinalize returns only after the threads).
// Start is for Execute's thread; the destructor for the finalizer's.
class ResponseThreads {
 public:
  ResponseThreads() = default;
  ~ResponseThreads() { threads_.WaitIdle(std::chrono::milliseconds(10)); }
  ResponseThreads(const ResponseThreads&) = delete;
  ResponseThreads& operator=(const ResponseThreads&) = delete;

  // Creates 'request's response factory and starts a detached thread that
  // calls fn(ResponseFactoryPtr, RequestEnd) with it and with 'end', a
  // holder of the request (AsyncRequestBatch::Hold); both are let go when fn
  // lets go of them, before the thread counts as finished. fn must not
  // reach 'request' itself, which may be released by then. On error no
  // thread runs, the factory (if it was created) is deleted, 'end' is let
  // go, and the request is still the caller's to answer
  // (AsyncRequestBatch::Fail).
  template <typename Fn>
  TRITONSERVER_Error* Start(
      TRITONBACKEND_Request* request, RequestEnd end, Fn&& fn)
  {
    TRITONBACKEND_ResponseFactory* factory = nullptr;
    THOST_RETURN_IF_ERROR(TRITONBACKEND_ResponseFactoryNew(&factory, request));
    return threads_.StartDetached(
        "response thread",
        [factory = ResponseFactoryPtr(factory), end = std::move(end),
         fn = std::forward<Fn>(fn)]() mutable {
          fn(std::move(factory), std::move(end));
        });
  }

 private:
  ThreadTracker threads_;
};

// The last step of RespondIfError and SendFinalError: sends 'response', if
// there is one, with 'err' and TRITONSERVER_RESPONSE_COMPLETE_FINAL, then
// deletes 'err'.
inline void
SendFinalErrorResponse(
    TRITONBACKEND_Response* response, TRITONSERVER_Error* err)
{
  if (response != nullptr) {
    THOST_LOG_IF_ERROR(
        TRITONBACKEND_ResponseSend(
            response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, err),
        "failed to send error response");
  }
  TRITONSERVER_ErrorDelete(err);
}

// If 'err' is an error, answers 'request', which has no response factory
// yet, with one response that carries 'err' and
// TRITONSERVER_RESPONSE_COMPLETE_FINAL, then deletes 'err'. Nothing is sent
// for nullptr. The caller still releases the request.
inline void
RespondIfError(TRITONBACKEND_Request* request, TRITONSERVER_Error* err)
{
  if (err == nullptr) {
    return;
  }
  TRITONBACKEND_Response* response = nullptr;
  THOST_LOG_IF_ERROR(
      TRITONBACKEND_ResponseNew(&response, request),
      "failed to create error response");
  SendFinalErrorResponse(response, err);
}

// Ends the stream of 'factory' with 'err' (not nullptr): sends 'response',
// the caller's half-built response from the factory, or a new one if it is
// nullptr, carrying 'err' and TRITONSERVER_RESPONSE_COMPLETE_FINAL; then
// deletes 'err'. The host owns 'response' from here on. Nothing may be
// sent through the factory afterwards.
inline void
SendFinalError(
    TRITONBACKEND_ResponseFactory* factory, TRITONBACKEND_Response* response,
    TRITONSERVER_Error* err)
{
  if (response == nullptr) {
    THOST_LOG_IF_ERROR(
        TRITONBACKEND_ResponseNewFromFactory(&response, factory),
        "failed to create error response");
  }
  SendFinalErrorResponse(response, err);
}

// Ends the stream of 'factory' after its last response: a flags-only
// TRITONSERVER_RESPONSE_COMPLETE_FINAL. Nothing may be sent through the
// factory afterwards.
inline void
SendFinalFlags(TRITONBACKEND_ResponseFactory* factory)
{
  THOST_LOG_IF_ERROR(
      TRITONBACKEND_ResponseFactorySendFlags(
          factory, TRITONSERVER_RESPONSE_COMPLETE_FINAL),
      "failed to send final flags");
}

}}  // namespace tritonhost::backend
