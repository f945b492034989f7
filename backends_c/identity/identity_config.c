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

#include "cJSON.h"
#include "identity.h"
#include "json_int64.h"

/* Parses text[0, size) into *root; on failure, an error naming the line
 * and column (1-based, in bytes) where cJSON stopped. */
static TRITONSERVER_Error*
parse_config(const char* text, size_t size, cJSON** root)
{
  const char* end = NULL;
  size_t line = 1, column = 1;
  *root = cJSON_ParseWithLengthOpts(text, size, &end, false);
  if (*root != NULL) {
    return NULL;
  }
  for (const char* c = text; end != NULL && c < end && c < text + size; c++) {
    if (*c == '\n') {
      line++;
      column = 1;
    } else {
      column++;
    }
  }
  return identity_error(
      TRITONSERVER_ERROR_INTERNAL,
      "model configuration is not valid JSON: syntax error at line %zu, "
      "column %zu",
      line, column);
}

/* Reads version 1 of the configuration and parses it into *root. */
static TRITONSERVER_Error*
read_config(TRITONBACKEND_Model* model, cJSON** root)
{
  TRITONSERVER_Message* message = NULL;
  const char* text = NULL;
  size_t size = 0;
  RETURN_IF_ERROR(TRITONBACKEND_ModelConfig(model, 1, &message));
  TRITONSERVER_Error* err =
      TRITONSERVER_MessageSerializeToJson(message, &text, &size);
  if (err == NULL) {
    IDENTITY_LOG(
        TRITONSERVER_LOG_INFO, "model configuration:\n%.*s", (int)size, text);
    err = parse_config(text, size, root);
  }
  /* The text belongs to the message; we are done with both. */
  IDENTITY_LOG_IF_ERROR(
      TRITONSERVER_MessageDelete(message), "failed to delete model config");
  return err;
}

/* The JSON type of v as configuration errors name it. */
static const char*
type_name(const cJSON* v)
{
  int64_t i;
  if (cJSON_IsNull(v)) {
    return "null";
  }
  if (cJSON_IsBool(v)) {
    return "bool";
  }
  if (cJSON_IsNumber(v)) {
    return json_int64(v, &i) ? "integer" : "number";
  }
  if (cJSON_IsString(v)) {
    return "string";
  }
  if (cJSON_IsArray(v)) {
    return "array";
  }
  return cJSON_IsObject(v) ? "object" : "<invalid>";
}

static TRITONSERVER_Error*
type_error(const char* path, const char* want, const cJSON* v)
{
  return identity_error(
      TRITONSERVER_ERROR_INVALID_ARG,
      "model configuration field '%s' must be %s, got %s", path, want,
      type_name(v));
}

