/*
 * json_test.c: table-driven checks of backends_c/common/json.c.
 * Built and run by build_test.go (TestJSONParser); exits non-zero and
 * prints each failing case on a mismatch.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json.h"

static int failures = 0;

#define CHECK(cond, name)                                         \
  do {                                                            \
    if (!(cond)) {                                                \
      fprintf(stderr, "FAIL %s: %s (line %d)\n", name, #cond, __LINE__); \
      failures++;                                                 \
    }                                                             \
  } while (0)

typedef struct {
  const char* name;
  const char* text;
  size_t len; /* 0: strlen(text) */
  thost_json_status want;
} syntax_case;

static const syntax_case syntax_cases[] = {
    {"empty", "", 0, THOST_JSON_ERR_SYNTAX},
    {"blank", "  \n ", 0, THOST_JSON_ERR_SYNTAX},
    {"null", "null", 0, THOST_JSON_OK},
    {"true", " true ", 0, THOST_JSON_OK},
    {"false", "false", 0, THOST_JSON_OK},
    {"bad literal", "nul", 0, THOST_JSON_ERR_SYNTAX},
    {"truex", "truex", 0, THOST_JSON_ERR_SYNTAX},
    {"int", "-42", 0, THOST_JSON_OK},
    {"leading zero", "012", 0, THOST_JSON_ERR_SYNTAX},
    {"minus only", "-", 0, THOST_JSON_ERR_SYNTAX},
    {"plus", "+1", 0, THOST_JSON_ERR_SYNTAX},
    {"dot only", "1.", 0, THOST_JSON_ERR_SYNTAX},
    {"leading dot", ".5", 0, THOST_JSON_ERR_SYNTAX},
    {"bad exponent", "1e", 0, THOST_JSON_ERR_SYNTAX},
    {"huge double", "1e999", 0, THOST_JSON_ERR_SYNTAX},
    {"nan", "NaN", 0, THOST_JSON_ERR_SYNTAX},
    {"trailing comma array", "[1,]", 0, THOST_JSON_ERR_SYNTAX},
    {"trailing comma object", "{\"a\":1,}", 0, THOST_JSON_ERR_SYNTAX},
    {"missing colon", "{\"a\" 1}", 0, THOST_JSON_ERR_SYNTAX},
    {"unquoted key", "{a:1}", 0, THOST_JSON_ERR_SYNTAX},
    {"single quotes", "'a'", 0, THOST_JSON_ERR_SYNTAX},
    {"comment", "[1] // x", 0, THOST_JSON_ERR_SYNTAX},
    {"two roots", "1 2", 0, THOST_JSON_ERR_SYNTAX},
    {"unterminated array", "[1, 2", 0, THOST_JSON_ERR_SYNTAX},
    {"unterminated nested", "{\"a\":[{\"b\":\"c\"", 0, THOST_JSON_ERR_SYNTAX},
    {"unterminated string", "\"abc", 0, THOST_JSON_ERR_SYNTAX},
    {"control char", "\"a\tb\"", 0, THOST_JSON_ERR_SYNTAX},
    {"bad escape", "\"\\x\"", 0, THOST_JSON_ERR_SYNTAX},
    {"short unicode", "\"\\u12\"", 0, THOST_JSON_ERR_SYNTAX},
    {"lone high surrogate", "\"\\ud83d\"", 0, THOST_JSON_ERR_SYNTAX},
    {"lone low surrogate", "\"\\ude00\"", 0, THOST_JSON_ERR_SYNTAX},
    {"bad utf8", "\"\xc3\x28\"", 0, THOST_JSON_ERR_SYNTAX},
    {"overlong utf8", "\"\xc0\xaf\"", 0, THOST_JSON_ERR_SYNTAX},
    {"utf8 surrogate", "\"\xed\xa0\x80\"", 0, THOST_JSON_ERR_SYNTAX},
    {"valid utf8", "\"h\xc3\xa9llo \xf0\x9f\x98\x80\"", 0, THOST_JSON_OK},
    {"trailing NUL", "{}\0", 3, THOST_JSON_OK},
    {"text after NUL ignored", "[1]\0garbage", 11, THOST_JSON_OK},
    {"NUL before value", "\0{}", 3, THOST_JSON_ERR_SYNTAX},
    {"cut length", "[1,2]", 4, THOST_JSON_ERR_SYNTAX},
    {"deep ok", "[[[[[[[[[[]]]]]]]]]]", 0, THOST_JSON_OK},
};

