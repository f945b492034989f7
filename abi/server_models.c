// TRITONSERVER_Server* functions that control models and describe them:
// loading and unloading by name, and model properties. The C side checks
// the arguments; Go runs them on the server (exports_server.go).
#include <stdlib.h>

#include "_cgo_export.h"
#include "inprocess.h"

#define SERVER(var, h) THOST_OBJECT(var, h, THOST_KIND_SERVER, "server")

TRITONSERVER_Error*
TRITONSERVER_ServerLoadModelWithParameters(
    TRITONSERVER_Server* server, const char* model_name,
    const TRITONSERVER_Parameter** parameters, const uint64_t parameter_count)
{
  struct thost_host* host;
  SERVER(host, server);
  THOST_CHECK_ARG(model_name != NULL, "model_name is NULL");
  if (parameters == NULL && parameter_count != 0) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "load parameters are not provided while parameter count is non-zero");
  }
  for (uint64_t i = 0; i < parameter_count; i++) {
    if (parameters[i] == NULL || parameters[i]->name == NULL) {
      return thost_errorf(
          TRITONSERVER_ERROR_INVALID_ARG, "%s: parameter %llu is NULL",
          __func__, (unsigned long long)i);
    }
  }
  return thostServerLoadModel(
      host, (char*)model_name, (TRITONSERVER_Parameter**)parameters,
      parameter_count);
}

TRITONSERVER_Error*
TRITONSERVER_ServerUnloadModel(
    TRITONSERVER_Server* server, const char* model_name)
{
  struct thost_host* host;
  SERVER(host, server);
  THOST_CHECK_ARG(model_name != NULL, "model_name is NULL");
  return thostServerUnloadModel(host, (char*)model_name, false);
}

TRITONSERVER_Error*
TRITONSERVER_ServerUnloadModelAndDependents(
    TRITONSERVER_Server* server, const char* model_name)
{
  struct thost_host* host;
  SERVER(host, server);
  THOST_CHECK_ARG(model_name != NULL, "model_name is NULL");
  return thostServerUnloadModel(host, (char*)model_name, true);
}

TRITONSERVER_Error*
TRITONSERVER_ServerModelTransactionProperties(
    TRITONSERVER_Server* server, const char* model_name,
    const int64_t model_version, uint32_t* txn_flags, void** voidp)
{
  struct thost_host* host;
  SERVER(host, server);
  THOST_CHECK_ARG(
      model_name != NULL && txn_flags != NULL,
      "model_name or txn_flags is NULL");
  if (voidp != NULL)
    *voidp = NULL;
  *txn_flags = 0;
  bool decoupled = false;
  TRITONSERVER_Error* err = thostServerModelDecoupled(
      host, (char*)model_name, model_version, &decoupled);
  if (err != NULL)
    return err;
  *txn_flags =
      decoupled ? TRITONSERVER_TXN_DECOUPLED : TRITONSERVER_TXN_ONE_TO_ONE;
  return NULL;
}
