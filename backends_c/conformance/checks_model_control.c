/*
 * checks_model_control.c: the in-process server API's model control and
 * model properties: transaction properties, and loading and unloading by
 * name. The conformance server runs without explicit model control, so
 * loads and unloads are refused as Triton refuses them there; the calls
 * that succeed are exercised by the modelcontrol backend's tests. Run from
 * Execute of the "inprocess" kind.
 */
#include <stdint.h>

#include "conformance.h"

static void
check_transaction_properties(conf_report* r, TRITONSERVER_Server* server)
{
  uint32_t flags = 0;
  void* voidp = &flags;
  if (CONF_CHECK(
          r, TRITONSERVER_ServerModelTransactionProperties, "good", server,
          CONF_PEER, -1, &flags, &voidp)) {
    conf_value(r, "inprocess.peer_txn_flags", "%u", flags);
    conf_value(
        r, "inprocess.peer_txn_voidp", "%s", voidp == NULL ? "NULL" : "set");
  }
  CONF_CHECK(
      r, TRITONSERVER_ServerModelTransactionProperties, "null_voidp", server,
      CONF_PEER, 1, &flags, NULL);
  CONF_CHECK(
      r, TRITONSERVER_ServerModelTransactionProperties, "unknown_model", server,
      "no_such_model", -1, &flags, NULL);
  CONF_CHECK(
      r, TRITONSERVER_ServerModelTransactionProperties, "unknown_version",
      server, CONF_PEER, 9, &flags, NULL);
  CONF_CHECK(
      r, TRITONSERVER_ServerModelTransactionProperties, "null_name", server,
      NULL, -1, &flags, NULL);
  CONF_CHECK(
      r, TRITONSERVER_ServerModelTransactionProperties, "null_flags", server,
      CONF_PEER, -1, NULL, NULL);
  CONF_CHECK(
      r, TRITONSERVER_ServerModelTransactionProperties, "null_server", NULL,
      CONF_PEER, -1, &flags, NULL);
}

static void
check_load_unload(conf_report* r, TRITONSERVER_Server* server)
{
  TRITONSERVER_Parameter* config =
      TRITONSERVER_ParameterNew("config", TRITONSERVER_PARAMETER_STRING, "{}");
  const TRITONSERVER_Parameter* params[1] = {config};
  CONF_CHECK(
      r, TRITONSERVER_ServerLoadModelWithParameters, "not_explicit", server,
      CONF_PEER, params, 1);
  CONF_CHECK(
      r, TRITONSERVER_ServerLoadModelWithParameters, "no_parameters", server,
      CONF_PEER, NULL, 0);
  CONF_CHECK(
      r, TRITONSERVER_ServerLoadModelWithParameters, "null_parameters", server,
      CONF_PEER, NULL, 1);
  CONF_CHECK(
      r, TRITONSERVER_ServerLoadModelWithParameters, "null_name", server, NULL,
      params, 1);
  CONF_CHECK(
      r, TRITONSERVER_ServerLoadModelWithParameters, "null_server", NULL,
      CONF_PEER, params, 1);
  TRITONSERVER_ParameterDelete(config);

  CONF_CHECK(
      r, TRITONSERVER_ServerUnloadModel, "not_explicit", server, CONF_PEER);
  CONF_CHECK(r, TRITONSERVER_ServerUnloadModel, "null_name", server, NULL);
  CONF_CHECK(r, TRITONSERVER_ServerUnloadModel, "null_server", NULL, CONF_PEER);
  CONF_CHECK(
      r, TRITONSERVER_ServerUnloadModelAndDependents, "not_explicit", server,
      CONF_PEER);
  CONF_CHECK(
      r, TRITONSERVER_ServerUnloadModelAndDependents, "null_name", server,
      NULL);
  CONF_CHECK(
      r, TRITONSERVER_ServerUnloadModelAndDependents, "null_server", NULL,
      CONF_PEER);
}

void
conf_check_model_control(conf_report* r, TRITONSERVER_Server* server)
{
  check_transaction_properties(r, server);
  check_load_unload(r, server);
}
