/*
 * checks_model.c: the model handle. Run from TRITONBACKEND_ModelInitialize,
 * the one place where TRITONBACKEND_ModelSetConfig is allowed.
 */
#include <string.h>

#include "conformance.h"

/* What auto-completion sends back: the model's inputs and outputs plus one
 * more output, AUTO_OUT, and a parameter change that the host must ignore
 * (only max_batch_size, inputs, outputs and the scheduling choice are taken
 * from the message). Written for the configuration the Go test uses. */
static const char kAutoCompleted[] =
    "{\"max_batch_size\":0,"
    "\"input\":["
    "{\"name\":\"KIND\",\"data_type\":\"TYPE_STRING\",\"dims\":[1]},"
    "{\"name\":\"DATA\",\"data_type\":\"TYPE_INT32\",\"dims\":[-1],"
    "\"optional\":true}],"
    "\"output\":["
    "{\"name\":\"CHECKS\",\"data_type\":\"TYPE_STRING\",\"dims\":[-1]},"
    "{\"name\":\"VALUES\",\"data_type\":\"TYPE_STRING\",\"dims\":[-1]},"
    "{\"name\":\"AUTO_OUT\",\"data_type\":\"TYPE_INT32\",\"dims\":[1]}],"
    "\"parameters\":{\"probe_param\":{\"string_value\":\"ignored\"}}}";

/* Valid JSON, but not a model configuration. */
static const char kNotAConfig[] = "{\"input\":7}";

static void
check_identity(conf_report* r, TRITONBACKEND_Model* model)
{
  const char* name = NULL;
  if (CONF_CHECK(r, TRITONBACKEND_ModelName, "good", model, &name)) {
    conf_value(r, "model.name", "%s", name);
  }
  CONF_CHECK(r, TRITONBACKEND_ModelName, "null_model", NULL, &name);
  CONF_CHECK(r, TRITONBACKEND_ModelName, "null_out", model, NULL);

  uint64_t version = 0;
  if (CONF_CHECK(r, TRITONBACKEND_ModelVersion, "good", model, &version)) {
    conf_value(r, "model.version", "%llu", (unsigned long long)version);
  }
  CONF_CHECK(r, TRITONBACKEND_ModelVersion, "null_model", NULL, &version);
  CONF_CHECK(r, TRITONBACKEND_ModelVersion, "null_out", model, NULL);

  TRITONBACKEND_ArtifactType type = (TRITONBACKEND_ArtifactType)7;
  const char* location = NULL;
  if (CONF_CHECK(
          r, TRITONBACKEND_ModelRepository, "good", model, &type, &location)) {
    conf_value(r, "model.repository.type", "%d", (int)type);
    conf_value(r, "model.repository.location", "%s", location);
  }
  CONF_CHECK(
      r, TRITONBACKEND_ModelRepository, "null_model", NULL, &type, &location);
  CONF_CHECK(r, TRITONBACKEND_ModelRepository, "null_out", model, &type, NULL);

  TRITONSERVER_Server* server = NULL;
  if (CONF_CHECK(r, TRITONBACKEND_ModelServer, "good", model, &server)) {
    conf_value(r, "model.server", "%s", server != NULL ? "set" : "null");
  }
  CONF_CHECK(r, TRITONBACKEND_ModelServer, "null_model", NULL, &server);
  CONF_CHECK(r, TRITONBACKEND_ModelServer, "null_out", model, NULL);

  TRITONBACKEND_Backend* backend = NULL;
  if (CONF_CHECK(r, TRITONBACKEND_ModelBackend, "good", model, &backend) &&
      TRITONBACKEND_BackendName(backend, &name) == NULL) {
    conf_value(r, "model.backend.name", "%s", name);
  }
  CONF_CHECK(r, TRITONBACKEND_ModelBackend, "null_model", NULL, &backend);
  CONF_CHECK(r, TRITONBACKEND_ModelBackend, "null_out", model, NULL);
}

/* Reads the configuration, records its fields under prefix and deletes
 * it, which is the caller's job (check "TRITONSERVER_MessageDelete
 * <prefix>"). */
static void
read_config(
    conf_report* r, TRITONBACKEND_Model* model, const char* kase,
    const char* prefix)
{
  TRITONSERVER_Message* config = NULL;
  if (CONF_CHECK(r, TRITONBACKEND_ModelConfig, kase, model, 1, &config)) {
    conf_config_values(r, prefix, config);
    CONF_CHECK(r, TRITONSERVER_MessageDelete, prefix, config);
  }
}

