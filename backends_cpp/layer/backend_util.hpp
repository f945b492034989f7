// backend_util.hpp: header-only C++17 helpers for tritonhost's C++ backends.
//
// What is here, in the order a backend meets it:
//   * THOST_* macros: return errors early, log, log-and-drop an error;
//   * RAII holders for host objects (error, message, response factory,
//     response statistics);
//   * NowNs(), ShapeToString(), RequestIdString();
//   * ReadInputTensor(): copy a whole input tensor into a caller's buffer;
//   * ModelConfig: the parts of the model configuration JSON a backend
//     usually needs, read through TRITONBACKEND_ModelConfig;
//   * ThreadTracker: counts detached worker threads so an instance can wait
//     for them in ModelInstanceFinalize.
//
// Every function that can fail returns TRITONSERVER_Error* (nullptr on
// success); the caller owns a returned error. Nothing here keeps global
// state, so any number of models, instances and threads may use it at once.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "json_value.hpp"
#include "triton/core/tritonbackend.h"
#include "triton/core/tritonserver.h"

// Evaluates X (a TRITONSERVER_Error*) and returns it if it is an error.
#define THOST_RETURN_IF_ERROR(X)                    \
  do {                                              \
    TRITONSERVER_Error* thost_rie_err_ = (X);       \
    if (thost_rie_err_ != nullptr) {                \
      return thost_rie_err_;                        \
    }                                               \
  } while (false)

// Returns a new error with CODE and MSG (anything std::string accepts)
// unless P holds.
#define THOST_RETURN_ERROR_IF_FALSE(P, CODE, MSG)                          \
  do {                                                                     \
    if (!(P)) {                                                            \
      return ::tritonhost::backend::MakeError((CODE), ::std::string(MSG)); \
    }                                                                      \
  } while (false)

// Logs MSG (anything std::string accepts) at LEVEL with this file and line.
#define THOST_LOG_MESSAGE(LEVEL, MSG) \
  ::tritonhost::backend::LogMessage((LEVEL), __FILE__, __LINE__, (MSG))

// If X is an error, logs "CONTEXT: <code> - <message>" at ERROR level and
// deletes it.
#define THOST_LOG_IF_ERROR(X, CONTEXT) \
  ::tritonhost::backend::LogIfError((X), __FILE__, __LINE__, (CONTEXT))

