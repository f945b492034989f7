/*
 * identity_config.c: reads the model configuration of an identity model
 * and checks that the backend can serve it:
 *   - inputs are named INPUT<n> and outputs OUTPUT<n> (n decimal), as many
 *     outputs as inputs, and each OUTPUT<n> has an INPUT<n> with the same
 *     data_type and the same dims (reshape.shape where a reshape is given);
 *   - parameters execute_delay_ms and instance_wise_delay_multiplier, if
 *     given, are decimal numbers.
 * Fields absent from the JSON read as their protobuf defaults.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "identity.h"
#include "json.h"

/* Reads version 1 of the configuration and parses it into *root. */
static TRITONSERVER_Error*
read_config(TRITONBACKEND_Model* model, thost_json_value** root)
{
  TRITONSERVER_Message* message = NULL;
  const char* text = NULL;
  size_t size = 0;
  thost_json_error jerr;
  RETURN_IF_ERROR(TRITONBACKEND_ModelConfig(model, 1, &message));
  TRITONSERVER_Error* err =
      TRITONSERVER_MessageSerializeToJson(message, &text, &size);
  if (err == NULL) {
    IDENTITY_LOG(
        TRITONSERVER_LOG_INFO, "model configuration:\n%.*s", (int)size, text);
    if (thost_json_parse(text, size, root, &jerr) != THOST_JSON_OK) {
      err = identity_error(
          TRITONSERVER_ERROR_INTERNAL,
          "model configuration is not valid JSON: %s at line %zu, column %zu",
          jerr.message, jerr.line, jerr.column);
    }
  }
  /* The text belongs to the message; we are done with both. */
  IDENTITY_LOG_IF_ERROR(
      TRITONSERVER_MessageDelete(message), "failed to delete model config");
  return err;
}

static TRITONSERVER_Error*
type_error(const char* path, const char* want, const thost_json_value* v)
{
  return identity_error(
      TRITONSERVER_ERROR_INVALID_ARG,
      "model configuration field '%s' must be %s, got %s", path, want,
      thost_json_type_name(v->type));
}

/* obj[key] as a string; "" when absent. */
static TRITONSERVER_Error*
get_string(const thost_json_value* obj, const char* key, const char** out)
{
  const thost_json_value* v = thost_json_find(obj, key);
  *out = "";
  if (v != NULL && thost_json_as_string(v, out, NULL) != THOST_JSON_OK) {
    return type_error(key, "a string", v);
  }
  return NULL;
}

/* The tensor's dims, or reshape.shape when it has a reshape; an array of
 * integers (NULL stands for the empty array). */
static TRITONSERVER_Error*
get_shape(const thost_json_value* tensor, const thost_json_value** out)
{
  const thost_json_value* reshape = thost_json_find(tensor, "reshape");
  const thost_json_value* dims = (reshape != NULL)
                                     ? thost_json_find(reshape, "shape")
                                     : thost_json_find(tensor, "dims");
  const char* path = (reshape != NULL) ? "reshape.shape" : "dims";
  int64_t d;
  *out = dims;
  if (dims == NULL) {
    return NULL;
  }
  if (dims->type != THOST_JSON_ARRAY) {
    return type_error(path, "an array of integers", dims);
  }
  for (size_t i = 0; i < thost_json_count(dims); i++) {
    const thost_json_value* v = thost_json_index(dims, i);
    if (thost_json_as_int64(v, &d) != THOST_JSON_OK) {
      return type_error(path, "an array of integers", v);
    }
  }
  return NULL;
}

static bool
shapes_equal(const thost_json_value* a, const thost_json_value* b)
{
  if (thost_json_count(a) != thost_json_count(b)) {
    return false;
  }
  for (size_t i = 0; i < thost_json_count(a); i++) {
    if (thost_json_index(a, i)->u.integer !=
        thost_json_index(b, i)->u.integer) {
      return false;
    }
  }
  return true;
}

