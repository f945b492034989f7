/*
 * checks_instance.c: the model instance handle. Run from
 * TRITONBACKEND_ModelInstanceInitialize.
 */
#include <stdio.h>

#include "conformance.h"

static void
check_identity(conf_report* r, TRITONBACKEND_ModelInstance* inst)
{
  const char* name = NULL;
  if (CONF_CHECK(r, TRITONBACKEND_ModelInstanceName, "good", inst, &name)) {
    conf_value(r, "instance.name", "%s", name);
  }
  CONF_CHECK(r, TRITONBACKEND_ModelInstanceName, "null_instance", NULL, &name);
  CONF_CHECK(r, TRITONBACKEND_ModelInstanceName, "null_out", inst, NULL);

  TRITONSERVER_InstanceGroupKind kind = TRITONSERVER_INSTANCEGROUPKIND_AUTO;
  if (CONF_CHECK(r, TRITONBACKEND_ModelInstanceKind, "good", inst, &kind)) {
    conf_value(
        r, "instance.kind", "%s", TRITONSERVER_InstanceGroupKindString(kind));
  }
  CONF_CHECK(r, TRITONBACKEND_ModelInstanceKind, "null_instance", NULL, &kind);
  CONF_CHECK(r, TRITONBACKEND_ModelInstanceKind, "null_out", inst, NULL);

  int32_t device = -1;
  if (CONF_CHECK(
          r, TRITONBACKEND_ModelInstanceDeviceId, "good", inst, &device)) {
    conf_value(r, "instance.device_id", "%d", (int)device);
  }
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceDeviceId, "null_instance", NULL, &device);
  CONF_CHECK(r, TRITONBACKEND_ModelInstanceDeviceId, "null_out", inst, NULL);

  bool passive = true;
  if (CONF_CHECK(
          r, TRITONBACKEND_ModelInstanceIsPassive, "good", inst, &passive)) {
    conf_value(r, "instance.passive", "%s", passive ? "true" : "false");
  }
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceIsPassive, "null_instance", NULL, &passive);
  CONF_CHECK(r, TRITONBACKEND_ModelInstanceIsPassive, "null_out", inst, NULL);

  TRITONBACKEND_Model* model = NULL;
  if (CONF_CHECK(r, TRITONBACKEND_ModelInstanceModel, "good", inst, &model) &&
      TRITONBACKEND_ModelName(model, &name) == NULL) {
    conf_value(r, "instance.model.name", "%s", name);
  }
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceModel, "null_instance", NULL, &model);
  CONF_CHECK(r, TRITONBACKEND_ModelInstanceModel, "null_out", inst, NULL);
}

static void
check_host_policy(conf_report* r, TRITONBACKEND_ModelInstance* inst)
{
  TRITONSERVER_Message* policy = NULL;
  const char* json = NULL;
  size_t size = 0;
  if (CONF_CHECK(
          r, TRITONBACKEND_ModelInstanceHostPolicy, "good", inst, &policy)) {
    if (TRITONSERVER_MessageSerializeToJson(policy, &json, &size) == NULL) {
      conf_value(r, "instance.host_policy", "%.*s", (int)size, json);
    }
    /* Host-owned: the host must refuse to delete it. */
    CONF_CHECK(r, TRITONSERVER_MessageDelete, "host_policy", policy);
  }
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceHostPolicy, "null_instance", NULL, &policy);
  CONF_CHECK(r, TRITONBACKEND_ModelInstanceHostPolicy, "null_out", inst, NULL);
}

static void
check_devices(conf_report* r, TRITONBACKEND_ModelInstance* inst)
{
  uint32_t count = 99;
  if (CONF_CHECK(
          r, TRITONBACKEND_ModelInstanceProfileCount, "good", inst, &count)) {
    conf_value(r, "instance.profile_count", "%u", count);
  }
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceProfileCount, "null_instance", NULL,
      &count);
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceProfileCount, "null_out", inst, NULL);
  const char* profile = NULL;
  /* Profiles exist only for TensorRT models; with none, index 0 is out of
   * range and "good" is not checked. */
  if (count > 0 && CONF_CHECK(
                       r, TRITONBACKEND_ModelInstanceProfileName, "good", inst,
                       0, &profile)) {
    conf_value(r, "instance.profile.0", "%s", profile);
  }
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceProfileName, "out_of_range", inst, count,
      &profile);
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceProfileName, "null_instance", NULL, 0,
      &profile);
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceProfileName, "null_out", inst, 0, NULL);

  if (CONF_CHECK(
          r, TRITONBACKEND_ModelInstanceSecondaryDeviceCount, "good", inst,
          &count)) {
    conf_value(r, "instance.secondary_device_count", "%u", count);
  }
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceSecondaryDeviceCount, "null_instance", NULL,
      &count);
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceSecondaryDeviceCount, "null_out", inst,
      NULL);
  const char* kind = NULL;
  int64_t id = 0;
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceSecondaryDeviceProperties, "out_of_range",
      inst, 0, &kind, &id);
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceSecondaryDeviceProperties, "null_instance",
      NULL, 0, &kind, &id);
}

static void
check_state_and_memory(
    conf_report* r, TRITONBACKEND_ModelInstance* inst, void* state)
{
  void* got = NULL;
  CONF_CHECK(r, TRITONBACKEND_ModelInstanceSetState, "good", inst, state);
  if (CONF_CHECK(r, TRITONBACKEND_ModelInstanceState, "good", inst, &got)) {
    conf_value(
        r, "instance.state_round_trip", "%s", got == state ? "true" : "false");
  }
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceSetState, "null_instance", NULL, state);
  CONF_CHECK(r, TRITONBACKEND_ModelInstanceState, "null_instance", NULL, &got);
  CONF_CHECK(r, TRITONBACKEND_ModelInstanceState, "null_out", inst, NULL);

  TRITONSERVER_BufferAttributes* usage[2] = {NULL, NULL};
  if (TRITONSERVER_BufferAttributesNew(&usage[0]) != NULL) {
    return;
  }
  TRITONSERVER_ErrorDelete(
      TRITONSERVER_BufferAttributesSetByteSize(usage[0], 24));
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceReportMemoryUsage, "null_entry", inst,
      usage, 2);
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceReportMemoryUsage, "null_instance", NULL,
      usage, 1);
  CONF_CHECK(
      r, TRITONBACKEND_ModelInstanceReportMemoryUsage, "good", inst, usage, 1);
  TRITONSERVER_ErrorDelete(TRITONSERVER_BufferAttributesDelete(usage[0]));
}

void
conf_check_instance(
    conf_report* report, TRITONBACKEND_ModelInstance* instance, void* state)
{
  check_identity(report, instance);
  check_host_policy(report, instance);
  check_devices(report, instance);
  check_state_and_memory(report, instance, state);
}
