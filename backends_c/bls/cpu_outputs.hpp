// cpu_outputs.hpp: where the outputs of the models the bls backend calls
// go (the response allocator of a bls model: malloc'd CPU memory), and how
// a callee's response becomes a response of the bls model (copied).
#pragma once

#include <memory>

#include "triton/core/tritonbackend.h"
#include "triton/core/tritonserver.h"

namespace tritonhost { namespace backend { namespace bls {

// The response allocator of a bls model: every output buffer of a callee
// is malloc'd CPU memory, handed back with free. Its functions keep no
// state, so one allocator serves every call of the model at once.
class CpuAllocator {
 public:
  static TRITONSERVER_Error* Create(std::unique_ptr<CpuAllocator>* out);
  ~CpuAllocator();
  CpuAllocator(const CpuAllocator&) = delete;
  CpuAllocator& operator=(const CpuAllocator&) = delete;

  TRITONSERVER_ResponseAllocator* Handle() const { return allocator_; }

 private:
  CpuAllocator() = default;
  TRITONSERVER_ResponseAllocator* allocator_ = nullptr;
};

// Copies the outputs (CPU memory) and parameters of 'from' into 'to'.
TRITONSERVER_Error* CopyResponse(
    TRITONSERVER_InferenceResponse* from, TRITONBACKEND_Response* to);

}}}  // namespace tritonhost::backend::bls
