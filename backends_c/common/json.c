/*
 * json.c: recursive-descent parser behind json.h. One function per grammar
 * rule of RFC 8259; the first error wins and stops the parse.
 */
#include "json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
  const char* begin;
  const char* p;
  const char* end;
  int depth;
  thost_json_error* err;
} parser;

/* Growable byte buffer for decoding strings. */
typedef struct strbuf {
  char* data;
  size_t len;
  size_t cap;
} strbuf;

static thost_json_status parse_value(parser* ps, thost_json_value* out);
static void free_children(thost_json_value* v);

/* ---- errors ---------------------------------------------------------- */

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static thost_json_status
fail_at(parser* ps, const char* at, thost_json_status status, const char* fmt,
        ...)
{
  thost_json_error* e = ps->err;
  if (e == NULL || e->status != THOST_JSON_OK) {
    return status;
  }
  e->status = status;
  e->offset = (size_t)(at - ps->begin);
  e->line = 1;
  e->column = 1;
  for (const char* c = ps->begin; c < at; c++) {
    if (*c == '\n') {
      e->line++;
      e->column = 1;
    } else {
      e->column++;
    }
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->message, sizeof(e->message), fmt, ap);
  va_end(ap);
  return status;
}

#define FAIL(ps, ...) fail_at((ps), (ps)->p, THOST_JSON_ERR_SYNTAX, __VA_ARGS__)
#define NOMEM(ps) fail_at((ps), (ps)->p, THOST_JSON_ERR_NOMEM, "out of memory")

/* ---- helpers --------------------------------------------------------- */

static void
skip_ws(parser* ps)
{
  while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' ||
                             *ps->p == '\n' || *ps->p == '\r')) {
    ps->p++;
  }
}

static bool
grow(void** items, size_t* cap, size_t count, size_t elem_size)
{
  if (count < *cap) {
    return true;
  }
  size_t ncap = (*cap == 0) ? 4 : *cap * 2;
  if (ncap > SIZE_MAX / elem_size) {
    return false;
  }
  void* n = realloc(*items, ncap * elem_size);
  if (n == NULL) {
    return false;
  }
  *items = n;
  *cap = ncap;
  return true;
}

static bool
sb_put(strbuf* sb, const char* bytes, size_t n)
{
  if (sb->len + n + 1 > sb->cap) {
    size_t ncap = (sb->cap == 0) ? 32 : sb->cap;
    while (ncap < sb->len + n + 1) {
      ncap *= 2;
    }
    char* d = realloc(sb->data, ncap);
    if (d == NULL) {
      return false;
    }
    sb->data = d;
    sb->cap = ncap;
  }
  memcpy(sb->data + sb->len, bytes, n);
  sb->len += n;
  sb->data[sb->len] = '\0';
  return true;
}

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlongs,
 * no surrogates, nothing above U+10FFFF), or 0 if it is malformed. */
static size_t
utf8_len(const unsigned char* s, const unsigned char* end)
{
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;
  if (s[0] < 0x80) {
    return 1;
  } else if (s[0] >= 0xC2 && s[0] <= 0xDF) {
    n = 2;
  } else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
    n = 3;
    if (s[0] == 0xE0) lo = 0xA0;
    if (s[0] == 0xED) hi = 0x9F;
  } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
    n = 4;
    if (s[0] == 0xF0) lo = 0x90;
    if (s[0] == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if ((size_t)(end - s) < n || s[1] < lo || s[1] > hi) {
    return 0;
  }
  for (size_t i = 2; i < n; i++) {
    if (s[i] < 0x80 || s[i] > 0xBF) {
      return 0;
    }
  }
  return n;
}

