// callee_check.hpp: what a bls model checks of the model it calls, through
// the in-process API's model queries, before its first call.
#pragma once

#include <string>

#include "backend_model.hpp"
#include "triton/core/tritonserver.h"

namespace tritonhost { namespace backend { namespace bls {

// Checks, on 'server', that model 'callee' (its newest version) is ready
// (TRITONSERVER_ServerModelIsReady, else UNAVAILABLE), is decoupled only if
// 'model' is (TRITONSERVER_ServerModelConfig), and has every input of
// 'model' with the same data type (TRITONSERVER_ServerModelMetadata); the
// last two are INVALID_ARG naming the configuration field of 'model' to fix.
TRITONSERVER_Error* CheckCallee(
    const BackendModel& model, TRITONSERVER_Server* server,
    const std::string& callee);

}}}  // namespace tritonhost::backend::bls