/* The member 'key' of obj; NULL when absent or when obj is no object. */
static const cJSON*
find(const cJSON* obj, const char* key)
{
  return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* obj[key] as a string; "" when absent. */
static TRITONSERVER_Error*
get_string(const cJSON* obj, const char* key, const char** out)
{
  const cJSON* v = find(obj, key);
  *out = "";
  if (v == NULL) {
    return NULL;
  }
  if (!cJSON_IsString(v)) {
    return type_error(key, "a string", v);
  }
  *out = v->valuestring;
  return NULL;
}

/* Element i of an array of integers that get_shape has checked. */
static int64_t
dim_at(const cJSON* shape, size_t i)
{
  int64_t d = 0;
  json_int64(cJSON_GetArrayItem(shape, (int)i), &d);
  return d;
}

/* The tensor's dims, or reshape.shape when it has a reshape; an array of
 * integers (NULL stands for the empty array). */
static TRITONSERVER_Error*
get_shape(const cJSON* tensor, const cJSON** out)
{
  const cJSON* reshape = find(tensor, "reshape");
  const cJSON* dims =
      (reshape != NULL) ? find(reshape, "shape") : find(tensor, "dims");
  const char* path = (reshape != NULL) ? "reshape.shape" : "dims";
  int64_t d;
  *out = dims;
  if (dims == NULL) {
    return NULL;
  }
  if (!cJSON_IsArray(dims)) {
    return type_error(path, "an array of integers", dims);
  }
  for (const cJSON* v = dims->child; v != NULL; v = v->next) {
    if (!json_int64(v, &d)) {
      return type_error(path, "an array of integers", v);
    }
  }
  return NULL;
}

static bool
shapes_equal(const cJSON* a, const cJSON* b)
{
  const size_t n = (size_t)cJSON_GetArraySize(a);
  if (n != (size_t)cJSON_GetArraySize(b)) {
    return false;
  }
  for (size_t i = 0; i < n; i++) {
    if (dim_at(a, i) != dim_at(b, i)) {
      return false;
    }
  }
  return true;
}

/* "[d0,d1,...]" into buf (truncated to fit). */
static const char*
shape_string(const cJSON* shape, char* buf, size_t size)
{
  const size_t n = (size_t)cJSON_GetArraySize(shape);
  size_t used = (size_t)snprintf(buf, size, "[");
  for (size_t i = 0; i < n && used < size; i++) {
    used += (size_t)snprintf(
        buf + used, size - used, "%s%lld", (i > 0) ? "," : "",
        (long long)dim_at(shape, i));
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
    const cJSON* list, size_t index, const char* prefix, const char** name,
    const char** suffix)
{
  const cJSON* tensor = cJSON_GetArrayItem(list, (int)index);
  if (!cJSON_IsObject(tensor)) {
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
check_pair(const cJSON* inputs, const cJSON* outputs, size_t o)
{
  const char *out_name, *out_index, *in_name, *in_index;
  const char *out_type, *in_type;
  const cJSON *out_shape, *in_shape;
  char a[128], b[128];
  const cJSON* output = cJSON_GetArrayItem(outputs, (int)o);
  RETURN_IF_ERROR(tensor_name(outputs, o, "OUTPUT", &out_name, &out_index));
  RETURN_IF_ERROR(get_string(output, "data_type", &out_type));
  RETURN_IF_ERROR(get_shape(output, &out_shape));
  for (size_t i = 0; i < (size_t)cJSON_GetArraySize(inputs); i++) {
    const cJSON* input = cJSON_GetArrayItem(inputs, (int)i);
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
      "identity backend: output '%s' has no matching input 'INPUT%s'", out_name,
      out_index);
}

static TRITONSERVER_Error*
validate_tensors(const cJSON* root)
{
  const cJSON* inputs = find(root, "input");
  const cJSON* outputs = find(root, "output");
  const char *name, *index;
  if (inputs != NULL && !cJSON_IsArray(inputs)) {
    return type_error("input", "an array", inputs);
  }
  if (outputs != NULL && !cJSON_IsArray(outputs)) {
    return type_error("output", "an array", outputs);
  }
  /* cJSON_GetArraySize counts 0 for NULL. */
  const size_t n_inputs = (size_t)cJSON_GetArraySize(inputs);
  const size_t n_outputs = (size_t)cJSON_GetArraySize(outputs);
  if (n_inputs != n_outputs) {
    return identity_error(
        TRITONSERVER_ERROR_INVALID_ARG,
        "identity backend: model configuration must have equal input/output "
        "pairs, got %zu inputs and %zu outputs",
        n_inputs, n_outputs);
  }
  for (size_t i = 0; i < n_inputs; i++) {
    RETURN_IF_ERROR(tensor_name(inputs, i, "INPUT", &name, &index));
  }
  for (size_t o = 0; o < n_outputs; o++) {
    RETURN_IF_ERROR(check_pair(inputs, outputs, o));
  }
  return NULL;
}

/* parameters.<key>.string_value as a decimal uint64; *out untouched when
 * the parameter is absent. */
static TRITONSERVER_Error*
get_decimal_parameter(const cJSON* root, const char* key, uint64_t* out)
{
  const cJSON* param = find(find(root, "parameters"), key);
  const char* s = cJSON_GetStringValue(find(param, "string_value"));
  uint64_t v = 0;
  if (param == NULL) {
    return NULL;
  }
  bool ok = s != NULL && *s != '\0';
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
  cJSON* root = NULL;
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
  const cJSON* mbs = find(root, "max_batch_size");
  TRITONSERVER_Error* err = NULL;
  if (mbs != NULL && !json_int64(mbs, &m->max_batch_size)) {
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
  cJSON_Delete(root);
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