static size_t
utf8_encode(uint32_t cp, char out[4])
{
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xC0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | (cp >> 18));
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  out[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* ---- strings --------------------------------------------------------- */

/* Reads the 4 hex digits after "\u"; ps->p points at the first digit. */
static bool
read_hex4(parser* ps, uint32_t* out)
{
  if (ps->end - ps->p < 4) {
    return false;
  }
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) {
    char c = ps->p[i];
    v <<= 4;
    if (c >= '0' && c <= '9') {
      v |= (uint32_t)(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      v |= (uint32_t)(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      v |= (uint32_t)(c - 'A' + 10);
    } else {
      return false;
    }
  }
  ps->p += 4;
  *out = v;
  return true;
}

/* ps->p points just after "\u". Decodes one code point, pairing
 * surrogates, and appends its UTF-8 form. */
static thost_json_status
parse_unicode_escape(parser* ps, strbuf* sb)
{
  const char* at = ps->p - 2;
  uint32_t cp;
  if (!read_hex4(ps, &cp)) {
    return fail_at(ps, at, THOST_JSON_ERR_SYNTAX, "invalid \\u escape");
  }
  if (cp >= 0xDC00 && cp <= 0xDFFF) {
    return fail_at(ps, at, THOST_JSON_ERR_SYNTAX, "lone low surrogate");
  }
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    uint32_t low;
    if (ps->end - ps->p < 2 || ps->p[0] != '\\' || ps->p[1] != 'u') {
      return fail_at(ps, at, THOST_JSON_ERR_SYNTAX, "lone high surrogate");
    }
    ps->p += 2;
    if (!read_hex4(ps, &low) || low < 0xDC00 || low > 0xDFFF) {
      return fail_at(
          ps, at, THOST_JSON_ERR_SYNTAX, "invalid surrogate pair");
    }
    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
  }
  char utf8[4];
  size_t n = utf8_encode(cp, utf8);
  return sb_put(sb, utf8, n) ? THOST_JSON_OK : NOMEM(ps);
}

static thost_json_status
parse_escape(parser* ps, strbuf* sb)
{
  /* ps->p points at the character after the backslash. */
  if (ps->p >= ps->end) {
    return FAIL(ps, "unterminated string");
  }
  char c = *ps->p++;
  char out;
  switch (c) {
    case '"': out = '"'; break;
    case '\\': out = '\\'; break;
    case '/': out = '/'; break;
    case 'b': out = '\b'; break;
    case 'f': out = '\f'; break;
    case 'n': out = '\n'; break;
    case 'r': out = '\r'; break;
    case 't': out = '\t'; break;
    case 'u': return parse_unicode_escape(ps, sb);
    default:
      return fail_at(
          ps, ps->p - 2, THOST_JSON_ERR_SYNTAX, "invalid escape '\\%c'", c);
  }
  return sb_put(sb, &out, 1) ? THOST_JSON_OK : NOMEM(ps);
}

/* ps->p points at the opening quote. */
static thost_json_status
parse_string(parser* ps, thost_json_string* out)
{
  strbuf sb = {NULL, 0, 0};
  thost_json_status st = THOST_JSON_OK;
  ps->p++;
  if (!sb_put(&sb, "", 0)) {
    return NOMEM(ps);
  }
  for (;;) {
    if (ps->p >= ps->end) {
      st = FAIL(ps, "unterminated string");
      break;
    }
    unsigned char c = (unsigned char)*ps->p;
    if (c == '"') {
      ps->p++;
      break;
    }
    if (c == '\\') {
      ps->p++;
      st = parse_escape(ps, &sb);
    } else if (c < 0x20) {
      st = FAIL(ps, "control character 0x%02x in string", c);
    } else {
      size_t n = utf8_len((const unsigned char*)ps->p,
                          (const unsigned char*)ps->end);
      if (n == 0) {
        st = FAIL(ps, "invalid UTF-8 in string");
      } else if (!sb_put(&sb, ps->p, n)) {
        st = NOMEM(ps);
      } else {
        ps->p += n;
      }
    }
    if (st != THOST_JSON_OK) {
      break;
    }
  }
  if (st != THOST_JSON_OK) {
    free(sb.data);
    return st;
  }
  out->data = sb.data;
  out->len = sb.len;
  return THOST_JSON_OK;
}

/* ---- numbers --------------------------------------------------------- */

static bool
is_digit(const parser* ps)
{
  return ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9';
}

static thost_json_status
parse_number(parser* ps, thost_json_value* out)
{
  const char* start = ps->p;
  bool integral = true;
  if (*ps->p == '-') {
    ps->p++;
  }
  if (!is_digit(ps)) {
    return FAIL(ps, "expected a digit");
  }
  if (*ps->p == '0') {
    ps->p++;
    if (is_digit(ps)) {
      return FAIL(ps, "leading zero in number");
    }
  }
  while (is_digit(ps)) ps->p++;
  if (ps->p < ps->end && *ps->p == '.') {
    integral = false;
    ps->p++;
    if (!is_digit(ps)) {
      return FAIL(ps, "expected a digit after '.'");
    }
    while (is_digit(ps)) ps->p++;
  }
  if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
    integral = false;
    ps->p++;
    if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-')) ps->p++;
    if (!is_digit(ps)) {
      return FAIL(ps, "expected a digit in exponent");
    }
    while (is_digit(ps)) ps->p++;
  }

  if (integral) {
    /* Accumulate as a negative number so INT64_MIN fits. */
    bool neg = (*start == '-');
    int64_t v = 0;
    bool overflow = false;
    for (const char* c = start + (neg ? 1 : 0); c < ps->p; c++) {
      int d = *c - '0';
      if (v < (INT64_MIN + d) / 10) {
        overflow = true;
        break;
      }
      v = v * 10 - d;
    }
    if (!overflow && (neg || v != INT64_MIN)) {
      out->type = THOST_JSON_INT;
      out->u.integer = neg ? v : -v;
      return THOST_JSON_OK;
    }
  }

  /* strtod needs a NUL-terminated copy; the token is short in practice. */
  size_t n = (size_t)(ps->p - start);
  char small[64];
  char* buf = (n < sizeof(small)) ? small : malloc(n + 1);
  if (buf == NULL) {
    return NOMEM(ps);
  }
  memcpy(buf, start, n);
  buf[n] = '\0';
  errno = 0;
  double d = strtod(buf, NULL);
  int range_err = errno;
  if (buf != small) {
    free(buf);
  }
  if (range_err == ERANGE && isinf(d)) {
    return fail_at(ps, start, THOST_JSON_ERR_SYNTAX, "number out of range");
  }
  out->type = THOST_JSON_DOUBLE;
  out->u.number = d;
  return THOST_JSON_OK;
}

