// json_value.cc: JsonValue over RapidJSON.
#include "json_value.hpp"

#include <string>

#include "errors.hpp"
#include "rapidjson/document.h"
#include "rapidjson/error/en.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace tritonhost { namespace backend {

namespace {

// What a caller asks a value to be.
enum class Kind { kAny, kString, kInt, kUInt, kBool, kDouble, kArray, kObject };

bool
IsKind(const rapidjson::Value& v, Kind kind)
{
  switch (kind) {
    case Kind::kAny:
      return true;
    case Kind::kString:
      return v.IsString();
    case Kind::kInt:
      return v.IsInt64();
    case Kind::kUInt:
      return v.IsUint64();
    case Kind::kBool:
      return v.IsBool();
    case Kind::kDouble:
      return v.IsNumber();
    case Kind::kArray:
      return v.IsArray();
    case Kind::kObject:
      return v.IsObject();
  }
  return false;
}

const char*
KindName(Kind kind)
{
  switch (kind) {
    case Kind::kAny:
      return "any value";
    case Kind::kString:
      return "a string";
    case Kind::kInt:
      return "an integer";
    case Kind::kUInt:
      return "an unsigned integer";
    case Kind::kBool:
      return "true or false";
    case Kind::kDouble:
      return "a number";
    case Kind::kArray:
      return "an array";
    case Kind::kObject:
      return "an object";
  }
  return "?";
}

const char*
TypeName(const rapidjson::Value& v)
{
  switch (v.GetType()) {
    case rapidjson::kNullType:
      return "null";
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      return "bool";
    case rapidjson::kNumberType:
      return v.IsInt64() ? "integer" : "number";
    case rapidjson::kStringType:
      return "string";
    case rapidjson::kArrayType:
      return "array";
    case rapidjson::kObjectType:
      return "object";
  }
  return "?";
}

// "Invalid value." as "Invalid value", to go on in a sentence.
std::string
ParseErrorReason(rapidjson::ParseErrorCode code)
{
  std::string reason = rapidjson::GetParseError_En(code);
  if (!reason.empty() && reason.back() == '.') {
    reason.pop_back();
  }
  return reason;
}

}  // namespace

// The helpers that need JsonValue's insides; declared a friend there.
struct JsonValueAccess {
  // The RapidJSON value behind 'v': a null for a default JsonValue.
  static const rapidjson::Value& Of(const JsonValue& v)
  {
    static const rapidjson::Value null_value;
    return (v.value_ != nullptr) ? *v.value_ : null_value;
  }

  // A JsonValue on 'v', which lies in the document of 'parent'.
  static JsonValue Child(const JsonValue& parent, const rapidjson::Value& v)
  {
    JsonValue child;
    child.document_ = parent.document_;
    child.value_ = &v;
    return child;
  }

  static void Store(
      const JsonValue&, const rapidjson::Value& v, std::string* out)
  {
    out->assign(v.GetString(), v.GetStringLength());
  }
  static void Store(const JsonValue&, const rapidjson::Value& v, int64_t* out)
  {
    *out = v.GetInt64();
  }
  static void Store(const JsonValue&, const rapidjson::Value& v, uint64_t* out)
  {
    *out = v.GetUint64();
  }
  static void Store(const JsonValue&, const rapidjson::Value& v, bool* out)
  {
    *out = v.GetBool();
  }
  static void Store(const JsonValue&, const rapidjson::Value& v, double* out)
  {
    *out = v.GetDouble();
  }
  static void Store(
      const JsonValue& parent, const rapidjson::Value& v, JsonValue* out)
  {
    *out = Child(parent, v);
  }

  // Stores 'v' (of the document of 'parent') in *out if it is of 'kind';
  // INVALID_ARG "<where> is <type>, not <kind>" otherwise.
  template <typename T>
  static TRITONSERVER_Error* Read(
      const JsonValue& parent, const rapidjson::Value& v, Kind kind,
      const std::string& where, T* out)
  {
    THOST_RETURN_ERROR_IF_FALSE(
        IsKind(v, kind), TRITONSERVER_ERROR_INVALID_ARG,
        where + " is " + TypeName(v) + ", not " + KindName(kind));
    Store(parent, v, out);
    return nullptr;
  }

