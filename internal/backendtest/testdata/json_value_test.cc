// json_value_test.cc: the C++ layer's JSON reading, without a host:
// JsonValue (json_value.cc) and ModelConfig::Parse, whose messages must stay
// those the backends have always given. Built and run by the Go tests with
// the layer's sources; prints "ok" and exits 0, or lists failures.
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "model_config.hpp"

// ---- the host functions the code under test calls -----------------------

struct TRITONSERVER_Error {
  TRITONSERVER_Error_Code code;
  std::string message;
};

extern "C" {

TRITONSERVER_Error*
TRITONSERVER_ErrorNew(TRITONSERVER_Error_Code code, const char* msg)
{
  return new TRITONSERVER_Error{code, msg};
}

void
TRITONSERVER_ErrorDelete(TRITONSERVER_Error* error)
{
  delete error;
}

TRITONSERVER_Error_Code
TRITONSERVER_ErrorCode(TRITONSERVER_Error* error)
{
  return error->code;
}

const char*
TRITONSERVER_ErrorCodeString(TRITONSERVER_Error* error)
{
  return error->code == TRITONSERVER_ERROR_INTERNAL ? "Internal" : "Other";
}

const char*
TRITONSERVER_ErrorMessage(TRITONSERVER_Error* error)
{
  return error->message.c_str();
}

// Linked in with ModelConfig::Read and the logging helpers, never called.
bool
TRITONSERVER_LogIsEnabled(TRITONSERVER_LogLevel)
{
  return false;
}

TRITONSERVER_Error*
TRITONSERVER_LogMessage(
    TRITONSERVER_LogLevel, const char*, const int, const char*)
{
  return nullptr;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelConfig(
    TRITONBACKEND_Model*, const uint32_t, TRITONSERVER_Message**)
{
  return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_UNSUPPORTED, "no host");
}

TRITONSERVER_Error*
TRITONSERVER_MessageSerializeToJson(
    TRITONSERVER_Message*, const char**, size_t*)
{
  return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_UNSUPPORTED, "no host");
}

TRITONSERVER_Error*
TRITONSERVER_MessageDelete(TRITONSERVER_Message*)
{
  return nullptr;
}

}  // extern "C"

// ---- checks --------------------------------------------------------------

using tritonhost::backend::JsonValue;
using tritonhost::backend::ModelConfig;

static int g_failures = 0;