/* ---- containers ------------------------------------------------------ */

static thost_json_status
enter(parser* ps)
{
  if (++ps->depth > THOST_JSON_MAX_DEPTH) {
    return fail_at(
        ps, ps->p, THOST_JSON_ERR_DEPTH, "nesting deeper than %d",
        THOST_JSON_MAX_DEPTH);
  }
  ps->p++; /* the opening bracket */
  skip_ws(ps);
  return THOST_JSON_OK;
}

/* After an element: consumes ',' (returns true: another element follows)
 * or the closing bracket (returns false with *st OK). */
static bool
next_element(parser* ps, char close, thost_json_status* st)
{
  skip_ws(ps);
  if (ps->p < ps->end && *ps->p == ',') {
    ps->p++;
    skip_ws(ps);
    return true;
  }
  if (ps->p < ps->end && *ps->p == close) {
    ps->p++;
    ps->depth--;
    return false;
  }
  *st = FAIL(ps, "expected ',' or '%c'", close);
  return false;
}

/* Frees what a failed container parse built so far and leaves *v empty,
 * so every parse_* function owns nothing on error. */
static thost_json_status
abandon(thost_json_value* v, thost_json_status st)
{
  free_children(v);
  v->type = THOST_JSON_NULL;
  return st;
}

static thost_json_status
parse_array(parser* ps, thost_json_value* out)
{
  thost_json_status st = enter(ps);
  size_t cap = 0;
  out->type = THOST_JSON_ARRAY;
  out->u.array.items = NULL;
  out->u.array.count = 0;
  if (st != THOST_JSON_OK) {
    return abandon(out, st);
  }
  if (ps->p < ps->end && *ps->p == ']') {
    ps->p++;
    ps->depth--;
    return THOST_JSON_OK;
  }
  do {
    if (!grow((void**)&out->u.array.items, &cap, out->u.array.count,
              sizeof(thost_json_value))) {
      return abandon(out, NOMEM(ps));
    }
    st = parse_value(ps, &out->u.array.items[out->u.array.count]);
    if (st != THOST_JSON_OK) {
      return abandon(out, st);
    }
    out->u.array.count++;
  } while (next_element(ps, ']', &st));
  return (st == THOST_JSON_OK) ? st : abandon(out, st);
}