static void
test_syntax(void)
{
  for (size_t i = 0; i < sizeof(syntax_cases) / sizeof(syntax_cases[0]);
       i++) {
    const syntax_case* c = &syntax_cases[i];
    size_t len = c->len ? c->len : strlen(c->text);
    thost_json_value* root = NULL;
    thost_json_error err;
    thost_json_status st = thost_json_parse(c->text, len, &root, &err);
    if (st != c->want) {
      fprintf(
          stderr, "FAIL syntax %s: got %s (%s), want %s\n", c->name,
          thost_json_status_string(st), err.message,
          thost_json_status_string(c->want));
      failures++;
    }
    CHECK((st == THOST_JSON_OK) == (root != NULL), c->name);
    CHECK(st != THOST_JSON_OK || err.status == THOST_JSON_OK, c->name);
    thost_json_free(root);
  }
}

static void
test_depth(void)
{
  char deep[2 * (THOST_JSON_MAX_DEPTH + 1) + 1];
  for (int i = 0; i <= THOST_JSON_MAX_DEPTH; i++) {
    deep[i] = '[';
    deep[2 * (THOST_JSON_MAX_DEPTH + 1) - 1 - i] = ']';
  }
  thost_json_value* root = NULL;
  thost_json_error err;
  size_t n = 2 * (THOST_JSON_MAX_DEPTH + 1);
  CHECK(thost_json_parse(deep, n, &root, &err) == THOST_JSON_ERR_DEPTH,
        "too deep");
  CHECK(root == NULL, "too deep root");
  /* One level less is fine. */
  CHECK(thost_json_parse(deep + 1, n - 2, &root, NULL) == THOST_JSON_OK,
        "max depth");
  thost_json_free(root);
}

static void
test_error_position(void)
{
  const char* text = "{\n  \"a\": [1,\n  x]\n}";
  thost_json_value* root = NULL;
  thost_json_error err;
  CHECK(thost_json_parse(text, strlen(text), &root, &err) ==
            THOST_JSON_ERR_SYNTAX,
        "position status");
  CHECK(err.line == 3 && err.column == 3, "position line/column");
  CHECK(err.offset == (size_t)(strchr(text, 'x') - text), "position offset");
  CHECK(strstr(err.message, "'x'") != NULL, "position message");
}