static void
Fail(const std::string& what, int line)
{
  std::fprintf(stderr, "FAIL line %d: %s\n", line, what.c_str());
  g_failures++;
}
#define CHECK(C)          \
  do {                    \
    if (!(C))             \
      Fail(#C, __LINE__); \
  } while (0)

// "<code> <message>" of 'err' (deleted), or "ok".
static std::string
Outcome(TRITONSERVER_Error* err)
{
  if (err == nullptr) {
    return "ok";
  }
  std::string s = std::to_string(err->code) + " " + err->message;
  delete err;
  return s;
}

#define CHECK_OUTCOME(X, WANT)                   \
  do {                                           \
    const std::string got_ = Outcome(X);         \
    if (got_ != (WANT))                          \
      Fail(#X ": got '" + got_ + "'", __LINE__); \
  } while (0)

static JsonValue
Parsed(const std::string& text)
{
  JsonValue v;
  CHECK_OUTCOME(v.Parse(text), "ok");
  return v;
}

// The messages a malformed configuration gets (INVALID_ARG is 3): the same
// text, word for word, as the backends have always given.
static void
ModelConfigRefusesWrongTypes()
{
  const struct {
    const char* json;
    const char* want;
  } cases[] = {
      {"[]", "3 model configuration must be a JSON object"},
      {"{\"name\":3}",
       "3 model configuration field 'name' must be a string, got integer"},
      {"{\"max_batch_size\":\"x\"}",
       "3 model configuration field 'max_batch_size' must be an integer, got "
       "string"},
      {"{\"max_batch_size\":1.5}",
       "3 model configuration field 'max_batch_size' must be an integer, got "
       "number"},
      {"{\"max_batch_size\":18446744073709551615}",
       "3 model configuration field 'max_batch_size' must be an integer, got "
       "number"},
      {"{\"input\":{}}",
       "3 model configuration field 'input' must be an array, got object"},
      {"{\"input\":[3]}",
       "3 model configuration field 'input[0]' must be an object, got integer"},
      {"{\"input\":[{\"name\":\"a\",\"dims\":\"x\"}]}",
       "3 model configuration field 'input[0].dims' must be an array of "
       "integers, got string"},
      {"{\"input\":[{\"name\":\"a\",\"dims\":[1,\"x\"]}]}",
       "3 model configuration field 'input[0].dims[1]' must be an integer, got "
       "string"},
      {"{\"input\":[{\"name\":\"a\",\"data_type\":false}]}",
       "3 model configuration field 'input[0].data_type' must be a string, got "
       "bool"},
      {"{\"input\":[{\"name\":\"a\",\"optional\":1}]}",
       "3 model configuration field 'input[0].optional' must be true or false, "
       "got integer"},
      {"{\"output\":[{\"name\":null}]}",
       "3 model configuration field 'output[0].name' must be a string, got "
       "null"},
      {"{\"parameters\":[]}",
       "3 model configuration field 'parameters' must be an object, got array"},
      {"{\"parameters\":{\"K\":{\"string_value\":1}}}",
       "3 model configuration field 'parameters.K.string_value' must be a "
       "string"},
      {"{\"parameters\":{\"K\":3}}",
       "3 model configuration field 'parameters.K.string_value' must be a "
       "string"},
  };
  for (const auto& c : cases) {
    ModelConfig config;
    const std::string got =
        Outcome(ModelConfig::Parse(c.json, std::strlen(c.json), &config));
    if (got != c.want) {
      Fail(
          std::string(c.json) + ": got '" + got + "', want '" + c.want + "'",
          __LINE__);
    }
  }
}

static void
ModelConfigReadsTheFieldsItKnows()
{
  const std::string json =
      "{\"name\":\"m\",\"max_batch_size\":8,"
      "\"input\":[{\"name\":\"I\",\"data_type\":\"TYPE_INT32\","
      "\"dims\":[-1,2],\"optional\":true}],"
      "\"output\":[{\"name\":\"O\",\"data_type\":\"TYPE_FP32\",\"dims\":[]}],"
      "\"model_transaction_policy\":{\"decoupled\":true},"
      "\"parameters\":{\"B\":{\"string_value\":\"2\"},"
      "\"A\":{\"string_value\":\"1\"},\"A\":{\"string_value\":\"dup\"}}}";
  ModelConfig config;
  // The host's size may count the terminating NUL.
  CHECK_OUTCOME(
      ModelConfig::Parse(json.c_str(), json.size() + 1, &config), "ok");
  CHECK(config.Name() == "m");
  CHECK(config.MaxBatchSize() == 8);
  CHECK(config.Inputs().size() == 1 && config.Outputs().size() == 1);
  CHECK(config.Inputs()[0].name == "I");
  CHECK(config.Inputs()[0].data_type == "TYPE_INT32");
  CHECK((config.Inputs()[0].dims == std::vector<int64_t>{-1, 2}));
  CHECK(config.Inputs()[0].optional);
  CHECK(config.Outputs()[0].dims.empty() && !config.Outputs()[0].optional);
  CHECK(config.Parameters().size() == 2);
  CHECK(config.Parameters().at("A") == "1");  // the first of a repeated key
  CHECK(config.Parameters().at("B") == "2");
  CHECK(config.Json() == std::string(json.c_str(), json.size() + 1));
  bool decoupled = false;
  JsonValue policy;
  CHECK(config.Root().Find("model_transaction_policy", &policy));
  CHECK_OUTCOME(policy.MemberAsBool("decoupled", &decoupled), "ok");
  CHECK(decoupled);

  ModelConfig empty;
  CHECK_OUTCOME(ModelConfig::Parse("{}", 2, &empty), "ok");
  CHECK(empty.Name().empty() && empty.MaxBatchSize() == 0);
  CHECK(empty.Inputs().empty() && empty.Parameters().empty());
}

static void
ModelConfigRefusesTextThatIsNotJSON()
{
  // INTERNAL is 1; the reason is RapidJSON's.
  ModelConfig config;
  const char* json = "{\n \"name\": }";
  const std::string got =
      Outcome(ModelConfig::Parse(json, std::strlen(json), &config));
  if (got.rfind("1 model configuration is not valid JSON: ", 0) != 0 ||
      got.find(" at line 2, column 10") == std::string::npos) {
    Fail("got '" + got + "'", __LINE__);
  }
}

static void
JsonValueKeepsTheKindOfEachNumber()
{
  JsonValue v = Parsed("[1,-2,18446744073709551615,2.5,1e2]");
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  CHECK(v.ArraySize() == 5);
  CHECK_OUTCOME(v.IndexAsInt(0, &i), "ok");
  CHECK(i == 1);
  CHECK_OUTCOME(v.IndexAsUInt(0, &u), "ok");
  CHECK(u == 1);
  CHECK_OUTCOME(v.IndexAsInt(1, &i), "ok");
  CHECK(i == -2);
  CHECK_OUTCOME(
      v.IndexAsUInt(1, &u),
      "3 JSON array element 1 is integer, not an unsigned integer");
  CHECK_OUTCOME(
      v.IndexAsInt(2, &i), "3 JSON array element 2 is number, not an integer");
  CHECK_OUTCOME(v.IndexAsUInt(2, &u), "ok");
  CHECK(u == UINT64_MAX);
  CHECK_OUTCOME(v.IndexAsDouble(3, &d), "ok");
  CHECK(d == 2.5);
  CHECK_OUTCOME(
      v.IndexAsInt(4, &i), "3 JSON array element 4 is number, not an integer");
  CHECK_OUTCOME(v.IndexAsDouble(0, &d), "ok");
  CHECK(d == 1.0);
  CHECK(i == -2);  // untouched by the failed reads
}

static void
JsonValueReadsMembersAndElements()
{
  JsonValue v = Parsed(
      " {\"s\":\"a\\u0000b\",\"b\":false,\"n\":null,\"o\":{\"k\":[true]},"
      "\"a\":[{\"x\":1},[2]],\"s\":\"second\"} ");
  std::string s;
  bool b = true;
  JsonValue o, a, e;
  CHECK(v.IsObject() && std::string(v.TypeName()) == "object");
  CHECK(v.Find("n") && !v.Find("missing") && !v.Find("k"));
  CHECK_OUTCOME(v.MemberAsString("s", &s), "ok");
  CHECK(s == std::string("a\0b", 3));  // the first "s"; NULs kept
  CHECK_OUTCOME(v.MemberAsBool("b", &b), "ok");
  CHECK(!b);
  CHECK_OUTCOME(
      v.MemberAsString("missing", &s), "2 JSON member 'missing' is absent");
  CHECK_OUTCOME(
      v.MemberAsString("b", &s), "3 JSON member 'b' is bool, not a string");
  CHECK_OUTCOME(
      v.MemberAsArray("o", &o), "3 JSON member 'o' is object, not an array");
  CHECK_OUTCOME(v.MemberAsObject("o", &o), "ok");
  CHECK_OUTCOME(o.MemberAsArray("k", &a), "ok");
  CHECK_OUTCOME(a.IndexAsBool(0, &b), "ok");
  CHECK(b);
  CHECK_OUTCOME(
      a.IndexAsBool(1, &b),
      "2 JSON array element 1 is absent: the array has 1");
  CHECK_OUTCOME(
      o.IndexAsBool(0, &b),
      "3 cannot read JSON array element 0 of a JSON object: not an array");
  CHECK_OUTCOME(
      a.MemberAsBool("k", &b),
      "3 cannot read JSON member 'k' of a JSON array: not an object");
  CHECK_OUTCOME(v.MemberAsArray("a", &a), "ok");
  CHECK_OUTCOME(a.IndexAsObject(0, &e), "ok");
  CHECK(e.Find("x"));
  CHECK_OUTCOME(a.IndexAsArray(1, &e), "ok");
  CHECK(e.ArraySize() == 1 && a.ArraySize() == 2 && v.ArraySize() == 0);
  CHECK_OUTCOME(a.At(1, &e), "ok");
  CHECK(e.IsArray());

  std::vector<std::string> names;
  CHECK_OUTCOME(v.Members(&names), "ok");
  CHECK((names == std::vector<std::string>{"s", "b", "n", "o", "a", "s"}));
  CHECK_OUTCOME(a.Members(&names), "3 JSON value is array, not an object");
  CHECK(names.size() == 6);  // untouched

  JsonValue n;
  CHECK(v.Find("n", &n) && n.IsNull());
  CHECK_OUTCOME(n.AsString(&s), "3 JSON value is null, not a string");
}

static void
JsonValueChildrenOutliveTheirParent()
{
  JsonValue child;
  {
    auto parent = std::make_unique<JsonValue>(Parsed("{\"c\":{\"d\":\"e\"}}"));
    CHECK(parent->Find("c", &child));
    // Reading a member into the value it is read from works too.
    JsonValue self = *parent;
    CHECK(self.Find("c", &self) && self.Find("d"));
  }
  std::string s;
  CHECK_OUTCOME(child.MemberAsString("d", &s), "ok");
  CHECK(s == "e");
}

static void
JsonValueWritesCompactJSON()
{
  std::string text;
  CHECK_OUTCOME(
      Parsed("{ \"a\" : [ 1 , 2.5 , \"x\\n\" ] , \"b\" : { } }").Write(&text),
      "ok");
  CHECK(text == "{\"a\":[1,2.5,\"x\\n\"],\"b\":{}}");
  JsonValue a;
  CHECK(Parsed(text).Find("a", &a));
  CHECK_OUTCOME(a.Write(&text), "ok");
  CHECK(text == "[1,2.5,\"x\\n\"]");
  CHECK_OUTCOME(JsonValue().Write(&text), "ok");
  CHECK(text == "null");
}

static void
JsonValueRefusesWhatIsNotOneValue()
{
  const char* bad[] = {"", "{", "[1,]", "{\"a\":1} 2", "nul", "{'a':1}"};
  for (const char* text : bad) {
    JsonValue v = Parsed("{\"kept\":1}");
    const std::string got = Outcome(v.Parse(text, std::strlen(text)));
    if (got.rfind("1 not valid JSON: ", 0) != 0) {
      Fail(std::string(text) + ": got '" + got + "'", __LINE__);
    }
    CHECK(v.Find("kept"));  // a failed Parse leaves the value as it was
  }
  CHECK(JsonValue().IsNull());
}

int
main()
{
  ModelConfigRefusesWrongTypes();
  ModelConfigReadsTheFieldsItKnows();
  ModelConfigRefusesTextThatIsNotJSON();
  JsonValueKeepsTheKindOfEachNumber();
  JsonValueReadsMembersAndElements();
  JsonValueChildrenOutliveTheirParent();
  JsonValueWritesCompactJSON();
  JsonValueRefusesWhatIsNotOneValue();
  if (g_failures > 0) {
    std::fprintf(stderr, "%d failures\n", g_failures);
    return 1;
  }
  std::printf("ok\n");
  return 0;
}