/* Parses "key": value. On error nothing is left allocated in *m. */
static thost_json_status
parse_member(parser* ps, thost_json_member* m)
{
  if (ps->p >= ps->end || *ps->p != '"') {
    return FAIL(ps, "expected a string key");
  }
  thost_json_status st = parse_string(ps, &m->key);
  if (st != THOST_JSON_OK) {
    return st;
  }
  skip_ws(ps);
  if (ps->p >= ps->end || *ps->p != ':') {
    st = FAIL(ps, "expected ':' after key");
  } else {
    ps->p++;
    skip_ws(ps);
    st = parse_value(ps, &m->value);
  }
  if (st != THOST_JSON_OK) {
    free(m->key.data);
  }
  return st;
}

static thost_json_status
parse_object(parser* ps, thost_json_value* out)
{
  thost_json_status st = enter(ps);
  size_t cap = 0;
  out->type = THOST_JSON_OBJECT;
  out->u.object.members = NULL;
  out->u.object.count = 0;
  if (st != THOST_JSON_OK) {
    return abandon(out, st);
  }
  if (ps->p < ps->end && *ps->p == '}') {
    ps->p++;
    ps->depth--;
    return THOST_JSON_OK;
  }
  do {
    if (!grow((void**)&out->u.object.members, &cap, out->u.object.count,
              sizeof(thost_json_member))) {
      return abandon(out, NOMEM(ps));
    }
    st = parse_member(ps, &out->u.object.members[out->u.object.count]);
    if (st != THOST_JSON_OK) {
      return abandon(out, st);
    }
    out->u.object.count++;
  } while (next_element(ps, '}', &st));
  return (st == THOST_JSON_OK) ? st : abandon(out, st);
}

/* ---- values ---------------------------------------------------------- */

static bool
take_literal(parser* ps, const char* word)
{
  size_t n = strlen(word);
  if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0) {
    return false;
  }
  ps->p += n;
  return true;
}

/* Parses one value into *out. On error *out is left owning nothing. */
static thost_json_status
parse_value(parser* ps, thost_json_value* out)
{
  out->type = THOST_JSON_NULL;
  if (ps->p >= ps->end) {
    return FAIL(ps, "unexpected end of text");
  }
  unsigned char c = (unsigned char)*ps->p;
  if (c == '{') {
    return parse_object(ps, out);
  }
  if (c == '[') {
    return parse_array(ps, out);
  }
  if (c == '"') {
    thost_json_status st = parse_string(ps, &out->u.string);
    if (st == THOST_JSON_OK) {
      out->type = THOST_JSON_STRING;
    }
    return st;
  }
  if (c == '-' || (c >= '0' && c <= '9')) {
    return parse_number(ps, out);
  }
  if (take_literal(ps, "true") || take_literal(ps, "false")) {
    out->type = THOST_JSON_BOOL;
    out->u.boolean = (c == 't');
    return THOST_JSON_OK;
  }
  if (take_literal(ps, "null")) {
    return THOST_JSON_OK;
  }
  if (c >= 0x20 && c < 0x7F) {
    return FAIL(ps, "unexpected character '%c'", c);
  }
  return FAIL(ps, "unexpected byte 0x%02x", c);
}

thost_json_status
thost_json_parse(
    const char* text, size_t len, thost_json_value** root,
    thost_json_error* err)
{
  thost_json_error local;
  if (text == NULL) {
    text = "";
    len = 0;
  }
  parser ps = {text, text, text + len, 0, (err != NULL) ? err : &local};
  memset(ps.err, 0, sizeof(*ps.err));
  *root = NULL;

  thost_json_value* v = calloc(1, sizeof(*v));
  if (v == NULL) {
    return NOMEM(&ps);
  }
  skip_ws(&ps);
  thost_json_status st = parse_value(&ps, v);
  if (st == THOST_JSON_OK) {
    skip_ws(&ps);
    /* A NUL here ends the text, like a C string terminator. */
    if (ps.p < ps.end && *ps.p != '\0') {
      st = FAIL(&ps, "unexpected text after the value");
    }
  }
  if (st != THOST_JSON_OK) {
    thost_json_free(v);
    return st;
  }
  *root = v;
  return THOST_JSON_OK;
}

/* ---- freeing --------------------------------------------------------- */

