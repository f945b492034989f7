// TRITONSERVER_Server* functions of the server object itself: creating and
// deleting servers (TRITONSERVER_ServerNew), their state, metadata, model
// index and statistics, repositories, and metrics snapshots. The C side
// checks the arguments; Go does the rest (exports_server.go).
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "inprocess.h"
#include "server_options.h"

#define SERVER(var, h) THOST_OBJECT(var, h, THOST_KIND_SERVER, "server")

TRITONSERVER_Error*
TRITONSERVER_ServerNew(
    TRITONSERVER_Server** server, TRITONSERVER_ServerOptions* options)
{
  struct thost_server_options* o;
  THOST_CHECK_ARG(server != NULL, "server is NULL");
  THOST_OBJECT(o, options, THOST_KIND_SERVER_OPTIONS, "server options");
  uint64_t handle = 0;
  TRITONSERVER_Error* err = thostServerNew(o->key, &handle);
  if (err == NULL)
    *server = THOST_AS_HANDLE(TRITONSERVER_Server, handle);
  return err;
}

TRITONSERVER_Error*
TRITONSERVER_ServerDelete(TRITONSERVER_Server* server)
{
  if (server == NULL)
    return NULL;  // as deleting a null pointer in Triton
  struct thost_host* host;
  SERVER(host, server);
  return thostServerDelete(host);
}

TRITONSERVER_Error*
TRITONSERVER_ServerStop(TRITONSERVER_Server* server)
{
  struct thost_host* host;
  SERVER(host, server);
  return thostServerStop(host);
}

TRITONSERVER_Error*
TRITONSERVER_ServerSetExitTimeout(
    TRITONSERVER_Server* server, unsigned int timeout)
{
  struct thost_host* host;
  SERVER(host, server);
  return thostServerSetExitTimeout(host, timeout);
}

TRITONSERVER_Error*
TRITONSERVER_ServerRegisterModelRepository(
    TRITONSERVER_Server* server, const char* repository_path,
    const TRITONSERVER_Parameter** name_mapping, const uint32_t mapping_count)
{
  struct thost_host* host;
  SERVER(host, server);
  THOST_CHECK_ARG(repository_path != NULL, "repository_path is NULL");
  if (name_mapping == NULL && mapping_count != 0) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "model mappings are not provided while mapping count is non-zero");
  }
  for (uint32_t i = 0; i < mapping_count; i++) {
    if (name_mapping[i] == NULL || name_mapping[i]->name == NULL) {
      return thost_errorf(
          TRITONSERVER_ERROR_INVALID_ARG, "%s: mapping %u is NULL", __func__,
          i);
    }
  }
  return thostServerRegisterRepository(
      host, (char*)repository_path, (TRITONSERVER_Parameter**)name_mapping,
      mapping_count);
}

TRITONSERVER_Error*
TRITONSERVER_ServerUnregisterModelRepository(
    TRITONSERVER_Server* server, const char* repository_path)
{
  struct thost_host* host;
  SERVER(host, server);
  THOST_CHECK_ARG(repository_path != NULL, "repository_path is NULL");
  return thostServerUnregisterRepository(host, (char*)repository_path);
}

TRITONSERVER_Error*
TRITONSERVER_ServerPollModelRepository(TRITONSERVER_Server* server)
{
  struct thost_host* host;
  SERVER(host, server);
  return thostServerPoll(host);
}

TRITONSERVER_Error*
TRITONSERVER_ServerIsLive(TRITONSERVER_Server* server, bool* live)
{
  struct thost_host* host;
  SERVER(host, server);
  THOST_CHECK_ARG(live != NULL, "live is NULL");
  return thostServerState(host, false, live);
}

TRITONSERVER_Error*
TRITONSERVER_ServerIsReady(TRITONSERVER_Server* server, bool* ready)
{
  struct thost_host* host;
  SERVER(host, server);
  THOST_CHECK_ARG(ready != NULL, "ready is NULL");
  return thostServerState(host, true, ready);
}

TRITONSERVER_Error*
TRITONSERVER_ServerMetadata(
    TRITONSERVER_Server* server, TRITONSERVER_Message** server_metadata)
{
  struct thost_host* host;
  SERVER(host, server);
  THOST_CHECK_ARG(server_metadata != NULL, "server_metadata is NULL");
  return thostServerMetadata(host, server_metadata);
}