namespace tritonhost { namespace backend {

// ---- errors and logging --------------------------------------------------

inline TRITONSERVER_Error*
MakeError(TRITONSERVER_Error_Code code, const std::string& msg)
{
  return TRITONSERVER_ErrorNew(code, msg.c_str());  // copies msg
}

// A new error with the code of 'err' and the message 'prefix' + the message
// of 'err'; deletes 'err'.
inline TRITONSERVER_Error*
PrefixError(const std::string& prefix, TRITONSERVER_Error* err)
{
  TRITONSERVER_Error* prefixed = MakeError(
      TRITONSERVER_ErrorCode(err), prefix + TRITONSERVER_ErrorMessage(err));
  TRITONSERVER_ErrorDelete(err);
  return prefixed;
}

// "<code string> - <message>", for logs.
inline std::string
ErrorString(TRITONSERVER_Error* err)
{
  if (err == nullptr) {
    return "success";
  }
  return std::string(TRITONSERVER_ErrorCodeString(err)) + " - " +
         TRITONSERVER_ErrorMessage(err);
}

inline void
LogMessage(
    TRITONSERVER_LogLevel level, const char* file, int line,
    const std::string& msg)
{
  TRITONSERVER_Error* err =
      TRITONSERVER_LogMessage(level, file, line, msg.c_str());
  if (err != nullptr) {
    // The host's log is unusable; stderr is the last place left.
    std::fprintf(
        stderr, "%s:%d: %s (logging failed: %s)\n", file, line, msg.c_str(),
        ErrorString(err).c_str());
    TRITONSERVER_ErrorDelete(err);
  }
}

inline void
LogIfError(
    TRITONSERVER_Error* err, const char* file, int line,
    const std::string& context)
{
  if (err != nullptr) {
    LogMessage(
        TRITONSERVER_LOG_ERROR, file, line,
        context + ": " + ErrorString(err));
    TRITONSERVER_ErrorDelete(err);
  }
}

// ---- RAII holders --------------------------------------------------------

struct ErrorDeleter {
  void operator()(TRITONSERVER_Error* err) const
  {
    TRITONSERVER_ErrorDelete(err);
  }
};
using ErrorPtr = std::unique_ptr<TRITONSERVER_Error, ErrorDeleter>;

// For messages the caller owns (TRITONBACKEND_ModelConfig); never for the
// host-owned ones (BackendConfig, ModelInstanceHostPolicy).
struct MessageDeleter {
  void operator()(TRITONSERVER_Message* msg) const
  {
    THOST_LOG_IF_ERROR(
        TRITONSERVER_MessageDelete(msg), "failed to delete message");
  }
};
using MessagePtr = std::unique_ptr<TRITONSERVER_Message, MessageDeleter>;

struct ResponseFactoryDeleter {
  void operator()(TRITONBACKEND_ResponseFactory* factory) const
  {
    THOST_LOG_IF_ERROR(
        TRITONBACKEND_ResponseFactoryDelete(factory),
        "failed to delete response factory");
  }
};
using ResponseFactoryPtr =
    std::unique_ptr<TRITONBACKEND_ResponseFactory, ResponseFactoryDeleter>;

struct ResponseStatisticsDeleter {
  void operator()(TRITONBACKEND_ModelInstanceResponseStatistics* stats) const
  {
    THOST_LOG_IF_ERROR(
        TRITONBACKEND_ModelInstanceResponseStatisticsDelete(stats),
        "failed to delete response statistics");
  }
};
using ResponseStatisticsPtr = std::unique_ptr<
    TRITONBACKEND_ModelInstanceResponseStatistics, ResponseStatisticsDeleter>;

// ---- small helpers -------------------------------------------------------

// Nanoseconds on the steady clock (CLOCK_MONOTONIC), the time base of the
// statistics calls.
inline uint64_t
NowNs()
{
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// "[d0,d1,...]"
inline std::string
ShapeToString(const int64_t* dims, uint32_t dims_count)
{
  std::string s = "[";
  for (uint32_t i = 0; i < dims_count; ++i) {
    if (i > 0) {
      s += ",";
    }
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

inline std::string
ShapeToString(const std::vector<int64_t>& shape)
{
  return ShapeToString(shape.data(), static_cast<uint32_t>(shape.size()));
}

// The request's id for messages; "<id_unknown>" when it has none.
inline std::string
RequestIdString(TRITONBACKEND_Request* request)
{
  const char* id = nullptr;
  TRITONSERVER_Error* err = TRITONBACKEND_RequestId(request, &id);
  if (err != nullptr) {
    TRITONSERVER_ErrorDelete(err);
    id = nullptr;
  }
  return (id == nullptr || id[0] == '\0') ? "<id_unknown>" : id;
}

// ---- inputs --------------------------------------------------------------

// Copies input tensor 'name' of 'request' into 'buffer', concatenating all
// of its buffers (the host's default buffers: host policy nullptr). On entry
// *buffer_byte_size is the capacity of 'buffer'; on success it is the number
// of bytes copied. INVALID_ARG if the tensor is larger than the buffer,
// UNSUPPORTED if a buffer is in GPU memory (this layer copies on the CPU).
inline TRITONSERVER_Error*
ReadInputTensor(
    TRITONBACKEND_Request* request, const std::string& name, char* buffer,
    size_t* buffer_byte_size)
{
  TRITONBACKEND_Input* input = nullptr;
  THOST_RETURN_IF_ERROR(
      TRITONBACKEND_RequestInput(request, name.c_str(), &input));

  uint64_t byte_size = 0;
  uint32_t buffer_count = 0;
  THOST_RETURN_IF_ERROR(TRITONBACKEND_InputPropertiesForHostPolicy(
      input, nullptr /* host_policy */, nullptr /* name */,
      nullptr /* datatype */, nullptr /* shape */, nullptr /* dims_count */,
      &byte_size, &buffer_count));
  THOST_RETURN_ERROR_IF_FALSE(
      byte_size <= *buffer_byte_size, TRITONSERVER_ERROR_INVALID_ARG,
      "buffer too small for input tensor '" + name + "' of request " +
          RequestIdString(request) + ": need " + std::to_string(byte_size) +
          " bytes, have " + std::to_string(*buffer_byte_size));

  size_t copied = 0;
  for (uint32_t b = 0; b < buffer_count; ++b) {
    const void* src = nullptr;
    uint64_t src_size = 0;
    TRITONSERVER_MemoryType memory_type = TRITONSERVER_MEMORY_CPU;
    int64_t memory_type_id = 0;
    THOST_RETURN_IF_ERROR(TRITONBACKEND_InputBufferForHostPolicy(
        input, nullptr /* host_policy */, b, &src, &src_size, &memory_type,
        &memory_type_id));
    THOST_RETURN_ERROR_IF_FALSE(
        memory_type != TRITONSERVER_MEMORY_GPU, TRITONSERVER_ERROR_UNSUPPORTED,
        "input tensor '" + name + "' of request " + RequestIdString(request) +
            " is in GPU memory; this backend reads CPU memory only");
    THOST_RETURN_ERROR_IF_FALSE(
        src_size <= *buffer_byte_size - copied, TRITONSERVER_ERROR_INTERNAL,
        "buffers of input tensor '" + name + "' of request " +
            RequestIdString(request) + " hold more than its byte size " +
            std::to_string(byte_size));
    if (src_size > 0) {
      std::memcpy(buffer + copied, src, src_size);
    }
    copied += src_size;
  }
  *buffer_byte_size = copied;
  return nullptr;
}

// ---- model configuration -------------------------------------------------

// One entry of the config's "input" or "output" array.
struct TensorConfig {
  std::string name;
  std::string data_type;      // e.g. "TYPE_INT32"
  std::vector<int64_t> dims;  // without the batch dimension
  bool optional = false;      // inputs only
};

// The model configuration as JSON (snake_case field names, as Triton
// serialises its ModelConfig protobuf). A field that is absent reads as its
// protobuf default (0, "", false, empty); a field that is present with the
// wrong JSON type is an INVALID_ARG error naming the field.
class ModelConfig {
 public:
  // Reads version 1 of 'model's configuration from the host.
  static TRITONSERVER_Error* Read(TRITONBACKEND_Model* model, ModelConfig* out)
  {
    TRITONSERVER_Message* raw = nullptr;
    THOST_RETURN_IF_ERROR(
        TRITONBACKEND_ModelConfig(model, 1 /* config_version */, &raw));
    MessagePtr message(raw);
    const char* json = nullptr;
    size_t size = 0;
    THOST_RETURN_IF_ERROR(
        TRITONSERVER_MessageSerializeToJson(message.get(), &json, &size));
    return Parse(json, size, out);  // copies what it keeps
  }

  // Parses configuration JSON text (exposed for tests and tools).
  static TRITONSERVER_Error* Parse(
      const char* json, size_t size, ModelConfig* out)
  {
    JsonValue root;
    TRITONSERVER_Error* err = root.Parse(json, size);
    if (err != nullptr) {
      // "model configuration is not valid JSON: <reason> at line L, ..."
      return PrefixError("model configuration is ", err);
    }
    out->root_ = root;
    out->json_.assign(json, size);
    THOST_RETURN_ERROR_IF_FALSE(
        root.IsObject(), TRITONSERVER_ERROR_INVALID_ARG,
        "model configuration must be a JSON object");
    THOST_RETURN_IF_ERROR(GetString(root, "name", "name", &out->name_));
    THOST_RETURN_IF_ERROR(GetMember(
        root, "max_batch_size", "max_batch_size", &JsonValue::IsInt,
        "an integer", &JsonValue::AsInt, &out->max_batch_size_));
    THOST_RETURN_IF_ERROR(GetTensors(root, "input", &out->inputs_));
    THOST_RETURN_IF_ERROR(GetTensors(root, "output", &out->outputs_));
    return GetParameters(root, &out->parameters_);
  }

  const std::string& Name() const { return name_; }
  int64_t MaxBatchSize() const { return max_batch_size_; }
  const std::vector<TensorConfig>& Inputs() const { return inputs_; }
  const std::vector<TensorConfig>& Outputs() const { return outputs_; }
  // parameters.<key>.string_value for every key.
  const std::map<std::string, std::string>& Parameters() const
  {
    return parameters_;
  }
  // The JSON text as received, for logging.
  const std::string& Json() const { return json_; }
  // The parsed document, for fields this class does not read.
  const JsonValue& Root() const { return root_; }

 private:
  static TRITONSERVER_Error* TypeError(
      const std::string& path, const char* want, const JsonValue& v)
  {
    return MakeError(
        TRITONSERVER_ERROR_INVALID_ARG,
        "model configuration field '" + path + "' must be " + want +
            ", got " + v.TypeName());
  }

  // Reads member 'key' of 'obj' into *out with 'read' (JsonValue::AsInt,
  // ...). An absent member leaves T's default (0, "", false); one that
  // 'is' refuses is a TypeError for 'path', saying it must be 'want'.
  template <typename T>
  static TRITONSERVER_Error* GetMember(
      const JsonValue& obj, const char* key, const std::string& path,
      bool (JsonValue::*is)() const, const char* want,
      TRITONSERVER_Error* (JsonValue::*read)(T*) const, T* out)
  {
    JsonValue v;
    *out = T();
    if (!obj.Find(key, &v)) {
      return nullptr;
    }
    if (!(v.*is)()) {
      return TypeError(path, want, v);
    }
    return (v.*read)(out);
  }

  static TRITONSERVER_Error* GetString(
      const JsonValue& obj, const char* key, const std::string& path,
      std::string* out)
  {
    return GetMember(
        obj, key, path, &JsonValue::IsString, "a string", &JsonValue::AsString,
        out);
  }

  static TRITONSERVER_Error* GetDims(
      const JsonValue& obj, const std::string& path, std::vector<int64_t>* out)
  {
    JsonValue dims;
    out->clear();
    if (!obj.Find("dims", &dims)) {
      return nullptr;
    }
    if (!dims.IsArray()) {
      return TypeError(path, "an array of integers", dims);
    }
    for (size_t i = 0; i < dims.ArraySize(); ++i) {
      JsonValue v;
      int64_t d = 0;
      THOST_RETURN_IF_ERROR(dims.At(i, &v));
      if (!v.IsInt()) {
        return TypeError(path + "[" + std::to_string(i) + "]", "an integer", v);
      }
      THOST_RETURN_IF_ERROR(v.AsInt(&d));
      out->push_back(d);
    }
    return nullptr;
  }

  static TRITONSERVER_Error* GetTensors(
      const JsonValue& root, const char* key, std::vector<TensorConfig>* out)
  {
    JsonValue arr;
    out->clear();
    if (!root.Find(key, &arr)) {
      return nullptr;
    }
    if (!arr.IsArray()) {
      return TypeError(key, "an array", arr);
    }
    for (size_t i = 0; i < arr.ArraySize(); ++i) {
      const std::string path = std::string(key) + "[" + std::to_string(i) + "]";
      JsonValue t;
      THOST_RETURN_IF_ERROR(arr.At(i, &t));
      if (!t.IsObject()) {
        return TypeError(path, "an object", t);
      }
      TensorConfig tc;
      THOST_RETURN_IF_ERROR(GetString(t, "name", path + ".name", &tc.name));
      THOST_RETURN_IF_ERROR(
          GetString(t, "data_type", path + ".data_type", &tc.data_type));
      THOST_RETURN_IF_ERROR(GetDims(t, path + ".dims", &tc.dims));
      THOST_RETURN_IF_ERROR(GetMember(
          t, "optional", path + ".optional", &JsonValue::IsBool,
          "true or false", &JsonValue::AsBool, &tc.optional));
      out->push_back(std::move(tc));
    }
    return nullptr;
  }

  static TRITONSERVER_Error* GetParameters(
      const JsonValue& root, std::map<std::string, std::string>* out)
  {
    JsonValue params;
    out->clear();
    if (!root.Find("parameters", &params)) {
      return nullptr;
    }
    if (!params.IsObject()) {
      return TypeError("parameters", "an object", params);
    }
    std::vector<std::string> keys;
    THOST_RETURN_IF_ERROR(params.Members(&keys));
    for (const std::string& key : keys) {
      const std::string path = "parameters." + key + ".string_value";
      JsonValue param;
      JsonValue value;
      std::string s;
      // A repeated key finds its first member each time.
      if (!params.Find(key.c_str(), &param) ||
          !param.Find("string_value", &value) || !value.IsString()) {
        return MakeError(
            TRITONSERVER_ERROR_INVALID_ARG,
            "model configuration field '" + path + "' must be a string");
      }
      THOST_RETURN_IF_ERROR(value.AsString(&s));
      out->emplace(key, std::move(s));  // first duplicate wins
    }
    return nullptr;
  }

  JsonValue root_;
  std::string json_;
  std::string name_;
  int64_t max_batch_size_ = 0;
  std::vector<TensorConfig> inputs_;
  std::vector<TensorConfig> outputs_;
  std::map<std::string, std::string> parameters_;
};

// ---- worker threads ------------------------------------------------------

// Counts the detached threads an instance has started, so that its
// finalizer can wait for them. Call Starting() before creating a thread
// (and Finished() yourself only if creating it fails); the thread's body
// declares a ThreadTracker::Scope as its first statement, so the count
// drops on every way out of the body, after everything the body owns has
// been destroyed.
class ThreadTracker {
 public:
  class Scope {
   public:
    explicit Scope(ThreadTracker* tracker) : tracker_(tracker) {}
    ~Scope() { tracker_->Finished(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    ThreadTracker* tracker_;
  };

  void Starting() { running_.fetch_add(1, std::memory_order_acq_rel); }
  void Finished() { running_.fetch_sub(1, std::memory_order_acq_rel); }
  size_t Running() const { return running_.load(std::memory_order_acquire); }

  // Sleep-polls until no tracked thread is running.
  void WaitIdle(std::chrono::milliseconds poll) const
  {
    while (Running() > 0) {
      std::this_thread::sleep_for(poll);
    }
  }

 private:
  std::atomic<size_t> running_{0};
};

}}  // namespace tritonhost::backend
