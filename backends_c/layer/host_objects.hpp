// host_objects.hpp: std::unique_ptr holders for objects the host hands a
// backend to own, each deleted through its host function (a failed delete
// is logged).
#pragma once

#include <memory>

#include "logging.hpp"
#include "triton/core/tritonbackend.h"
#include "triton/core/tritonserver.h"

namespace tritonhost { namespace backend {

struct ErrorDeleter {
  void operator()(TRITONSERVER_Error* err) const
  {
    TRITONSERVER_ErrorDelete(err);
  }
};
using ErrorPtr = std::unique_ptr<TRITONSERVER_Error, ErrorDeleter>;

// For messages the caller owns (TRITONBACKEND_ModelConfig); never for the
// host-owned ones (BackendConfig, ModelInstanceHostPolicy).
struct MessageDeleter {
  void operator()(TRITONSERVER_Message* msg) const
  {
    THOST_LOG_IF_ERROR(
        TRITONSERVER_MessageDelete(msg), "failed to delete message");
  }
};
using MessagePtr = std::unique_ptr<TRITONSERVER_Message, MessageDeleter>;

struct ResponseFactoryDeleter {
  void operator()(TRITONBACKEND_ResponseFactory* factory) const
  {
    THOST_LOG_IF_ERROR(
        TRITONBACKEND_ResponseFactoryDelete(factory),
        "failed to delete response factory");
  }
};
using ResponseFactoryPtr =
    std::unique_ptr<TRITONBACKEND_ResponseFactory, ResponseFactoryDeleter>;

struct ResponseStatisticsDeleter {
  void operator()(TRITONBACKEND_ModelInstanceResponseStatistics* stats) const
  {
    THOST_LOG_IF_ERROR(
        TRITONBACKEND_ModelInstanceResponseStatisticsDelete(stats),
        "failed to delete response statistics");
  }
};
using ResponseStatisticsPtr = std::unique_ptr<
    TRITONBACKEND_ModelInstanceResponseStatistics, ResponseStatisticsDeleter>;

}}  // namespace tritonhost::backend