TRITONSERVER_Error*
TRITONSERVER_ServerModelBatchProperties(
    TRITONSERVER_Server* server, const char* model_name,
    const int64_t model_version, uint32_t* flags, void** voidp)
{
  struct thost_host* host;
  SERVER(host, server);
  THOST_CHECK_ARG(
      model_name != NULL && flags != NULL, "model_name or flags is NULL");
  if (voidp != NULL)
    *voidp = NULL;
  int64_t max_batch = 0;
  TRITONSERVER_Error* err = thostServerModelMaxBatch(
      host, (char*)model_name, model_version, &max_batch);
  if (err != NULL)
    return err;
  *flags =
      max_batch > 0 ? TRITONSERVER_BATCH_FIRST_DIM : TRITONSERVER_BATCH_UNKNOWN;
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_ServerModelStatistics(
    TRITONSERVER_Server* server, const char* model_name,
    const int64_t model_version, TRITONSERVER_Message** model_stats)
{
  struct thost_host* host;
  SERVER(host, server);
  THOST_CHECK_ARG(
      model_name != NULL && model_stats != NULL,
      "model_name or model_stats is NULL");
  return thostServerModelStatistics(
      host, (char*)model_name, model_version, model_stats);
}

TRITONSERVER_Error*
TRITONSERVER_ServerModelIndex(
    TRITONSERVER_Server* server, uint32_t flags,
    TRITONSERVER_Message** model_index)
{
  struct thost_host* host;
  SERVER(host, server);
  THOST_CHECK_ARG(model_index != NULL, "model_index is NULL");
  return thostServerModelIndex(
      host, (flags & TRITONSERVER_INDEX_FLAG_READY) != 0, model_index);
}

TRITONSERVER_Error*
TRITONSERVER_ServerLoadModel(
    TRITONSERVER_Server* server, const char* model_name)
{
  return TRITONSERVER_ServerLoadModelWithParameters(
      server, model_name, NULL, 0);
}

// ---- Metrics snapshots ------------------------------------------------------

TRITONSERVER_Error*
TRITONSERVER_ServerMetrics(
    TRITONSERVER_Server* server, TRITONSERVER_Metrics** metrics)
{
  struct thost_host* host;
  SERVER(host, server);
  THOST_CHECK_ARG(metrics != NULL, "metrics is NULL");
  struct thost_metrics* m = calloc(1, sizeof(*m));
  if (m == NULL)
    return thost_errorf(
        TRITONSERVER_ERROR_INTERNAL, "%s: out of memory", __func__);
  m->host = host;
  m->handle = thost_handle_new(THOST_KIND_METRICS, m);
  if (m->handle == 0) {
    free(m);
    return thost_errorf(
        TRITONSERVER_ERROR_INTERNAL, "%s: out of handles", __func__);
  }
  *metrics = THOST_AS_HANDLE(TRITONSERVER_Metrics, m->handle);
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_MetricsDelete(TRITONSERVER_Metrics* metrics)
{
  if (metrics == NULL)
    return NULL;  // as deleting a null pointer in Triton
  struct thost_metrics* m;
  THOST_OBJECT(m, metrics, THOST_KIND_METRICS, "metrics");
  thost_handle_free(m->handle);
  free(m->text);
  free(m);
  return NULL;
}

TRITONSERVER_Error*
TRITONSERVER_MetricsFormatted(
    TRITONSERVER_Metrics* metrics, TRITONSERVER_MetricFormat format,
    const char** base, size_t* byte_size)
{
  struct thost_metrics* m;
  THOST_OBJECT(m, metrics, THOST_KIND_METRICS, "metrics");
  THOST_CHECK_ARG(
      base != NULL && byte_size != NULL, "base or byte_size is NULL");
  if (format != TRITONSERVER_METRIC_PROMETHEUS) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG, "unknown metrics format '%d'",
        (int)format);
  }
  char* text = NULL;
  size_t len = 0;
  TRITONSERVER_Error* err = thostServerMetricsText(m->host, &text, &len);
  if (err != NULL)
    return err;
  free(m->text);  // the text handed out before goes, as in Triton
  m->text = text;
  m->len = len;
  *base = m->text;
  *byte_size = m->len;
  return NULL;
}