/* "[d0,d1,...]" into buf (truncated to fit). */
static const char*
shape_string(const thost_json_value* shape, char* buf, size_t size)
{
  size_t used = (size_t)snprintf(buf, size, "[");
  for (size_t i = 0; i < thost_json_count(shape) && used < size; i++) {
    used += (size_t)snprintf(
        buf + used, size - used, "%s%lld", (i > 0) ? "," : "",
        (long long)thost_json_index(shape, i)->u.integer);
  }
  if (used < size) {
    snprintf(buf + used, size - used, "]");
  }
  return buf;
}

/* The name of tensor 'index' of 'list' if it is <prefix><decimal digits>;
 * *suffix then points at the digits. */
static TRITONSERVER_Error*
tensor_name(
    const thost_json_value* list, size_t index, const char* prefix,
    const char** name, const char** suffix)
{
  const thost_json_value* tensor = thost_json_index(list, index);
  if (tensor->type != THOST_JSON_OBJECT) {
    return type_error(
        prefix[0] == 'I' ? "input" : "output", "an array of objects", tensor);
  }
  RETURN_IF_ERROR(get_string(tensor, "name", name));
  size_t n = strlen(prefix);
  const char* digits = *name + n;
  bool ok = strncmp(*name, prefix, n) == 0 && *digits != '\0';
  for (const char* c = digits; ok && *c != '\0'; c++) {
    ok = (*c >= '0' && *c <= '9');
  }
  if (!ok) {
    return identity_error(
        TRITONSERVER_ERROR_INVALID_ARG,
        "identity backend: expected %s name to follow the %s<index> pattern, "
        "got '%s'",
        prefix[0] == 'I' ? "input" : "output", prefix, *name);
  }
  *suffix = digits;
  return NULL;
}

/* Checks that OUTPUT<n> (outputs[o]) has an INPUT<n> with the same data
 * type and shape. */
static TRITONSERVER_Error*
check_pair(
    const thost_json_value* inputs, const thost_json_value* outputs, size_t o)
{
  const char *out_name, *out_index, *in_name, *in_index;
  const char *out_type, *in_type;
  const thost_json_value *out_shape, *in_shape;
  char a[128], b[128];
  const thost_json_value* output = thost_json_index(outputs, o);
  RETURN_IF_ERROR(tensor_name(outputs, o, "OUTPUT", &out_name, &out_index));
  RETURN_IF_ERROR(get_string(output, "data_type", &out_type));
  RETURN_IF_ERROR(get_shape(output, &out_shape));
  for (size_t i = 0; i < thost_json_count(inputs); i++) {
    const thost_json_value* input = thost_json_index(inputs, i);
    RETURN_IF_ERROR(tensor_name(inputs, i, "INPUT", &in_name, &in_index));
    if (strcmp(in_index, out_index) != 0) {
      continue;
    }
    RETURN_IF_ERROR(get_string(input, "data_type", &in_type));
    RETURN_IF_ERROR(get_shape(input, &in_shape));
    if (strcmp(in_type, out_type) != 0) {
      return identity_error(
          TRITONSERVER_ERROR_INVALID_ARG,
          "identity backend: expected %s and %s data types to match, got "
          "'%s' and '%s'",
          in_name, out_name, in_type, out_type);
    }
    if (!shapes_equal(in_shape, out_shape)) {
      return identity_error(
          TRITONSERVER_ERROR_INVALID_ARG,
          "identity backend: expected %s and %s shapes to match, got %s and "
          "%s",
          in_name, out_name, shape_string(in_shape, a, sizeof(a)),
          shape_string(out_shape, b, sizeof(b)));
    }
    return NULL;
  }
  return identity_error(
      TRITONSERVER_ERROR_INVALID_ARG,
      "identity backend: output '%s' has no matching input 'INPUT%s'",
      out_name, out_index);
}

