// json_value.hpp: JsonValue, a read-only view of a JSON document parsed with
// RapidJSON (third_party/rapidjson), for reading the messages the host
// hands a backend as JSON (model configuration, host policy).
//
// The accessors are named as in Triton's C++ backends, so a backend ported
// from Triton reads the same way:
//
//   JsonValue config;
//   THOST_RETURN_IF_ERROR(config.Parse(json, size));
//   std::string name;
//   THOST_RETURN_IF_ERROR(config.MemberAsString("name", &name));
//   JsonValue inputs;
//   if (config.Find("input", &inputs)) {
//     for (size_t i = 0; i < inputs.ArraySize(); ++i) {
//       JsonValue input;
//       THOST_RETURN_IF_ERROR(inputs.IndexAsObject(i, &input));
//       ...
//     }
//   }
//
// Errors: every fallible call returns a TRITONSERVER_Error* that the caller
// owns, nullptr on success; the output is untouched on error. Parse and
// Write fail with INTERNAL, a member or index that is not there is
// NOT_FOUND, a value of another type than asked for is INVALID_ARG. Find
// and the Is* tests answer with a bool instead.
//
// Numbers keep the kind their text had: an integer literal that fits
// int64_t reads with AsInt (and AsUInt when not negative), one that only
// fits uint64_t with AsUInt alone; every number reads with AsDouble.
//
// Lifetime and threads: a JsonValue obtained from another (Find,
// MemberAs*, IndexAs*) shares the parsed document, which lives as long as
// any JsonValue that refers to it. A document is never changed after Parse,
// so any number of threads may read it at once; a single JsonValue object
// is not for assigning (Parse, operator=) on one thread while another
// reads it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rapidjson/fwd.h"
#include "triton/core/tritonserver.h"

namespace tritonhost { namespace backend {

class JsonValue {
 public:
  // A JSON null that belongs to no document.
  JsonValue() = default;

  // Parses text[0, size) (a NUL byte right after the value is accepted, so
  // a size that counts the terminator works) and makes *this the root of
  // the new document. INTERNAL "not valid JSON: <reason> at line L, column
  // C" (1-based; columns count bytes) if it is not one JSON value.
  TRITONSERVER_Error* Parse(const char* text, size_t size);
  TRITONSERVER_Error* Parse(const std::string& text);

  // Replaces *text with this value as compact JSON.
  TRITONSERVER_Error* Write(std::string* text) const;

  bool IsNull() const;
  bool IsBool() const;
  // A number that reads with AsInt.
  bool IsInt() const;
  bool IsNumber() const;
  bool IsString() const;
  bool IsArray() const;
  bool IsObject() const;
  // "null", "bool", "integer" (IsInt), "number" (any other number),
  // "string", "array" or "object": static strings, for messages.
  const char* TypeName() const;

  // Whether this is an object with a member 'name'; if so and 'value' is
  // not nullptr, *value becomes that member (the first one, should the
  // name repeat).
  bool Find(const char* name) const;
  bool Find(const char* name, JsonValue* value) const;
  // The names of the members of an object, in document order (a repeated
  // name is listed each time).
  TRITONSERVER_Error* Members(std::vector<std::string>* names) const;

  TRITONSERVER_Error* MemberAsString(
      const char* name, std::string* value) const;
  TRITONSERVER_Error* MemberAsInt(const char* name, int64_t* value) const;
  TRITONSERVER_Error* MemberAsUInt(const char* name, uint64_t* value) const;
  TRITONSERVER_Error* MemberAsBool(const char* name, bool* value) const;
  TRITONSERVER_Error* MemberAsDouble(const char* name, double* value) const;
  TRITONSERVER_Error* MemberAsArray(const char* name, JsonValue* value) const;
  TRITONSERVER_Error* MemberAsObject(const char* name, JsonValue* value) const;

  // The number of elements of an array; 0 for anything else.
  size_t ArraySize() const;
  // Element 'index' of an array, of any type.
  TRITONSERVER_Error* At(size_t index, JsonValue* value) const;
  TRITONSERVER_Error* IndexAsString(size_t index, std::string* value) const;
  TRITONSERVER_Error* IndexAsInt(size_t index, int64_t* value) const;
  TRITONSERVER_Error* IndexAsUInt(size_t index, uint64_t* value) const;
  TRITONSERVER_Error* IndexAsBool(size_t index, bool* value) const;
  TRITONSERVER_Error* IndexAsDouble(size_t index, double* value) const;
  TRITONSERVER_Error* IndexAsArray(size_t index, JsonValue* value) const;
  TRITONSERVER_Error* IndexAsObject(size_t index, JsonValue* value) const;

  // This value itself.
  TRITONSERVER_Error* AsString(std::string* value) const;
  TRITONSERVER_Error* AsInt(int64_t* value) const;
  TRITONSERVER_Error* AsUInt(uint64_t* value) const;
  TRITONSERVER_Error* AsBool(bool* value) const;
  TRITONSERVER_Error* AsDouble(double* value) const;

 private:
  friend struct JsonValueAccess;  // json_value.cc's helpers

  // nullptr for a default JsonValue; otherwise the document that value_
  // lies in, kept alive by every JsonValue that refers to it.
  std::shared_ptr<const rapidjson::Document> document_;
  const rapidjson::Value* value_ = nullptr;
};

}}  // namespace tritonhost::backend