static void
test_values(void)
{
  const char* text =
      "{\"name\": \"repeat_int32\", \"max_batch_size\": 0,"
      " \"big\": 9223372036854775807, \"small\": -9223372036854775808,"
      " \"over\": 9223372036854775808, \"pi\": 3.25e0, \"neg0\": -0,"
      " \"esc\": \"q\\\"b\\\\s\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\","
      " \"nul\": \"a\\u0000b\", \"flag\": true, \"none\": null,"
      " \"input\": [{\"name\": \"IN\", \"dims\": [-1, 3]}],"
      " \"dup\": 1, \"dup\": 2, \"empty_obj\": {}, \"empty_arr\": []}";
  thost_json_value* root = NULL;
  thost_json_error err;
  if (thost_json_parse(text, strlen(text), &root, &err) != THOST_JSON_OK) {
    fprintf(stderr, "FAIL values: %s at %zu\n", err.message, err.offset);
    failures++;
    return;
  }
  const char* s = NULL;
  size_t len = 0;
  int64_t i = 0;
  double d = 0;
  bool b = false;

  CHECK(thost_json_as_string(thost_json_find(root, "name"), &s, &len) ==
                THOST_JSON_OK &&
            strcmp(s, "repeat_int32") == 0 && len == 12,
        "string");
  CHECK(thost_json_as_int64(thost_json_find(root, "max_batch_size"), &i) ==
                THOST_JSON_OK &&
            i == 0,
        "int zero");
  CHECK(thost_json_as_int64(thost_json_find(root, "big"), &i) ==
                THOST_JSON_OK &&
            i == INT64_MAX,
        "int64 max");
  CHECK(thost_json_as_int64(thost_json_find(root, "small"), &i) ==
                THOST_JSON_OK &&
            i == INT64_MIN,
        "int64 min");
  CHECK(thost_json_find(root, "over")->type == THOST_JSON_DOUBLE,
        "int64 overflow becomes double");
  CHECK(thost_json_as_int64(thost_json_find(root, "over"), &i) ==
            THOST_JSON_ERR_TYPE,
        "double is not int64");
  CHECK(thost_json_as_double(thost_json_find(root, "pi"), &d) ==
                THOST_JSON_OK &&
            d == 3.25,
        "double");
  CHECK(thost_json_as_double(thost_json_find(root, "big"), &d) ==
            THOST_JSON_OK,
        "int as double");
  CHECK(thost_json_as_int64(thost_json_find(root, "neg0"), &i) ==
                THOST_JSON_OK &&
            i == 0,
        "-0");
  CHECK(thost_json_as_string(thost_json_find(root, "esc"), &s, &len) ==
                THOST_JSON_OK &&
            strcmp(s, "q\"b\\s/\b\f\n\r\t\xc3\xa9\xf0\x9f\x98\x80") == 0,
        "escapes");
  CHECK(thost_json_as_string(thost_json_find(root, "nul"), &s, &len) ==
                THOST_JSON_OK &&
            len == 3 && memcmp(s, "a\0b", 4) == 0,
        "embedded NUL");
  CHECK(thost_json_as_bool(thost_json_find(root, "flag"), &b) ==
                THOST_JSON_OK &&
            b,
        "bool");
  CHECK(thost_json_find(root, "none") != NULL &&
            thost_json_find(root, "none")->type == THOST_JSON_NULL,
        "null");
  CHECK(thost_json_as_int64(thost_json_find(root, "dup"), &i) ==
                THOST_JSON_OK &&
            i == 1,
        "duplicate key gives first");
  CHECK(thost_json_count(thost_json_find(root, "empty_obj")) == 0 &&
            thost_json_find(root, "empty_obj")->type == THOST_JSON_OBJECT,
        "empty object");
  CHECK(thost_json_count(thost_json_find(root, "empty_arr")) == 0 &&
            thost_json_find(root, "empty_arr")->type == THOST_JSON_ARRAY,
        "empty array");

  const thost_json_value* in0 =
      thost_json_index(thost_json_find(root, "input"), 0);
  const thost_json_value* dims = thost_json_find(in0, "dims");
  CHECK(thost_json_count(dims) == 2, "dims count");
  CHECK(thost_json_as_int64(thost_json_index(dims, 0), &i) ==
                THOST_JSON_OK &&
            i == -1,
        "dims[0]");
  CHECK(thost_json_as_int64(thost_json_index(dims, 1), &i) ==
                THOST_JSON_OK &&
            i == 3,
        "dims[1]");
  CHECK(thost_json_index(dims, 2) == NULL, "index out of range");

  /* Lookups on missing or mistyped values. */
  CHECK(thost_json_find(root, "absent") == NULL, "absent member");
  CHECK(thost_json_find(NULL, "x") == NULL, "find on NULL");
  CHECK(thost_json_find(dims, "x") == NULL, "find on array");
  CHECK(thost_json_index(root, 0) == NULL, "index on object");
  CHECK(thost_json_as_int64(NULL, &i) == THOST_JSON_ERR_NOT_FOUND,
        "as_int64 NULL");
  CHECK(thost_json_as_string(thost_json_find(root, "big"), &s, NULL) ==
            THOST_JSON_ERR_TYPE,
        "as_string on int");
  CHECK(thost_json_as_bool(thost_json_find(root, "name"), &b) ==
            THOST_JSON_ERR_TYPE,
        "as_bool on string");

  const thost_json_member* m = thost_json_member_at(root, 0);
  CHECK(m != NULL && strcmp(m->key.data, "name") == 0, "member_at");
  CHECK(thost_json_member_at(root, thost_json_count(root)) == NULL,
        "member_at out of range");

  thost_json_free(root);
}

int
main(void)
{
  test_syntax();
  test_depth();
  test_error_position();
  test_values();
  if (failures != 0) {
    fprintf(stderr, "%d failure(s)\n", failures);
    return 1;
  }
  printf("ok\n");
  return 0;
}
