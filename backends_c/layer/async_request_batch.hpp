// async_request_batch.hpp: AsyncRequestBatch, the requests of one
// TRITONBACKEND_ModelInstanceExecute call whose work goes on after Execute
// returns (a decoupled model's response thread, a callback of another
// model's request), and RequestEnd, one holder of such a request.
//
// Where a request's work ends is where its statistics belong: a decoupled
// backend's Execute only starts the work, and reporting there would count
// a request that is still computing as done, with compute times of
// microseconds. So a request of an AsyncRequestBatch has holders, the
// batch (for Execute) and each RequestEnd handed out with Hold(); its work
// ends when the last of them lets go, and then, in this order:
//   1. its statistics are reported: success unless a holder said
//      otherwise; exec start when the batch was made; compute start when
//      it was first held (the work was handed its inputs); compute end and
//      exec end when its last holder let go (compute output is none: a
//      decoupled model sends its outputs while it computes);
//   2. it counts in its execution's batch statistics (when it succeeded),
//      which are reported once every request of the execution has ended:
//      one execution, from exec start to the last request's end;
//   3. it is released (TRITONSERVER_REQUEST_RELEASE_ALL).
// The request's responses are the backend's business: a decoupled backend
// sends its FINAL after letting go (SendFinalFlags, decoupled_responses.hpp),
// so that a client holding its last response finds the request counted.
//
// In Execute:
//
//   AsyncRequestBatch batch(*this, requests, request_count);
//   for (uint32_t i = 0; i < batch.Size(); ++i) {
//     // checks the request, copies its inputs, then:
//     //   threads_.Start(batch.Request(i), batch.Hold(i), body)
//     batch.Fail(i, ProcessRequest(batch, i));
//   }
//   batch.Finish();  // or let the destructor do it
//   return nullptr;  // the batch owns every request
//
// A request failed with Fail() (its work never started) is answered at
// Finish() with one FINAL response carrying the error, and ends failed.
//
// Ownership and threads: from construction on the batch owns the requests
// (Execute must return nullptr). The batch belongs to Execute's thread; a
// RequestEnd to whoever holds it, on any thread; the bookkeeping they share
// is locked. Every holder must let go before the instance is finalized
// (ResponseThreads and the like wait for theirs), since the last one calls
// the host with the instance.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend_model_instance.hpp"
#include "host_objects.hpp"
#include "triton/core/tritonbackend.h"
#include "triton/core/tritonserver.h"

namespace tritonhost { namespace backend {

namespace async_detail {
struct Execution;
struct RequestState;
}  // namespace async_detail

// One holder of a request of an AsyncRequestBatch. Copying it adds a
// holder; Done() or the destructor lets this one go. Not for use from
// several threads at once (each thread takes its own copy).
class RequestEnd {
 public:
  RequestEnd() = default;
  ~RequestEnd() { Done(); }
  RequestEnd(const RequestEnd&) = default;
  RequestEnd& operator=(const RequestEnd&) = default;
  RequestEnd(RequestEnd&&) = default;
  RequestEnd& operator=(RequestEnd&&) = default;

  // Records that the request failed (it stays failed whatever other
  // holders say).
  void Fail();
  // Lets go of the request: Fail() first unless 'success'. If this was the
  // last holder, the request ends here (see the top of this file). Does
  // nothing the second time.
  void Done(bool success = true);

 private:
  friend class AsyncRequestBatch;
  explicit RequestEnd(std::shared_ptr<async_detail::RequestState> state)
      : state_(std::move(state))
  {
  }
  std::shared_ptr<async_detail::RequestState> state_;
};

class AsyncRequestBatch {
 public:
  // Notes the execution start; reads each request's batch size (the first
  // dimension of its first input when the model batches, else 1).
  AsyncRequestBatch(
      const BackendModelInstance& instance, TRITONBACKEND_Request** requests,
      uint32_t request_count);
  // Finish(), unless it was called.
  ~AsyncRequestBatch();
  AsyncRequestBatch(const AsyncRequestBatch&) = delete;
  AsyncRequestBatch& operator=(const AsyncRequestBatch&) = delete;

  uint32_t Size() const { return static_cast<uint32_t>(entries_.size()); }
  TRITONBACKEND_Request* Request(uint32_t i) const
  {
    return entries_[i].request;
  }

  // A new holder of request i, for work that goes on after Execute. The
  // first one marks the request's compute start.
  RequestEnd Hold(uint32_t i);

  // Makes 'err' (taken over; nullptr is ignored) the outcome of request i,
  // whose work never started: Finish() answers it with one FINAL response
  // carrying 'err'. The first error wins; later ones are logged and
  // deleted.
  void Fail(uint32_t i, TRITONSERVER_Error* err);

  // Execute lets go of request i now rather than at Finish(): failed unless
  // 'success'. Does nothing the second time.
  void Done(uint32_t i, bool success = true);

  // Answers the failed requests, then lets go of every request Execute
  // still holds. Idempotent.
  void Finish();

 private:
  struct Entry {
    TRITONBACKEND_Request* request = nullptr;
    ErrorPtr error;                                     // Fail()
    std::shared_ptr<async_detail::RequestState> state;  // Execute's hold
  };

  std::vector<Entry> entries_;
  bool finished_ = false;
};

}}  // namespace tritonhost::backend