static TRITONSERVER_Error*
validate_tensors(const thost_json_value* root)
{
  const thost_json_value* inputs = thost_json_find(root, "input");
  const thost_json_value* outputs = thost_json_find(root, "output");
  const char *name, *index;
  if (inputs != NULL && inputs->type != THOST_JSON_ARRAY) {
    return type_error("input", "an array", inputs);
  }
  if (outputs != NULL && outputs->type != THOST_JSON_ARRAY) {
    return type_error("output", "an array", outputs);
  }
  if (thost_json_count(inputs) != thost_json_count(outputs)) {
    return identity_error(
        TRITONSERVER_ERROR_INVALID_ARG,
        "identity backend: model configuration must have equal input/output "
        "pairs, got %zu inputs and %zu outputs",
        thost_json_count(inputs), thost_json_count(outputs));
  }
  for (size_t i = 0; i < thost_json_count(inputs); i++) {
    RETURN_IF_ERROR(tensor_name(inputs, i, "INPUT", &name, &index));
  }
  for (size_t o = 0; o < thost_json_count(outputs); o++) {
    RETURN_IF_ERROR(check_pair(inputs, outputs, o));
  }
  return NULL;
}

/* parameters.<key>.string_value as a decimal uint64; *out untouched when
 * the parameter is absent. */
static TRITONSERVER_Error*
get_decimal_parameter(
    const thost_json_value* root, const char* key, uint64_t* out)
{
  const thost_json_value* param =
      thost_json_find(thost_json_find(root, "parameters"), key);
  const char* s = NULL;
  uint64_t v = 0;
  if (param == NULL) {
    return NULL;
  }
  bool ok = thost_json_as_string(thost_json_find(param, "string_value"), &s,
                                 NULL) == THOST_JSON_OK &&
            *s != '\0';
  for (const char* c = s; ok && *c != '\0'; c++) {
    ok = (*c >= '0' && *c <= '9') &&
         v <= (UINT64_MAX - (uint64_t)(*c - '0')) / 10;
    v = v * 10 + (uint64_t)(*c - '0');
  }
  if (!ok) {
    return identity_error(
        TRITONSERVER_ERROR_INVALID_ARG,
        "identity backend: parameter '%s' must be a string_value of decimal "
        "digits",
        key);
  }
  *out = v;
  return NULL;
}

static TRITONSERVER_Error*
fill_model(identity_model* m, TRITONBACKEND_Model* model)
{
  const char* name = NULL;
  thost_json_value* root = NULL;
  RETURN_IF_ERROR(TRITONBACKEND_ModelName(model, &name));
  RETURN_IF_ERROR(TRITONBACKEND_ModelVersion(model, &m->version));
  m->name = identity_strdup(name);
  if (m->name == NULL) {
    return identity_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  }
  IDENTITY_LOG(
      TRITONSERVER_LOG_INFO, "TRITONBACKEND_ModelInitialize: %s (version %llu)",
      m->name, (unsigned long long)m->version);

  RETURN_IF_ERROR(read_config(model, &root));
  const thost_json_value* mbs = thost_json_find(root, "max_batch_size");
  TRITONSERVER_Error* err = NULL;
  if (mbs != NULL &&
      thost_json_as_int64(mbs, &m->max_batch_size) != THOST_JSON_OK) {
    err = type_error("max_batch_size", "an integer", mbs);
  }
  if (err == NULL) {
    err = validate_tensors(root);
  }
  if (err == NULL) {
    err = get_decimal_parameter(root, "execute_delay_ms", &m->execute_delay_ms);
  }
  if (err == NULL) {
    err = get_decimal_parameter(
        root, "instance_wise_delay_multiplier", &m->delay_multiplier);
  }
  thost_json_free(root);
  return err;
}

TRITONSERVER_Error*
identity_model_new(TRITONBACKEND_Model* model, identity_model** out)
{
  identity_model* m = calloc(1, sizeof(*m));
  if (m == NULL) {
    return identity_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  }
  TRITONSERVER_Error* err = fill_model(m, model);
  if (err != NULL) {
    identity_model_delete(m);
    return err;
  }
  *out = m;
  return NULL;
}

void
identity_model_delete(identity_model* model)
{
  if (model != NULL) {
    free(model->name);
    free(model);
  }
}