  // The member 'name' of 'self' in *found, and "JSON member '<name>'" in
  // *where.
  static TRITONSERVER_Error* Lookup(
      const JsonValue& self, const char* name, const rapidjson::Value** found,
      std::string* where)
  {
    const rapidjson::Value& v = Of(self);
    *where = "JSON member '" + std::string(name) + "'";
    THOST_RETURN_ERROR_IF_FALSE(
        v.IsObject(), TRITONSERVER_ERROR_INVALID_ARG,
        "cannot read " + *where + " of a JSON " + TypeName(v) +
            ": not an object");
    const auto member = v.FindMember(name);
    THOST_RETURN_ERROR_IF_FALSE(
        member != v.MemberEnd(), TRITONSERVER_ERROR_NOT_FOUND,
        *where + " is absent");
    *found = &member->value;
    return nullptr;
  }

  // Element 'index' of 'self' in *found, and "JSON array element <index>"
  // in *where.
  static TRITONSERVER_Error* Lookup(
      const JsonValue& self, size_t index, const rapidjson::Value** found,
      std::string* where)
  {
    const rapidjson::Value& v = Of(self);
    *where = "JSON array element " + std::to_string(index);
    THOST_RETURN_ERROR_IF_FALSE(
        v.IsArray(), TRITONSERVER_ERROR_INVALID_ARG,
        "cannot read " + *where + " of a JSON " + TypeName(v) +
            ": not an array");
    THOST_RETURN_ERROR_IF_FALSE(
        index < v.Size(), TRITONSERVER_ERROR_NOT_FOUND,
        *where + " is absent: the array has " + std::to_string(v.Size()));
    *found = &v[static_cast<rapidjson::SizeType>(index)];
    return nullptr;
  }

  // Member 'key' (a name) or element 'key' (an index) of 'self' as 'kind'.
  template <typename Key, typename T>
  static TRITONSERVER_Error* ReadAt(
      const JsonValue& self, Key key, Kind kind, T* out)
  {
    const rapidjson::Value* found = nullptr;
    std::string where;
    THOST_RETURN_IF_ERROR(Lookup(self, key, &found, &where));
    return Read(self, *found, kind, where, out);
  }

  // 'self' itself as 'kind'.
  template <typename T>
  static TRITONSERVER_Error* ReadSelf(const JsonValue& self, Kind kind, T* out)
  {
    return Read(self, Of(self), kind, "JSON value", out);
  }
};

using Access = JsonValueAccess;

// ---- parsing and writing -------------------------------------------------

TRITONSERVER_Error*
JsonValue::Parse(const char* text, size_t size)
{
  auto document = std::make_shared<rapidjson::Document>();
  document->Parse(text, size);
  if (document->HasParseError()) {
    const size_t offset = document->GetErrorOffset();
    size_t line = 1;
    size_t column = 1;
    for (size_t i = 0; i < offset && i < size; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return MakeError(
        TRITONSERVER_ERROR_INTERNAL,
        "not valid JSON: " + ParseErrorReason(document->GetParseError()) +
            " at line " + std::to_string(line) + ", column " +
            std::to_string(column));
  }
  value_ = document.get();  // a Document is its root value
  document_ = std::move(document);
  return nullptr;
}

TRITONSERVER_Error*
JsonValue::Parse(const std::string& text)
{
  return Parse(text.data(), text.size());
}

TRITONSERVER_Error*
JsonValue::Write(std::string* text) const
{
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  THOST_RETURN_ERROR_IF_FALSE(
      Access::Of(*this).Accept(writer), TRITONSERVER_ERROR_INTERNAL,
      "failed to write a JSON value");
  text->assign(buffer.GetString(), buffer.GetSize());
  return nullptr;
}

// ---- types ---------------------------------------------------------------

bool
JsonValue::IsNull() const
{
  return Access::Of(*this).IsNull();
}

bool
JsonValue::IsBool() const
{
  return Access::Of(*this).IsBool();
}

bool
JsonValue::IsInt() const
{
  return Access::Of(*this).IsInt64();
}

bool
JsonValue::IsNumber() const
{
  return Access::Of(*this).IsNumber();
}

bool
JsonValue::IsString() const
{
  return Access::Of(*this).IsString();
}

bool
JsonValue::IsArray() const
{
  return Access::Of(*this).IsArray();
}

bool
JsonValue::IsObject() const
{
  return Access::Of(*this).IsObject();
}

const char*
JsonValue::TypeName() const
{
  return backend::TypeName(Access::Of(*this));
}

// ---- objects -------------------------------------------------------------

bool
JsonValue::Find(const char* name) const
{
  return Find(name, nullptr);
}

bool
JsonValue::Find(const char* name, JsonValue* value) const
{
  const rapidjson::Value& v = Access::Of(*this);
  if (!v.IsObject()) {
    return false;
  }
  const auto member = v.FindMember(name);
  if (member == v.MemberEnd()) {
    return false;
  }
  if (value != nullptr) {
    *value = Access::Child(*this, member->value);
  }
  return true;
}

TRITONSERVER_Error*
JsonValue::Members(std::vector<std::string>* names) const
{
  const rapidjson::Value& v = Access::Of(*this);
  THOST_RETURN_ERROR_IF_FALSE(
      v.IsObject(), TRITONSERVER_ERROR_INVALID_ARG,
      std::string("JSON value is ") + TypeName() + ", not an object");
  names->clear();
  for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
    names->emplace_back(m->name.GetString(), m->name.GetStringLength());
  }
  return nullptr;
}

