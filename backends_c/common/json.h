/*
 * json.h: a small, strict JSON (RFC 8259) DOM parser in C11.
 *
 * Backends use it to read the model configuration that the host hands out
 * through TRITONBACKEND_ModelConfig + TRITONSERVER_MessageSerializeToJson.
 *
 * Strict means: no comments, no trailing commas, no single quotes, no
 * leading zeros, no NaN/Infinity, no control characters inside strings,
 * only the escapes RFC 8259 lists, \u surrogates must pair up, and raw
 * bytes must be well-formed UTF-8. Two liberties, both documented below:
 * integers that do not fit int64 become doubles, and a NUL byte after the
 * root value ends the text (so a length that counts the terminator works).
 *
 * Numbers with a fraction or exponent are converted with strtod, which
 * reads the C locale's decimal point: the default, unless something in the
 * process calls setlocale(LC_NUMERIC, ...).
 *
 * Ownership: thost_json_parse returns a tree the caller frees with
 * thost_json_free. Every pointer obtained from the tree (values, keys,
 * string bytes) lives until that call. The tree is immutable after parsing,
 * so any number of threads may read it at once.
 */
#ifndef TRITONHOST_BACKENDS_COMMON_JSON_H
#define TRITONHOST_BACKENDS_COMMON_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Nesting deeper than this is refused (protects the parser's stack). */
#define THOST_JSON_MAX_DEPTH 256

typedef enum thost_json_type {
  THOST_JSON_NULL = 0,
  THOST_JSON_BOOL,
  THOST_JSON_INT,    /* integer literal that fits int64_t */
  THOST_JSON_DOUBLE, /* fraction, exponent, or an integer too big for int64 */
  THOST_JSON_STRING,
  THOST_JSON_ARRAY,
  THOST_JSON_OBJECT
} thost_json_type;

typedef enum thost_json_status {
  THOST_JSON_OK = 0,
  THOST_JSON_ERR_SYNTAX,    /* the text is not valid JSON */
  THOST_JSON_ERR_DEPTH,     /* nesting deeper than THOST_JSON_MAX_DEPTH */
  THOST_JSON_ERR_NOMEM,     /* an allocation failed */
  THOST_JSON_ERR_NOT_FOUND, /* lookup: value absent (NULL) */
  THOST_JSON_ERR_TYPE       /* lookup: value has another type */
} thost_json_status;

typedef struct thost_json_value thost_json_value;
typedef struct thost_json_member thost_json_member;

/* Decoded string: NUL-terminated; len excludes the terminator and may be
 * larger than strlen(data) if the text contained \u0000. */
typedef struct thost_json_string {
  char* data;
  size_t len;
} thost_json_string;

struct thost_json_value {
  thost_json_type type;
  union {
    bool boolean;
    int64_t integer;
    double number;
    thost_json_string string;
    struct {
      thost_json_value* items;
      size_t count;
    } array;
    struct {
      thost_json_member* members; /* in document order, duplicates kept */
      size_t count;
    } object;
  } u;
};

struct thost_json_member {
  thost_json_string key;
  thost_json_value value;
};

/* Where and why parsing failed. offset is a byte offset into the text,
 * line and column are 1-based (column counts bytes). */
typedef struct thost_json_error {
  thost_json_status status;
  size_t offset;
  size_t line;
  size_t column;
  char message[128];
} thost_json_error;

/* Parses text[0, len). On success stores a new tree in *root and returns
 * THOST_JSON_OK. On failure *root is NULL, the status is returned and, if
 * err is not NULL, filled in. text need not be NUL-terminated. */
thost_json_status thost_json_parse(
    const char* text, size_t len, thost_json_value** root,
    thost_json_error* err);

/* Frees a tree from thost_json_parse. NULL is a no-op. */
void thost_json_free(thost_json_value* root);

/* Static strings naming a type or a status. */
const char* thost_json_type_name(thost_json_type type);
const char* thost_json_status_string(thost_json_status status);

/* Lookups. Each accepts NULL and returns NULL/0 when the value has the
 * wrong type or the key/index is absent, so calls chain safely:
 *   thost_json_find(thost_json_find(cfg, "parameters"), "K")
 * For duplicate keys, thost_json_find returns the first. */
const thost_json_value* thost_json_find(
    const thost_json_value* object, const char* key);
const thost_json_member* thost_json_member_at(
    const thost_json_value* object, size_t index);
const thost_json_value* thost_json_index(
    const thost_json_value* array, size_t index);
/* Number of array items or object members; 0 for anything else. */
size_t thost_json_count(const thost_json_value* value);

/* Typed reads: THOST_JSON_OK, THOST_JSON_ERR_NOT_FOUND if value is NULL,
 * THOST_JSON_ERR_TYPE if it has another type. *out is untouched on error.
 * as_int64 accepts only THOST_JSON_INT; as_double accepts INT and DOUBLE.
 * as_string's *len may be NULL; the bytes live as long as the tree. */
thost_json_status thost_json_as_int64(
    const thost_json_value* value, int64_t* out);
thost_json_status thost_json_as_double(
    const thost_json_value* value, double* out);
thost_json_status thost_json_as_bool(const thost_json_value* value, bool* out);
thost_json_status thost_json_as_string(
    const thost_json_value* value, const char** out, size_t* len);

#ifdef __cplusplus
}
#endif

#endif /* TRITONHOST_BACKENDS_COMMON_JSON_H */