static void
free_children(thost_json_value* v)
{
  switch (v->type) {
    case THOST_JSON_STRING:
      free(v->u.string.data);
      break;
    case THOST_JSON_ARRAY:
      for (size_t i = 0; i < v->u.array.count; i++) {
        free_children(&v->u.array.items[i]);
      }
      free(v->u.array.items);
      break;
    case THOST_JSON_OBJECT:
      for (size_t i = 0; i < v->u.object.count; i++) {
        free(v->u.object.members[i].key.data);
        free_children(&v->u.object.members[i].value);
      }
      free(v->u.object.members);
      break;
    default:
      break;
  }
}

void
thost_json_free(thost_json_value* root)
{
  if (root != NULL) {
    free_children(root);
    free(root);
  }
}

/* ---- lookups --------------------------------------------------------- */

const char*
thost_json_type_name(thost_json_type type)
{
  switch (type) {
    case THOST_JSON_NULL: return "null";
    case THOST_JSON_BOOL: return "bool";
    case THOST_JSON_INT: return "integer";
    case THOST_JSON_DOUBLE: return "number";
    case THOST_JSON_STRING: return "string";
    case THOST_JSON_ARRAY: return "array";
    case THOST_JSON_OBJECT: return "object";
  }
  return "<invalid>";
}

const char*
thost_json_status_string(thost_json_status status)
{
  switch (status) {
    case THOST_JSON_OK: return "ok";
    case THOST_JSON_ERR_SYNTAX: return "syntax error";
    case THOST_JSON_ERR_DEPTH: return "nesting too deep";
    case THOST_JSON_ERR_NOMEM: return "out of memory";
    case THOST_JSON_ERR_NOT_FOUND: return "not found";
    case THOST_JSON_ERR_TYPE: return "wrong type";
  }
  return "<invalid>";
}

const thost_json_value*
thost_json_find(const thost_json_value* object, const char* key)
{
  if (object == NULL || object->type != THOST_JSON_OBJECT || key == NULL) {
    return NULL;
  }
  size_t n = strlen(key);
  for (size_t i = 0; i < object->u.object.count; i++) {
    const thost_json_member* m = &object->u.object.members[i];
    if (m->key.len == n && memcmp(m->key.data, key, n) == 0) {
      return &m->value;
    }
  }
  return NULL;
}

const thost_json_member*
thost_json_member_at(const thost_json_value* object, size_t index)
{
  if (object == NULL || object->type != THOST_JSON_OBJECT ||
      index >= object->u.object.count) {
    return NULL;
  }
  return &object->u.object.members[index];
}

const thost_json_value*
thost_json_index(const thost_json_value* array, size_t index)
{
  if (array == NULL || array->type != THOST_JSON_ARRAY ||
      index >= array->u.array.count) {
    return NULL;
  }
  return &array->u.array.items[index];
}

size_t
thost_json_count(const thost_json_value* value)
{
  if (value == NULL) return 0;
  if (value->type == THOST_JSON_ARRAY) return value->u.array.count;
  if (value->type == THOST_JSON_OBJECT) return value->u.object.count;
  return 0;
}

static thost_json_status
check(const thost_json_value* value, thost_json_type want)
{
  if (value == NULL) return THOST_JSON_ERR_NOT_FOUND;
  return (value->type == want) ? THOST_JSON_OK : THOST_JSON_ERR_TYPE;
}

thost_json_status
thost_json_as_int64(const thost_json_value* value, int64_t* out)
{
  thost_json_status st = check(value, THOST_JSON_INT);
  if (st == THOST_JSON_OK) *out = value->u.integer;
  return st;
}

thost_json_status
thost_json_as_double(const thost_json_value* value, double* out)
{
  if (value != NULL && value->type == THOST_JSON_INT) {
    *out = (double)value->u.integer;
    return THOST_JSON_OK;
  }
  thost_json_status st = check(value, THOST_JSON_DOUBLE);
  if (st == THOST_JSON_OK) *out = value->u.number;
  return st;
}

thost_json_status
thost_json_as_bool(const thost_json_value* value, bool* out)
{
  thost_json_status st = check(value, THOST_JSON_BOOL);
  if (st == THOST_JSON_OK) *out = value->u.boolean;
  return st;
}

thost_json_status
thost_json_as_string(
    const thost_json_value* value, const char** out, size_t* len)
{
  thost_json_status st = check(value, THOST_JSON_STRING);
  if (st == THOST_JSON_OK) {
    *out = value->u.string.data;
    if (len != NULL) *len = value->u.string.len;
  }
  return st;
}
