/*
 * checks_config.c: reads a model configuration message with the project's
 * JSON parser and records the fields a test compares, as values
 * "<prefix>.<field>=<value>".
 */
#include <stdio.h>
#include <string.h>

#include "conformance.h"
#include "json.h"

/* Writes a JSON scalar as text: strings bare, numbers and booleans as
 * themselves, arrays of numbers as "a,b,c". */
static void
scalar_text(const thost_json_value* v, char* buf, size_t size)
{
  const char* s = NULL;
  int64_t i = 0;
  bool b = false;
  double d = 0;
  if (thost_json_as_string(v, &s, NULL) == THOST_JSON_OK) {
    snprintf(buf, size, "%s", s);
  } else if (thost_json_as_int64(v, &i) == THOST_JSON_OK) {
    snprintf(buf, size, "%lld", (long long)i);
  } else if (thost_json_as_bool(v, &b) == THOST_JSON_OK) {
    snprintf(buf, size, "%s", b ? "true" : "false");
  } else if (thost_json_as_double(v, &d) == THOST_JSON_OK) {
    snprintf(buf, size, "%g", d);
  } else if (v != NULL && v->type == THOST_JSON_ARRAY) {
    size_t used = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < thost_json_count(v) && used < size; k++) {
      if (thost_json_as_int64(thost_json_index(v, k), &i) != THOST_JSON_OK) {
        snprintf(buf, size, "(not an array of integers)");
        return;
      }
      used += (size_t)snprintf(
          buf + used, size - used, "%s%lld", k ? "," : "", (long long)i);
    }
  } else {
    snprintf(buf, size, "%s", v == NULL ? "(absent)" : "(not a scalar)");
  }
}

static void
field(
    conf_report* r, const char* prefix, const char* name,
    const thost_json_value* v)
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
    conf_report* r, const char* prefix, const char* member,
    const thost_json_value* root)
{
  static const char* const fields[] = {"name", "data_type", "dims", "optional"};
  const size_t nfields = strcmp(member, "input") == 0 ? 4 : 3;
  const thost_json_value* list = thost_json_find(root, member);
  char key[128];
  snprintf(key, sizeof(key), "%s.%s.count", prefix, member);
  conf_value(r, key, "%zu", thost_json_count(list));
  for (size_t i = 0; i < thost_json_count(list); i++) {
    const thost_json_value* t = thost_json_index(list, i);
    for (size_t f = 0; f < nfields; f++) {
      snprintf(key, sizeof(key), "%s.%zu.%s", member, i, fields[f]);
      field(r, prefix, key, thost_json_find(t, fields[f]));
    }
  }
}

bool
conf_config_values(
    conf_report* r, const char* prefix, TRITONSERVER_Message* config)
{
  const char* json = NULL;
  size_t size = 0;
  thost_json_value* root = NULL;
  if (TRITONSERVER_MessageSerializeToJson(config, &json, &size) != NULL ||
      thost_json_parse(json, size, &root, NULL) != THOST_JSON_OK) {
    char key[96];
    snprintf(key, sizeof(key), "%s.parse", prefix);
    conf_value(r, key, "failed");
    return false;
  }
  field(r, prefix, "name", thost_json_find(root, "name"));
  field(r, prefix, "backend", thost_json_find(root, "backend"));
  field(r, prefix, "max_batch_size", thost_json_find(root, "max_batch_size"));
  field(
      r, prefix, "decoupled",
      thost_json_find(
          thost_json_find(root, "model_transaction_policy"), "decoupled"));
  field(
      r, prefix, "parameters.probe_param",
      thost_json_find(
          thost_json_find(thost_json_find(root, "parameters"), "probe_param"),
          "string_value"));
  const thost_json_value* group =
      thost_json_index(thost_json_find(root, "instance_group"), 0);
  field(r, prefix, "instance_group.0.name", thost_json_find(group, "name"));
  field(r, prefix, "instance_group.0.kind", thost_json_find(group, "kind"));
  field(r, prefix, "instance_group.0.count", thost_json_find(group, "count"));
  field(r, prefix, "batch_input", thost_json_find(root, "batch_input"));
  field(
      r, prefix, "default_model_filename",
      thost_json_find(root, "default_model_filename"));
  tensors(r, prefix, "input", root);
  tensors(r, prefix, "output", root);
  thost_json_free(root);
  return true;
}