TRITONSERVER_Error*
JsonValue::MemberAsString(const char* name, std::string* value) const
{
  return Access::ReadAt(*this, name, Kind::kString, value);
}

TRITONSERVER_Error*
JsonValue::MemberAsInt(const char* name, int64_t* value) const
{
  return Access::ReadAt(*this, name, Kind::kInt, value);
}

TRITONSERVER_Error*
JsonValue::MemberAsUInt(const char* name, uint64_t* value) const
{
  return Access::ReadAt(*this, name, Kind::kUInt, value);
}

TRITONSERVER_Error*
JsonValue::MemberAsBool(const char* name, bool* value) const
{
  return Access::ReadAt(*this, name, Kind::kBool, value);
}

TRITONSERVER_Error*
JsonValue::MemberAsDouble(const char* name, double* value) const
{
  return Access::ReadAt(*this, name, Kind::kDouble, value);
}

TRITONSERVER_Error*
JsonValue::MemberAsArray(const char* name, JsonValue* value) const
{
  return Access::ReadAt(*this, name, Kind::kArray, value);
}

TRITONSERVER_Error*
JsonValue::MemberAsObject(const char* name, JsonValue* value) const
{
  return Access::ReadAt(*this, name, Kind::kObject, value);
}

// ---- arrays --------------------------------------------------------------

size_t
JsonValue::ArraySize() const
{
  const rapidjson::Value& v = Access::Of(*this);
  return v.IsArray() ? v.Size() : 0;
}

TRITONSERVER_Error*
JsonValue::At(size_t index, JsonValue* value) const
{
  return Access::ReadAt(*this, index, Kind::kAny, value);
}

TRITONSERVER_Error*
JsonValue::IndexAsString(size_t index, std::string* value) const
{
  return Access::ReadAt(*this, index, Kind::kString, value);
}

TRITONSERVER_Error*
JsonValue::IndexAsInt(size_t index, int64_t* value) const
{
  return Access::ReadAt(*this, index, Kind::kInt, value);
}

TRITONSERVER_Error*
JsonValue::IndexAsUInt(size_t index, uint64_t* value) const
{
  return Access::ReadAt(*this, index, Kind::kUInt, value);
}

TRITONSERVER_Error*
JsonValue::IndexAsBool(size_t index, bool* value) const
{
  return Access::ReadAt(*this, index, Kind::kBool, value);
}

TRITONSERVER_Error*
JsonValue::IndexAsDouble(size_t index, double* value) const
{
  return Access::ReadAt(*this, index, Kind::kDouble, value);
}

TRITONSERVER_Error*
JsonValue::IndexAsArray(size_t index, JsonValue* value) const
{
  return Access::ReadAt(*this, index, Kind::kArray, value);
}

TRITONSERVER_Error*
JsonValue::IndexAsObject(size_t index, JsonValue* value) const
{
  return Access::ReadAt(*this, index, Kind::kObject, value);
}

// ---- this value ----------------------------------------------------------

TRITONSERVER_Error*
JsonValue::AsString(std::string* value) const
{
  return Access::ReadSelf(*this, Kind::kString, value);
}

TRITONSERVER_Error*
JsonValue::AsInt(int64_t* value) const
{
  return Access::ReadSelf(*this, Kind::kInt, value);
}

TRITONSERVER_Error*
JsonValue::AsUInt(uint64_t* value) const
{
  return Access::ReadSelf(*this, Kind::kUInt, value);
}

TRITONSERVER_Error*
JsonValue::AsBool(bool* value) const
{
  return Access::ReadSelf(*this, Kind::kBool, value);
}

TRITONSERVER_Error*
JsonValue::AsDouble(double* value) const
{
  return Access::ReadSelf(*this, Kind::kDouble, value);
}

}}  // namespace tritonhost::backend
