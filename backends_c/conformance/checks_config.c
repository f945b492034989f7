/*
 * checks_config.c: reads a model configuration message with cJSON and
 * records the fields a test compares, as values "<prefix>.<field>=<value>".
 */
#include <stdio.h>
#include <string.h>

#include "cJSON.h"
#include "conformance.h"
#include "json_int64.h"

/* The member 'key' of obj; NULL when absent or when obj is no object. */
static const cJSON*
find(const cJSON* obj, const char* key)
{
  return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* Writes a JSON scalar as text: strings bare, numbers and booleans as
 * themselves, arrays of numbers as "a,b,c". */
static void
scalar_text(const cJSON* v, char* buf, size_t size)
{
  int64_t i = 0;
  if (cJSON_IsString(v)) {
    snprintf(buf, size, "%s", v->valuestring);
  } else if (json_int64(v, &i)) {
    snprintf(buf, size, "%lld", (long long)i);
  } else if (cJSON_IsBool(v)) {
    snprintf(buf, size, "%s", cJSON_IsTrue(v) ? "true" : "false");
  } else if (cJSON_IsNumber(v)) {
    snprintf(buf, size, "%g", v->valuedouble);
  } else if (cJSON_IsArray(v)) {
    size_t used = 0;
    buf[0] = '\0';
    for (const cJSON* e = v->child; e != NULL && used < size; e = e->next) {
      if (!json_int64(e, &i)) {
        snprintf(buf, size, "(not an array of integers)");
        return;
      }
      used += (size_t)snprintf(
          buf + used, size - used, "%s%lld", (e != v->child) ? "," : "",
          (long long)i);
    }
  } else {
    snprintf(buf, size, "%s", v == NULL ? "(absent)" : "(not a scalar)");
  }
}

static void
field(conf_report* r, const char* prefix, const char* name, const cJSON* v)
{
  char key[256], text[256];
  snprintf(key, sizeof(key), "%s.%s", prefix, name);
  scalar_text(v, text, sizeof(text));
  conf_value(r, key, "%s", text);
}

/* Records name, data_type, dims (and optional for inputs) of each tensor
 * of an "input" or "output" array, and their count. */
static void
tensors(
    conf_report* r, const char* prefix, const char* member, const cJSON* root)
{
  static const char* const fields[] = {"name", "data_type", "dims", "optional"};
  const size_t nfields = strcmp(member, "input") == 0 ? 4 : 3;
  const cJSON* list = find(root, member);
  char key[128];
  snprintf(key, sizeof(key), "%s.%s.count", prefix, member);
  conf_value(r, key, "%d", cJSON_GetArraySize(list));
  size_t i = 0;
  for (const cJSON* t = cJSON_IsArray(list) ? list->child : NULL; t != NULL;
       t = t->next, i++) {
    for (size_t f = 0; f < nfields; f++) {
      snprintf(key, sizeof(key), "%s.%zu.%s", member, i, fields[f]);
      field(r, prefix, key, find(t, fields[f]));
    }
  }
}

bool
conf_config_values(
    conf_report* r, const char* prefix, TRITONSERVER_Message* config)
{
  const char* json = NULL;
  size_t size = 0;
  cJSON* root = NULL;
  if (TRITONSERVER_MessageSerializeToJson(config, &json, &size) != NULL ||
      (root = cJSON_ParseWithLength(json, size)) == NULL) {
    char key[96];
    snprintf(key, sizeof(key), "%s.parse", prefix);
    conf_value(r, key, "failed");
    return false;
  }
  field(r, prefix, "name", find(root, "name"));
  field(r, prefix, "backend", find(root, "backend"));
  field(r, prefix, "max_batch_size", find(root, "max_batch_size"));
  field(
      r, prefix, "decoupled",
      find(find(root, "model_transaction_policy"), "decoupled"));
  field(
      r, prefix, "parameters.probe_param",
      find(find(find(root, "parameters"), "probe_param"), "string_value"));
  const cJSON* groups = find(root, "instance_group");
  const cJSON* group = cJSON_IsArray(groups) ? groups->child : NULL;
  field(r, prefix, "instance_group.0.name", find(group, "name"));
  field(r, prefix, "instance_group.0.kind", find(group, "kind"));
  field(r, prefix, "instance_group.0.count", find(group, "count"));
  field(r, prefix, "batch_input", find(root, "batch_input"));
  field(
      r, prefix, "default_model_filename",
      find(root, "default_model_filename"));
  tensors(r, prefix, "input", root);
  tensors(r, prefix, "output", root);
  cJSON_Delete(root);
  return true;
}