static void
check_config(conf_report* r, TRITONBACKEND_Model* model)
{
  TRITONSERVER_Message* config = NULL;
  read_config(r, model, "good", "config");
  CONF_CHECK(r, TRITONBACKEND_ModelConfig, "version_2", model, 2, &config);
  CONF_CHECK(r, TRITONBACKEND_ModelConfig, "null_model", NULL, 1, &config);
  CONF_CHECK(r, TRITONBACKEND_ModelConfig, "null_out", model, 1, NULL);

  bool auto_complete = false;
  if (CONF_CHECK(
          r, TRITONBACKEND_ModelAutoCompleteConfig, "good", model,
          &auto_complete)) {
    conf_value(
        r, "model.auto_complete", "%s", auto_complete ? "true" : "false");
  }
  CONF_CHECK(
      r, TRITONBACKEND_ModelAutoCompleteConfig, "null_model", NULL,
      &auto_complete);
  CONF_CHECK(r, TRITONBACKEND_ModelAutoCompleteConfig, "null_out", model, NULL);

  TRITONSERVER_Message* update = NULL;
  if (CONF_CHECK(
          r, TRITONSERVER_MessageNewFromSerializedJson, "auto_completed",
          &update, kAutoCompleted, strlen(kAutoCompleted))) {
    CONF_CHECK(r, TRITONBACKEND_ModelSetConfig, "version_2", model, 2, update);
    CONF_CHECK(r, TRITONBACKEND_ModelSetConfig, "null_model", NULL, 1, update);
    if (CONF_CHECK(
            r, TRITONBACKEND_ModelSetConfig, "auto_complete", model, 1,
            update)) {
      read_config(r, model, "after_set_config", "config_after_set");
    }
    CONF_CHECK(r, TRITONSERVER_MessageDelete, "auto_completed", update);
  }
  if (CONF_CHECK(
          r, TRITONSERVER_MessageNewFromSerializedJson, "not_a_config", &update,
          kNotAConfig, strlen(kNotAConfig))) {
    CONF_CHECK(
        r, TRITONBACKEND_ModelSetConfig, "not_a_config", model, 1, update);
    CONF_CHECK(r, TRITONSERVER_MessageDelete, "not_a_config", update);
  }
  CONF_CHECK(r, TRITONBACKEND_ModelSetConfig, "null_message", model, 1, NULL);
}

static void
check_state_and_memory(conf_report* r, TRITONBACKEND_Model* model, void* state)
{
  void* got = NULL;
  CONF_CHECK(r, TRITONBACKEND_ModelSetState, "good", model, state);
  if (CONF_CHECK(r, TRITONBACKEND_ModelState, "good", model, &got)) {
    conf_value(
        r, "model.state_round_trip", "%s", got == state ? "true" : "false");
  }
  CONF_CHECK(r, TRITONBACKEND_ModelSetState, "null_model", NULL, state);
  CONF_CHECK(r, TRITONBACKEND_ModelState, "null_model", NULL, &got);
  CONF_CHECK(r, TRITONBACKEND_ModelState, "null_out", model, NULL);

  TRITONSERVER_BufferAttributes* usage[2] = {NULL, NULL};
  if (TRITONSERVER_BufferAttributesNew(&usage[0]) != NULL) {
    return;
  }
  TRITONSERVER_ErrorDelete(
      TRITONSERVER_BufferAttributesSetByteSize(usage[0], 1000));
  CONF_CHECK(
      r, TRITONBACKEND_ModelReportMemoryUsage, "null_entry", model, usage, 2);
  CONF_CHECK(
      r, TRITONBACKEND_ModelReportMemoryUsage, "null_usage", model, NULL, 1);
  CONF_CHECK(
      r, TRITONBACKEND_ModelReportMemoryUsage, "null_model", NULL, usage, 1);
  CONF_CHECK(r, TRITONBACKEND_ModelReportMemoryUsage, "empty", model, NULL, 0);
  /* Last, so the report the statistics show is this one: 1000 CPU bytes. */
  CONF_CHECK(r, TRITONBACKEND_ModelReportMemoryUsage, "good", model, usage, 1);
  TRITONSERVER_ErrorDelete(TRITONSERVER_BufferAttributesDelete(usage[0]));
}

void
conf_check_model_after_load(
    conf_report* r, TRITONBACKEND_ModelInstance* instance)
{
  TRITONBACKEND_Model* model = NULL;
  TRITONSERVER_Message* update = NULL;
  if (TRITONBACKEND_ModelInstanceModel(instance, &model) != NULL ||
      TRITONSERVER_MessageNewFromSerializedJson(
          &update, kAutoCompleted, strlen(kAutoCompleted)) != NULL) {
    return;
  }
  CONF_CHECK(r, TRITONBACKEND_ModelSetConfig, "after_load", model, 1, update);
  TRITONSERVER_ErrorDelete(TRITONSERVER_MessageDelete(update));
  read_config(r, model, "after_load", "config_after_load");
}

void
conf_check_model(conf_report* report, TRITONBACKEND_Model* model, void* state)
{
  check_identity(report, model);
  check_config(report, model);
  check_state_and_memory(report, model, state);
}
