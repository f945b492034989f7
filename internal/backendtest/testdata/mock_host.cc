// mock_host.cc: a minimal host for the backend API, to test the backends'
// behaviour without the real server. Built by build_test.go with -rdynamic
// (so dlopen'd backends resolve their TRITON* imports against it) and run
// as: mock_host <backends_dir>. Prints "ok" and exits 0, or lists failures.
//
// It implements only what repeat, square and identity import, records every
// response, flag, statistic and release, and checks the protocol rules a
// real host relies on (no response after FINAL, statistics before release,
// nothing touched after release: released inputs are freed).
#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "triton/core/tritonbackend.h"
#include "triton/core/tritonserver.h"

// ---- failures ------------------------------------------------------------

static std::mutex g_fail_mu;
static int g_failures = 0;
static std::string g_scenario;

static void
Fail(const std::string& what, int line)
{
  std::lock_guard<std::mutex> lk(g_fail_mu);
  std::fprintf(
      stderr, "FAIL [%s] line %d: %s\n", g_scenario.c_str(), line,
      what.c_str());
  g_failures++;
}
#define CHECK(C)          \
  do {                    \
    if (!(C))             \
      Fail(#C, __LINE__); \
  } while (0)
#define CHECK_EQ(A, B)                                                        \
  do {                                                                        \
    auto a_ = (A);                                                            \
    auto b_ = (B);                                                            \
    if (!(a_ == b_))                                                          \
      Fail(                                                                   \
          std::string(#A " == " #B ": got ") + std::to_string(a_) + " and " + \
              std::to_string(b_),                                             \
          __LINE__);                                                          \
  } while (0)

// ---- host objects --------------------------------------------------------

struct TRITONSERVER_Error {
  TRITONSERVER_Error_Code code;
  std::string msg;
};
struct TRITONSERVER_Message {
  std::string json;
};

struct RecordedOutput {
  TRITONSERVER_DataType dtype;
  std::vector<int64_t> shape;
  std::string data;
};
struct Event {  // one ResponseSend or ResponseFactorySendFlags
  bool has_response = false;
  uint32_t flags = 0;
  bool error = false;
  TRITONSERVER_Error_Code code = TRITONSERVER_ERROR_UNKNOWN;
  std::string msg;
  std::map<std::string, RecordedOutput> outputs;
};
struct ResponseStats {
  uint64_t start = 0, compute_output_start = 0, end = 0;
  bool error = false;
  TRITONSERVER_Error_Code code = TRITONSERVER_ERROR_UNKNOWN;
  bool has_instance = false, has_factory = false;
};
struct RequestStats {
  bool success = false;
  bool after_release = false;
  size_t events_before = 0;  // responses and flags sent before the report
};

// Everything the host observes about one request.
struct Stream {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Event> events;
  std::vector<ResponseStats> response_stats;
  std::vector<RequestStats> request_stats;
  bool final = false;
  bool released = false;
  int factories = 0;
  int violations = 0;  // responses after FINAL, etc.
  std::atomic<bool> cancelled{false};
  bool fail_output_buffer = false;

  bool WaitDone(std::chrono::milliseconds timeout)
  {
    std::unique_lock<std::mutex> lk(mu);
    return cv.wait_for(lk, timeout, [&] { return final && factories == 0; });
  }
};

struct TRITONBACKEND_Input {
  std::string name;
  TRITONSERVER_DataType dtype;
  std::vector<int64_t> shape;
  std::vector<std::string> buffers;
  uint64_t ByteSize() const
  {
    uint64_t n = 0;
    for (const auto& b : buffers) n += b.size();
    return n;
  }
};

struct TRITONBACKEND_Request {
  std::string id;
  std::vector<std::unique_ptr<TRITONBACKEND_Input>> inputs;
  std::vector<std::string> outputs;  // requested output names
  std::shared_ptr<Stream> stream = std::make_shared<Stream>();
};

struct TRITONBACKEND_ResponseFactory {
  std::shared_ptr<Stream> stream;
};
struct TRITONBACKEND_Output {
  std::string name;
  TRITONSERVER_DataType dtype;
  std::vector<int64_t> shape;
  std::string data;
  bool has_buffer = false;
};
struct TRITONBACKEND_Response {
  std::shared_ptr<Stream> stream;
  std::vector<std::unique_ptr<TRITONBACKEND_Output>> outputs;
};
struct TRITONBACKEND_ModelInstanceResponseStatistics {
  ResponseStats stats;
  std::shared_ptr<Stream> stream;
};

struct TRITONBACKEND_Backend {
  std::string name;
  TRITONSERVER_Message config{"{\"cmdline\":{}}"};
  void* state = nullptr;
};
struct TRITONBACKEND_BackendAttribute {
  bool parallel = false;
};
struct TRITONBACKEND_Model {
  std::string name;
  uint64_t version = 1;
  std::string config;
  void* state = nullptr;
};
struct TRITONBACKEND_ModelInstance {
  std::string name;
  TRITONSERVER_InstanceGroupKind kind = TRITONSERVER_INSTANCEGROUPKIND_CPU;
  int32_t device = 0;
  TRITONBACKEND_Model* model = nullptr;
  void* state = nullptr;
};

struct BatchStats {
  uint64_t batch_size;
};
static std::mutex g_batch_mu;
static std::vector<BatchStats> g_batch_stats;
static uint32_t g_api_major = TRITONBACKEND_API_VERSION_MAJOR;
static uint32_t g_api_minor = TRITONBACKEND_API_VERSION_MINOR;

static TRITONSERVER_Error*
Err(TRITONSERVER_Error_Code code, const std::string& msg)
{
  return new TRITONSERVER_Error{code, msg};
}

// ---- the host API --------------------------------------------------------

extern "C" {

TRITONSERVER_Error*
TRITONSERVER_ErrorNew(TRITONSERVER_Error_Code code, const char* msg)
{
  return Err(code, msg);
}
void
TRITONSERVER_ErrorDelete(TRITONSERVER_Error* error)
{
  delete error;
}
const char*
TRITONSERVER_ErrorMessage(TRITONSERVER_Error* error)
{
  return error->msg.c_str();
}
TRITONSERVER_Error_Code
TRITONSERVER_ErrorCode(TRITONSERVER_Error* error)
{
  return error->code;
}
const char*
TRITONSERVER_ErrorCodeString(TRITONSERVER_Error* error)
{
  static const char* names[] = {
      "Unknown",     "Internal",    "Not found",      "Invalid argument",
      "Unavailable", "Unsupported", "Already exists", "Cancelled"};
  unsigned c = static_cast<unsigned>(error->code);
  return c < 8 ? names[c] : "<invalid code>";
}
const char*
TRITONSERVER_InstanceGroupKindString(TRITONSERVER_InstanceGroupKind kind)
{
  static const char* names[] = {"AUTO", "CPU", "GPU", "MODEL"};
  unsigned k = static_cast<unsigned>(kind);
  return k < 4 ? names[k] : "<invalid>";
}
bool
TRITONSERVER_LogIsEnabled(TRITONSERVER_LogLevel)
{
  return true;  // every message is built and passed to LogMessage
}
TRITONSERVER_Error*
TRITONSERVER_LogMessage(
    TRITONSERVER_LogLevel level, const char* filename, const int line,
    const char* msg)
{
  if (std::getenv("MOCK_HOST_VERBOSE") != nullptr) {
    std::fprintf(stderr, "log %d %s:%d %s\n", level, filename, line, msg);
  }
  return nullptr;
}
TRITONSERVER_Error*
TRITONSERVER_MessageSerializeToJson(
    TRITONSERVER_Message* message, const char** base, size_t* byte_size)
{
  *base = message->json.c_str();
  *byte_size = message->json.size();
  return nullptr;
}
TRITONSERVER_Error*
TRITONSERVER_MessageDelete(TRITONSERVER_Message* message)
{
  delete message;
  return nullptr;
}

TRITONSERVER_Error*
TRITONBACKEND_ApiVersion(uint32_t* major, uint32_t* minor)
{
  *major = g_api_major;
  *minor = g_api_minor;
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_BackendName(TRITONBACKEND_Backend* backend, const char** name)
{
  *name = backend->name.c_str();
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_BackendConfig(
    TRITONBACKEND_Backend* backend, TRITONSERVER_Message** backend_config)
{
  *backend_config = &backend->config;  // host-owned
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_BackendAttributeSetParallelModelInstanceLoading(
    TRITONBACKEND_BackendAttribute* backend_attributes, bool enabled)
{
  backend_attributes->parallel = enabled;
  return nullptr;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelName(TRITONBACKEND_Model* model, const char** name)
{
  *name = model->name.c_str();
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_ModelVersion(TRITONBACKEND_Model* model, uint64_t* version)
{
  *version = model->version;
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_ModelConfig(
    TRITONBACKEND_Model* model, const uint32_t config_version,
    TRITONSERVER_Message** model_config)
{
  if (config_version != 1)
    return Err(TRITONSERVER_ERROR_UNSUPPORTED, "version");
  *model_config = new TRITONSERVER_Message{model->config};
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_ModelSetState(TRITONBACKEND_Model* model, void* state)
{
  model->state = state;
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_ModelState(TRITONBACKEND_Model* model, void** state)
{
  *state = model->state;
  return nullptr;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceName(
    TRITONBACKEND_ModelInstance* instance, const char** name)
{
  *name = instance->name.c_str();
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceKind(
    TRITONBACKEND_ModelInstance* instance, TRITONSERVER_InstanceGroupKind* kind)
{
  *kind = instance->kind;
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceDeviceId(
    TRITONBACKEND_ModelInstance* instance, int32_t* device_id)
{
  *device_id = instance->device;
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceModel(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Model** model)
{
  *model = instance->model;
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceSetState(
    TRITONBACKEND_ModelInstance* instance, void* state)
{
  instance->state = state;
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceState(
    TRITONBACKEND_ModelInstance* instance, void** state)
{
  *state = instance->state;
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceReportStatistics(
    TRITONBACKEND_ModelInstance*, TRITONBACKEND_Request* request,
    const bool success, const uint64_t, const uint64_t, const uint64_t,
    const uint64_t)
{
  std::lock_guard<std::mutex> lk(request->stream->mu);
  request->stream->request_stats.push_back(
      {success, request->stream->released, request->stream->events.size()});
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceReportBatchStatistics(
    TRITONBACKEND_ModelInstance*, const uint64_t batch_size, const uint64_t,
    const uint64_t, const uint64_t, const uint64_t)
{
  std::lock_guard<std::mutex> lk(g_batch_mu);
  g_batch_stats.push_back({batch_size});
  return nullptr;
}

TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceResponseStatisticsNew(
    TRITONBACKEND_ModelInstanceResponseStatistics** response_statistics)
{
  *response_statistics = new TRITONBACKEND_ModelInstanceResponseStatistics();
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceResponseStatisticsDelete(
    TRITONBACKEND_ModelInstanceResponseStatistics* response_statistics)
{
  delete response_statistics;
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceResponseStatisticsSetModelInstance(
    TRITONBACKEND_ModelInstanceResponseStatistics* s,
    TRITONBACKEND_ModelInstance* model_instance)
{
  s->stats.has_instance = model_instance != nullptr;
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseFactory(
    TRITONBACKEND_ModelInstanceResponseStatistics* s,
    TRITONBACKEND_ResponseFactory* response_factory)
{
  s->stats.has_factory = response_factory != nullptr;
  s->stream = response_factory->stream;
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseStart(
    TRITONBACKEND_ModelInstanceResponseStatistics* s, uint64_t response_start)
{
  s->stats.start = response_start;
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceResponseStatisticsSetComputeOutputStart(
    TRITONBACKEND_ModelInstanceResponseStatistics* s,
    uint64_t compute_output_start)
{
  s->stats.compute_output_start = compute_output_start;
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseEnd(
    TRITONBACKEND_ModelInstanceResponseStatistics* s, uint64_t response_end)
{
  s->stats.end = response_end;
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceResponseStatisticsSetError(
    TRITONBACKEND_ModelInstanceResponseStatistics* s, TRITONSERVER_Error* error)
{
  s->stats.error = error != nullptr;
  if (error != nullptr)
    s->stats.code = error->code;
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceReportResponseStatistics(
    TRITONBACKEND_ModelInstanceResponseStatistics* s)
{
  if (!s->stream)
    return Err(TRITONSERVER_ERROR_INVALID_ARG, "no factory set");
  std::lock_guard<std::mutex> lk(s->stream->mu);
  s->stream->response_stats.push_back(s->stats);
  return nullptr;
}

TRITONSERVER_Error*
TRITONBACKEND_RequestId(TRITONBACKEND_Request* request, const char** id)
{
  *id = request->id.c_str();
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_RequestInputCount(TRITONBACKEND_Request* request, uint32_t* count)
{
  *count = static_cast<uint32_t>(request->inputs.size());
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_RequestInputName(
    TRITONBACKEND_Request* request, const uint32_t index,
    const char** input_name)
{
  if (index >= request->inputs.size())
    return Err(TRITONSERVER_ERROR_INVALID_ARG, "index");
  *input_name = request->inputs[index]->name.c_str();
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_RequestInputByIndex(
    TRITONBACKEND_Request* request, const uint32_t index,
    TRITONBACKEND_Input** input)
{
  if (index >= request->inputs.size())
    return Err(TRITONSERVER_ERROR_INVALID_ARG, "index");
  *input = request->inputs[index].get();
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_RequestInput(
    TRITONBACKEND_Request* request, const char* name,
    TRITONBACKEND_Input** input)
{
  for (auto& in : request->inputs) {
    if (in->name == name) {
      *input = in.get();
      return nullptr;
    }
  }
  return Err(TRITONSERVER_ERROR_INVALID_ARG, std::string("no input ") + name);
}
TRITONSERVER_Error*
TRITONBACKEND_RequestOutputCount(
    TRITONBACKEND_Request* request, uint32_t* count)
{
  *count = static_cast<uint32_t>(request->outputs.size());
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_RequestOutputName(
    TRITONBACKEND_Request* request, const uint32_t index,
    const char** output_name)
{
  if (index >= request->outputs.size())
    return Err(TRITONSERVER_ERROR_INVALID_ARG, "index");
  *output_name = request->outputs[index].c_str();
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_RequestRelease(
    TRITONBACKEND_Request* request, uint32_t release_flags)
{
  std::lock_guard<std::mutex> lk(request->stream->mu);
  if (release_flags != TRITONSERVER_REQUEST_RELEASE_ALL ||
      request->stream->released) {
    request->stream->violations++;
  }
  request->stream->released = true;
  request->inputs.clear();  // a backend that reads them now reads freed memory
  request->stream->cv.notify_all();
  return nullptr;
}

TRITONSERVER_Error*
TRITONBACKEND_InputPropertiesForHostPolicy(
    TRITONBACKEND_Input* input, const char* host_policy_name, const char** name,
    TRITONSERVER_DataType* datatype, const int64_t** shape,
    uint32_t* dims_count, uint64_t* byte_size, uint32_t* buffer_count)
{
  if (host_policy_name != nullptr)
    return Err(TRITONSERVER_ERROR_INVALID_ARG, "policy");
  if (name)
    *name = input->name.c_str();
  if (datatype)
    *datatype = input->dtype;
  if (shape)
    *shape = input->shape.data();
  if (dims_count)
    *dims_count = static_cast<uint32_t>(input->shape.size());
  if (byte_size)
    *byte_size = input->ByteSize();
  if (buffer_count)
    *buffer_count = static_cast<uint32_t>(input->buffers.size());
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_InputProperties(
    TRITONBACKEND_Input* input, const char** name,
    TRITONSERVER_DataType* datatype, const int64_t** shape,
    uint32_t* dims_count, uint64_t* byte_size, uint32_t* buffer_count)
{
  return TRITONBACKEND_InputPropertiesForHostPolicy(
      input, nullptr, name, datatype, shape, dims_count, byte_size,
      buffer_count);
}
TRITONSERVER_Error*
TRITONBACKEND_InputBufferForHostPolicy(
    TRITONBACKEND_Input* input, const char* host_policy_name,
    const uint32_t index, const void** buffer, uint64_t* buffer_byte_size,
    TRITONSERVER_MemoryType* memory_type, int64_t* memory_type_id)
{
  if (host_policy_name != nullptr)
    return Err(TRITONSERVER_ERROR_INVALID_ARG, "policy");
  if (index >= input->buffers.size())
    return Err(TRITONSERVER_ERROR_INVALID_ARG, "index");
  *buffer = input->buffers[index].data();
  *buffer_byte_size = input->buffers[index].size();
  *memory_type = TRITONSERVER_MEMORY_CPU;
  *memory_type_id = 0;
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_InputBuffer(
    TRITONBACKEND_Input* input, const uint32_t index, const void** buffer,
    uint64_t* buffer_byte_size, TRITONSERVER_MemoryType* memory_type,
    int64_t* memory_type_id)
{
  return TRITONBACKEND_InputBufferForHostPolicy(
      input, nullptr, index, buffer, buffer_byte_size, memory_type,
      memory_type_id);
}

TRITONSERVER_Error*
TRITONBACKEND_ResponseFactoryNew(
    TRITONBACKEND_ResponseFactory** factory, TRITONBACKEND_Request* request)
{
  std::lock_guard<std::mutex> lk(request->stream->mu);
  request->stream->factories++;
  *factory = new TRITONBACKEND_ResponseFactory{request->stream};
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_ResponseFactoryDelete(TRITONBACKEND_ResponseFactory* factory)
{
  {
    std::lock_guard<std::mutex> lk(factory->stream->mu);
    factory->stream->factories--;
    factory->stream->cv.notify_all();
  }
  delete factory;
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_ResponseFactoryIsCancelled(
    TRITONBACKEND_ResponseFactory* factory, bool* is_cancelled)
{
  *is_cancelled = factory->stream->cancelled.load();
  return nullptr;
}
static void
Record(const std::shared_ptr<Stream>& stream, Event ev)
{
  std::lock_guard<std::mutex> lk(stream->mu);
  if (stream->final)
    stream->violations++;
  if (ev.flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL)
    stream->final = true;
  stream->events.push_back(std::move(ev));
  stream->cv.notify_all();
}
TRITONSERVER_Error*
TRITONBACKEND_ResponseFactorySendFlags(
    TRITONBACKEND_ResponseFactory* factory, const uint32_t send_flags)
{
  Event ev;
  ev.flags = send_flags;
  Record(factory->stream, std::move(ev));
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_ResponseNew(
    TRITONBACKEND_Response** response, TRITONBACKEND_Request* request)
{
  *response = new TRITONBACKEND_Response{request->stream, {}};
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_ResponseNewFromFactory(
    TRITONBACKEND_Response** response, TRITONBACKEND_ResponseFactory* factory)
{
  *response = new TRITONBACKEND_Response{factory->stream, {}};
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_ResponseOutput(
    TRITONBACKEND_Response* response, TRITONBACKEND_Output** output,
    const char* name, const TRITONSERVER_DataType datatype,
    const int64_t* shape, const uint32_t dims_count)
{
  response->outputs.emplace_back(new TRITONBACKEND_Output{
      name, datatype, std::vector<int64_t>(shape, shape + dims_count), "",
      false});
  *output = response->outputs.back().get();
  return nullptr;
}
TRITONSERVER_Error*
TRITONBACKEND_OutputBuffer(
    TRITONBACKEND_Output* output, void** buffer,
    const uint64_t buffer_byte_size, TRITONSERVER_MemoryType* memory_type,
    int64_t* memory_type_id)
{
  if (std::strcmp(output->name.c_str(), "OUTPUT_FAILS") == 0 ||
      output->name == "OUTPUT9") {
    return Err(TRITONSERVER_ERROR_UNAVAILABLE, "no output memory");
  }
  output->data.assign(buffer_byte_size, '\xAB');
  output->has_buffer = true;
  *buffer = &output->data[0];
  *memory_type = TRITONSERVER_MEMORY_CPU;
  *memory_type_id = 0;
  return nullptr;
}
// Response parameters: the mock host accepts and drops them.
TRITONSERVER_Error*
TRITONBACKEND_ResponseSetStringParameter(
    TRITONBACKEND_Response* response, const char* name, const char* value)
{
  return (response == nullptr || name == nullptr || value == nullptr)
             ? TRITONSERVER_ErrorNew(
                   TRITONSERVER_ERROR_INVALID_ARG, "NULL argument")
             : nullptr;
}

TRITONSERVER_Error*
TRITONBACKEND_ResponseSetIntParameter(
    TRITONBACKEND_Response* response, const char* name, const int64_t)
{
  return (response == nullptr || name == nullptr)
             ? TRITONSERVER_ErrorNew(
                   TRITONSERVER_ERROR_INVALID_ARG, "NULL argument")
             : nullptr;
}

TRITONSERVER_Error*
TRITONBACKEND_ResponseSetBoolParameter(
    TRITONBACKEND_Response* response, const char* name, const bool)
{
  return (response == nullptr || name == nullptr)
             ? TRITONSERVER_ErrorNew(
                   TRITONSERVER_ERROR_INVALID_ARG, "NULL argument")
             : nullptr;
}

TRITONSERVER_Error*
TRITONBACKEND_ResponseSend(
    TRITONBACKEND_Response* response, const uint32_t send_flags,
    TRITONSERVER_Error* error)
{
  std::unique_ptr<TRITONBACKEND_Response> owned(response);
  Event ev;
  ev.has_response = true;
  ev.flags = send_flags;
  if (error != nullptr) {
    ev.error = true;
    ev.code = error->code;
    ev.msg = error->msg;
  }
  for (auto& out : response->outputs) {
    ev.outputs[out->name] = {out->dtype, out->shape, out->data};
  }
  Record(response->stream, std::move(ev));
  return nullptr;
}

}  // extern "C"

// ---- loading backends ----------------------------------------------------

using EntryFn = TRITONSERVER_Error* (*)(void*);
using ExecuteFn =
    TRITONSERVER_Error* (*)(TRITONBACKEND_ModelInstance*, TRITONBACKEND_Request**, uint32_t);
using AttrFn =
    TRITONSERVER_Error* (*)(TRITONBACKEND_Backend*, TRITONBACKEND_BackendAttribute*);

struct Lib {
  void* handle = nullptr;
  EntryFn init = nullptr, fini = nullptr, model_init = nullptr,
          model_fini = nullptr, inst_init = nullptr, inst_fini = nullptr;
  ExecuteFn execute = nullptr;
  AttrFn attr = nullptr;
};

static Lib
Open(const std::string& dir, const std::string& name)
{
  Lib lib;
  std::string path = dir + "/" + name + "/libtriton_" + name + ".so";
  lib.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib.handle == nullptr) {
    Fail(std::string("dlopen: ") + dlerror(), __LINE__);
    std::exit(1);
  }
  auto sym = [&](const char* s) { return dlsym(lib.handle, s); };
  lib.init = reinterpret_cast<EntryFn>(sym("TRITONBACKEND_Initialize"));
  lib.fini = reinterpret_cast<EntryFn>(sym("TRITONBACKEND_Finalize"));
  lib.attr = reinterpret_cast<AttrFn>(sym("TRITONBACKEND_GetBackendAttribute"));
  lib.model_init =
      reinterpret_cast<EntryFn>(sym("TRITONBACKEND_ModelInitialize"));
  lib.model_fini =
      reinterpret_cast<EntryFn>(sym("TRITONBACKEND_ModelFinalize"));
  lib.inst_init =
      reinterpret_cast<EntryFn>(sym("TRITONBACKEND_ModelInstanceInitialize"));
  lib.inst_fini =
      reinterpret_cast<EntryFn>(sym("TRITONBACKEND_ModelInstanceFinalize"));
  lib.execute =
      reinterpret_cast<ExecuteFn>(sym("TRITONBACKEND_ModelInstanceExecute"));
  return lib;
}

// Takes ownership of an entry point's error: returns its code, -1 if none.
static int
Code(TRITONSERVER_Error* err, std::string* msg = nullptr)
{
  if (err == nullptr)
    return -1;
  int code = err->code;
  if (msg)
    *msg = err->msg;
  delete err;
  return code;
}

// A loaded model with one instance.
struct Loaded {
  Lib lib;
  TRITONBACKEND_Model model;
  TRITONBACKEND_ModelInstance instance;
  int init_code = -1;
  std::string init_msg;

  Loaded(const Lib& l, const std::string& config) : lib(l)
  {
    model.name = "m";
    model.config = config;
    instance.name = "m_0";
    instance.model = &model;
    init_code = Code(lib.model_init(&model), &init_msg);
    if (init_code == -1) {
      CHECK_EQ(Code(lib.inst_init(&instance)), -1);
    }
  }
  int Execute(
      std::vector<TRITONBACKEND_Request*> requests, std::string* msg = nullptr)
  {
    return Code(
        lib.execute(
            &instance, requests.data(), static_cast<uint32_t>(requests.size())),
        msg);
  }
  ~Loaded()
  {
    if (init_code == -1) {
      CHECK_EQ(Code(lib.inst_fini(&instance)), -1);
      CHECK_EQ(Code(lib.model_fini(&model)), -1);
    }
  }
};

template <typename T>
static std::string
Bytes(const std::vector<T>& v)
{
  return std::string(
      reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

static void
AddInput(
    TRITONBACKEND_Request* r, const std::string& name,
    TRITONSERVER_DataType dtype, std::vector<int64_t> shape,
    std::vector<std::string> buffers)
{
  r->inputs.emplace_back(new TRITONBACKEND_Input{
      name, dtype, std::move(shape), std::move(buffers)});
}

template <typename T>
static T
Scalar(const Event& ev, const std::string& name)
{
  T v{};
  auto it = ev.outputs.find(name);
  if (it != ev.outputs.end() && it->second.data.size() == sizeof(T)) {
    std::memcpy(&v, it->second.data.data(), sizeof(T));
  }
  return v;
}

static void
Scenario(const char* name, const std::function<void()>& body)
{
  g_scenario = name;
  body();
}

// ---- repeat --------------------------------------------------------------

static const char* kRepeatConfig =
    R"({"name":"repeat_int32","max_batch_size":0,"input":[)"
    R"({"name":"IN","data_type":"TYPE_INT32","dims":[-1],"optional":false},)"
    R"({"name":"DELAY","data_type":"TYPE_UINT32","dims":[-1]},)"
    R"({"name":"WAIT","data_type":"TYPE_UINT32","dims":[1]}],"output":[)"
    R"({"name":"OUT","data_type":"TYPE_INT32","dims":[1]},)"
    R"({"name":"IDX","data_type":"TYPE_UINT32","dims":[1]}],"parameters":{}})";

static TRITONBACKEND_Request*
RepeatRequest(
    std::vector<int32_t> in, std::vector<uint32_t> delay, uint32_t wait)
{
  auto* r = new TRITONBACKEND_Request();
  r->id = "rep";
  std::string in_bytes = Bytes(in);
  size_t half = (in.size() / 2) * sizeof(int32_t);
  // IN arrives in two buffers to exercise the concatenation.
  AddInput(
      r, "IN", TRITONSERVER_TYPE_INT32, {static_cast<int64_t>(in.size())},
      {in_bytes.substr(0, half), in_bytes.substr(half)});
  AddInput(
      r, "DELAY", TRITONSERVER_TYPE_UINT32,
      {static_cast<int64_t>(delay.size())}, {Bytes(delay)});
  AddInput(
      r, "WAIT", TRITONSERVER_TYPE_UINT32, {1},
      {Bytes(std::vector<uint32_t>{wait})});
  return r;
}

static void
TestRepeat(const std::string& dir)
{
  Lib lib = Open(dir, "repeat");
  CHECK(lib.init == nullptr && lib.fini == nullptr && lib.attr == nullptr);

  Scenario(
      "repeat sends one response per element, then a flags-only FINAL", [&] {
        Loaded m(lib, kRepeatConfig);
        CHECK_EQ(m.init_code, -1);
        std::unique_ptr<TRITONBACKEND_Request> r(
            RepeatRequest({4, 2, 0, 1}, {1, 2, 3, 4}, 5));
        auto stream = r->stream;
        {
          std::lock_guard<std::mutex> lk(g_batch_mu);
          g_batch_stats.clear();
        }
        CHECK_EQ(m.Execute({r.get()}), -1);
        // Its thread still sends (DELAY 1+2+3+4 ms > WAIT 5 ms) and holds it.
        CHECK(stream->WaitDone(std::chrono::seconds(5)));
        std::lock_guard<std::mutex> lk(stream->mu);
        CHECK(stream->released);
        CHECK_EQ(stream->events.size(), size_t(5));
        const int32_t want_out[] = {4, 2, 0, 1};
        for (size_t e = 0; e < 4 && e < stream->events.size(); ++e) {
          const Event& ev = stream->events[e];
          CHECK(ev.has_response && ev.flags == 0 && !ev.error);
          CHECK_EQ(Scalar<int32_t>(ev, "OUT"), want_out[e]);
          CHECK_EQ(Scalar<uint32_t>(ev, "IDX"), uint32_t(e));
          CHECK(ev.outputs.at("OUT").shape == std::vector<int64_t>{1});
          CHECK(ev.outputs.at("OUT").dtype == TRITONSERVER_TYPE_INT32);
          CHECK(ev.outputs.at("IDX").dtype == TRITONSERVER_TYPE_UINT32);
        }
        if (stream->events.size() == 5) {
          CHECK(
              !stream->events[4].has_response &&
              stream->events[4].flags == TRITONSERVER_RESPONSE_COMPLETE_FINAL);
        }
        // Reported where the work ended, before the release and the FINAL.
        CHECK_EQ(stream->request_stats.size(), size_t(1));
        CHECK(
            stream->request_stats.size() == 1 &&
            stream->request_stats[0].success &&
            !stream->request_stats[0].after_release &&
            stream->request_stats[0].events_before == 4);
        {
          std::lock_guard<std::mutex> blk(g_batch_mu);
          CHECK(g_batch_stats.size() == 1 && g_batch_stats[0].batch_size == 1);
        }
        CHECK_EQ(stream->violations, 0);
      });

  Scenario("repeat finalize waits for in-flight response threads", [&] {
    auto* m = new Loaded(lib, kRepeatConfig);
    std::unique_ptr<TRITONBACKEND_Request> r(
        RepeatRequest({7, 8}, {100, 100}, 0));
    auto stream = r->stream;
    CHECK_EQ(m->Execute({r.get()}), -1);
    delete m;  // ModelInstanceFinalize must block until the thread is done
    std::lock_guard<std::mutex> lk(stream->mu);
    CHECK(stream->released && stream->request_stats.size() == 1);
    CHECK(stream->final);
    CHECK_EQ(stream->factories, 0);
    CHECK_EQ(stream->events.size(), size_t(3));
  });

  Scenario("repeat with an empty IN sends only FINAL", [&] {
    Loaded m(lib, kRepeatConfig);
    std::unique_ptr<TRITONBACKEND_Request> r(RepeatRequest({}, {}, 0));
    auto stream = r->stream;
    CHECK_EQ(m.Execute({r.get()}), -1);
    CHECK(stream->WaitDone(std::chrono::seconds(5)));
    CHECK_EQ(stream->events.size(), size_t(1));
    CHECK(!stream->events[0].has_response);
  });

  Scenario("repeat rejects batches without touching the requests", [&] {
    Loaded m(lib, kRepeatConfig);
    std::unique_ptr<TRITONBACKEND_Request> a(RepeatRequest({1}, {0}, 0));
    std::unique_ptr<TRITONBACKEND_Request> b(RepeatRequest({1}, {0}, 0));
    std::string msg;
    CHECK_EQ(
        m.Execute({a.get(), b.get()}, &msg),
        int(TRITONSERVER_ERROR_INVALID_ARG));
    CHECK(msg == "repeat backend does not support batched request execution");
    CHECK(!a->stream->released && a->stream->events.empty());
  });

  Scenario("repeat answers a shape mismatch with one FINAL error", [&] {
    Loaded m(lib, kRepeatConfig);
    std::unique_ptr<TRITONBACKEND_Request> r(RepeatRequest({1, 2}, {1}, 0));
    auto stream = r->stream;
    CHECK_EQ(m.Execute({r.get()}), -1);
    CHECK(stream->released);
    CHECK_EQ(stream->events.size(), size_t(1));
    CHECK(
        stream->events[0].error &&
        stream->events[0].code == TRITONSERVER_ERROR_INVALID_ARG &&
        stream->events[0].flags == TRITONSERVER_RESPONSE_COMPLETE_FINAL);
    CHECK(
        stream->events[0].msg.find("expected IN and DELAY shape to match") !=
        std::string::npos);
    CHECK_EQ(stream->factories, 0);
    CHECK(
        stream->request_stats.size() == 1 &&
        !stream->request_stats[0].success &&
        !stream->request_stats[0].after_release);
  });

  Scenario("repeat refuses an invalid configuration", [&] {
    std::string bad = kRepeatConfig;
    bad.replace(bad.find("\"max_batch_size\":0"), 18, "\"max_batch_size\":8");
    Loaded m(lib, bad);
    CHECK_EQ(m.init_code, int(TRITONSERVER_ERROR_INVALID_ARG));
    CHECK(m.init_msg.find("max_batch_size") != std::string::npos);
    Loaded m2(lib, "{\"input\": [}");
    CHECK_EQ(m2.init_code, int(TRITONSERVER_ERROR_INTERNAL));
  });
}

// ---- square --------------------------------------------------------------

static std::string
SquareConfig(const std::string& params)
{
  return std::string(R"({"name":"square","max_batch_size":0,)") +
         R"("input":[{"name":"IN","data_type":"TYPE_INT32","dims":[1]}],)" +
         R"("output":[{"name":"OUT","data_type":"TYPE_INT32","dims":[1]}],)" +
         R"("parameters":{)" + params + "}}";
}

static TRITONBACKEND_Request*
SquareRequest(int32_t k, std::vector<int64_t> shape = {1})
{
  auto* r = new TRITONBACKEND_Request();
  r->id = "sq";
  AddInput(
      r, "IN", TRITONSERVER_TYPE_INT32, std::move(shape),
      {Bytes(std::vector<int32_t>{k})});
  return r;
}

static void
TestSquare(const std::string& dir)
{
  Lib lib = Open(dir, "square");

  Scenario("square sends k responses of k, then FINAL", [&] {
    Loaded m(lib, SquareConfig(""));
    CHECK_EQ(m.init_code, -1);
    std::unique_ptr<TRITONBACKEND_Request> r(SquareRequest(3));
    std::unique_ptr<TRITONBACKEND_Request> zero(SquareRequest(0));
    auto stream = r->stream;
    {
      std::lock_guard<std::mutex> lk(g_batch_mu);
      g_batch_stats.clear();
    }
    CHECK_EQ(m.Execute({r.get(), zero.get()}), -1);
    CHECK(stream->WaitDone(std::chrono::seconds(5)));
    CHECK(zero->stream->WaitDone(std::chrono::seconds(5)));
    CHECK(stream->released && zero->stream->released);
    CHECK_EQ(stream->events.size(), size_t(4));
    for (size_t e = 0; e < 3 && e < stream->events.size(); ++e) {
      CHECK(
          stream->events[e].has_response && stream->events[e].flags == 0 &&
          !stream->events[e].error);
      CHECK_EQ(Scalar<int32_t>(stream->events[e], "OUT"), 3);
    }
    CHECK_EQ(stream->response_stats.size(), size_t(3));
    for (const auto& s : stream->response_stats) {
      CHECK(
          !s.error && s.has_instance && s.has_factory &&
          s.compute_output_start >= s.start && s.end >= s.compute_output_start);
    }
    // Each request is reported once its thread's work and Execute are both
    // done with it: after its responses (before its FINAL, unless Execute
    // let go last), before its release; the execution once both had.
    for (Stream* st : {stream.get(), zero->stream.get()}) {
      CHECK(
          st->request_stats.size() == 1 && st->request_stats[0].success &&
          !st->request_stats[0].after_release &&
          st->request_stats[0].events_before + 1 >= st->events.size());
    }
    {
      std::lock_guard<std::mutex> lk(g_batch_mu);
      CHECK(g_batch_stats.size() == 1 && g_batch_stats[0].batch_size == 2);
    }
    CHECK_EQ(zero->stream->events.size(), size_t(1));
    CHECK(!zero->stream->events[0].has_response);
    CHECK(zero->stream->response_stats.empty());
    CHECK_EQ(stream->violations + zero->stream->violations, 0);
  });

  Scenario("square shapes OUT like a 2-D IN", [&] {
    Loaded m(lib, SquareConfig(""));
    std::unique_ptr<TRITONBACKEND_Request> r(SquareRequest(1, {1, 1}));
    CHECK_EQ(m.Execute({r.get()}), -1);
    CHECK(r->stream->WaitDone(std::chrono::seconds(5)));
    CHECK(
        r->stream->events.at(0).outputs.at("OUT").shape ==
        (std::vector<int64_t>{1, 1}));
  });

  Scenario("square simulates failures and empty responses", [&] {
    Loaded m(
        lib,
        SquareConfig(
            R"("CUSTOM_FAIL_COUNT":{"string_value":"1"},"CUSTOM_EMPTY_COUNT":{"string_value":"1"},)"
            R"("CUSTOM_INFER_DELAY_NS":{"string_value":"1000"},"OTHER":{"string_value":"x"},)"
            R"("CUSTOM_OUTPUT_DELAY_NS":{"string_value":"not a number"})"));
    CHECK_EQ(m.init_code, -1);
    std::unique_ptr<TRITONBACKEND_Request> r(SquareRequest(4));
    auto stream = r->stream;
    CHECK_EQ(m.Execute({r.get()}), -1);
    CHECK(stream->WaitDone(std::chrono::seconds(5)));
    // success, success, failure, (empty), FINAL
    CHECK_EQ(stream->events.size(), size_t(4));
    if (stream->events.size() == 4) {
      CHECK(!stream->events[0].error && !stream->events[1].error);
      CHECK(
          stream->events[2].error &&
          stream->events[2].code == TRITONSERVER_ERROR_UNKNOWN &&
          stream->events[2].msg == "simulated failure" &&
          stream->events[2].flags == 0);
      CHECK(
          !stream->events[3].has_response &&
          stream->events[3].flags == TRITONSERVER_RESPONSE_COMPLETE_FINAL);
    }
    CHECK(
        stream->request_stats.size() == 1 && !stream->request_stats[0].success);
    CHECK_EQ(stream->response_stats.size(), size_t(4));
    if (stream->response_stats.size() == 4) {
      CHECK(
          stream->response_stats[2].error &&
          stream->response_stats[2].code == TRITONSERVER_ERROR_UNKNOWN);
      CHECK(
          !stream->response_stats[3].error &&
          stream->response_stats[3].compute_output_start == 0);
    }
  });

  Scenario("square stops after the first cancelled iteration", [&] {
    Loaded m(lib, SquareConfig(""));
    std::unique_ptr<TRITONBACKEND_Request> r(SquareRequest(5));
    auto stream = r->stream;
    stream->cancelled = true;
    CHECK_EQ(m.Execute({r.get()}), -1);
    CHECK(stream->WaitDone(std::chrono::seconds(5)));
    CHECK_EQ(stream->events.size(), size_t(1));  // FINAL only
    CHECK(
        stream->request_stats.size() == 1 && !stream->request_stats[0].success);
    CHECK_EQ(stream->response_stats.size(), size_t(1));
    if (!stream->response_stats.empty()) {
      CHECK(
          stream->response_stats[0].error &&
          stream->response_stats[0].code == TRITONSERVER_ERROR_CANCELLED);
      CHECK_EQ(stream->response_stats[0].compute_output_start, uint64_t(0));
    }
  });

  Scenario("square refuses a bad configuration and a bad shape", [&] {
    std::string bad = SquareConfig("");
    bad.replace(bad.find("\"dims\":[1]"), 10, "\"dims\":[2]");
    Loaded m(lib, bad);
    CHECK_EQ(m.init_code, int(TRITONSERVER_ERROR_INVALID_ARG));
    Loaded ok(lib, SquareConfig(""));
    std::unique_ptr<TRITONBACKEND_Request> r(SquareRequest(2, {2, 1}));
    CHECK_EQ(ok.Execute({r.get()}), -1);
    CHECK_EQ(r->stream->events.size(), size_t(1));
    CHECK(
        r->stream->events[0].error &&
        r->stream->events[0].flags == TRITONSERVER_RESPONSE_COMPLETE_FINAL);
    CHECK(r->stream->released);
    CHECK(
        r->stream->request_stats.size() == 1 &&
        !r->stream->request_stats[0].success);
  });
}

// ---- identity ------------------------------------------------------------

static std::string
IdentityConfig(int max_batch_size, const std::string& params = "")
{
  return R"({"name":"id","max_batch_size":)" + std::to_string(max_batch_size) +
         R"(,"input":[{"name":"INPUT0","data_type":"TYPE_INT32","dims":[-1],"optional":false},)"
         R"({"name":"INPUT1","data_type":"TYPE_STRING","dims":[-1],"optional":true},)"
         R"({"name":"INPUT9","data_type":"TYPE_FP32","dims":[1],"optional":true}],)"
         R"("output":[{"name":"OUTPUT1","data_type":"TYPE_STRING","dims":[-1]},)"
         R"({"name":"OUTPUT0","data_type":"TYPE_INT32","dims":[-1]},)"
         R"({"name":"OUTPUT9","data_type":"TYPE_FP32","dims":[1]}],)"
         R"("batch_input":[],"batch_output":[],"parameters":{)" +
         params + "}}";
}

static void
TestIdentity(const std::string& dir)
{
  Lib lib = Open(dir, "identity");
  TRITONBACKEND_Backend backend;
  backend.name = "identity";

  Scenario("identity checks the API version", [&] {
    CHECK_EQ(Code(lib.init(&backend)), -1);
    g_api_minor = TRITONBACKEND_API_VERSION_MINOR + 1;
    CHECK_EQ(Code(lib.init(&backend)), -1);
    g_api_minor = TRITONBACKEND_API_VERSION_MINOR - 1;
    std::string msg;
    CHECK_EQ(
        Code(lib.init(&backend), &msg), int(TRITONSERVER_ERROR_UNSUPPORTED));
    CHECK(msg == "triton backend API version does not support this backend");
    g_api_minor = TRITONBACKEND_API_VERSION_MINOR;
    g_api_major = TRITONBACKEND_API_VERSION_MAJOR + 1;
    CHECK_EQ(Code(lib.init(&backend)), int(TRITONSERVER_ERROR_UNSUPPORTED));
    g_api_major = TRITONBACKEND_API_VERSION_MAJOR;
    TRITONBACKEND_BackendAttribute attr;
    CHECK_EQ(Code(lib.attr(&backend, &attr)), -1);
    CHECK(attr.parallel);
  });

  Scenario("identity copies inputs to requested outputs", [&] {
    Loaded m(lib, IdentityConfig(0));
    CHECK_EQ(m.init_code, -1);
    std::unique_ptr<TRITONBACKEND_Request> r(new TRITONBACKEND_Request());
    std::string bytes_in = std::string(
        "\x03\x00\x00\x00"
        "abc",
        7);
    AddInput(
        r.get(), "INPUT0", TRITONSERVER_TYPE_INT32, {3},
        {Bytes(std::vector<int32_t>{1, -2}), Bytes(std::vector<int32_t>{3})});
    AddInput(r.get(), "INPUT1", TRITONSERVER_TYPE_BYTES, {1}, {bytes_in});
    r->outputs = {"OUTPUT0", "OUTPUT1"};
    // Second request: only INPUT0, and only OUTPUT0 asked for (optional
    // inputs may be left out when their outputs are not requested).
    std::unique_ptr<TRITONBACKEND_Request> r2(new TRITONBACKEND_Request());
    AddInput(r2.get(), "INPUT0", TRITONSERVER_TYPE_INT32, {0}, {});
    r2->outputs = {"OUTPUT0"};
    // Third request: OUTPUT1 asked for without INPUT1, which Triton's
    // identity answers with an UNSUPPORTED error.
    std::unique_ptr<TRITONBACKEND_Request> r3(new TRITONBACKEND_Request());
    AddInput(
        r3.get(), "INPUT0", TRITONSERVER_TYPE_INT32, {1},
        {Bytes(std::vector<int32_t>{7})});
    r3->outputs = {"OUTPUT0", "OUTPUT1"};
    g_batch_stats.clear();
    CHECK_EQ(m.Execute({r.get(), r2.get(), r3.get()}), -1);
    for (auto* req : {r.get(), r2.get()}) {
      CHECK(req->stream->released && req->stream->final);
      CHECK_EQ(req->stream->events.size(), size_t(1));
      CHECK(
          req->stream->events[0].flags ==
              TRITONSERVER_RESPONSE_COMPLETE_FINAL &&
          !req->stream->events[0].error);
      CHECK(
          req->stream->request_stats.size() == 1 &&
          req->stream->request_stats[0].success &&
          !req->stream->request_stats[0].after_release);
    }
    CHECK(
        r3->stream->released && r3->stream->final &&
        r3->stream->events.size() == 1);
    CHECK(
        r3->stream->events[0].error &&
        r3->stream->events[0].code == TRITONSERVER_ERROR_UNSUPPORTED &&
        r3->stream->events[0].msg.find("INPUT1") != std::string::npos);
    CHECK(
        r3->stream->request_stats.size() == 1 &&
        !r3->stream->request_stats[0].success);
    const auto& outs = r->stream->events.at(0).outputs;
    CHECK_EQ(outs.size(), size_t(2));
    CHECK(outs.at("OUTPUT0").data == Bytes(std::vector<int32_t>{1, -2, 3}));
    CHECK(outs.at("OUTPUT0").shape == std::vector<int64_t>{3});
    CHECK(outs.at("OUTPUT0").dtype == TRITONSERVER_TYPE_INT32);
    CHECK(
        outs.at("OUTPUT1").data == bytes_in &&
        outs.at("OUTPUT1").dtype == TRITONSERVER_TYPE_BYTES);
    const auto& outs2 = r2->stream->events.at(0).outputs;
    CHECK(
        outs2.size() == 1 && outs2.at("OUTPUT0").data.empty() &&
        outs2.at("OUTPUT0").shape == std::vector<int64_t>{0});
    CHECK(g_batch_stats.size() == 1 && g_batch_stats[0].batch_size == 3);
  });

  Scenario(
      "identity counts the batch dimension and honours execute_delay_ms", [&] {
        Loaded m(
            lib,
            IdentityConfig(8, R"("execute_delay_ms":{"string_value":"30"})"));
        CHECK_EQ(m.init_code, -1);
        std::unique_ptr<TRITONBACKEND_Request> a(new TRITONBACKEND_Request());
        std::unique_ptr<TRITONBACKEND_Request> b(new TRITONBACKEND_Request());
        AddInput(
            a.get(), "INPUT0", TRITONSERVER_TYPE_INT32, {3, 1},
            {Bytes(std::vector<int32_t>{1, 2, 3})});
        AddInput(
            b.get(), "INPUT0", TRITONSERVER_TYPE_INT32, {2, 1},
            {Bytes(std::vector<int32_t>{4, 5})});
        a->outputs = b->outputs = {"OUTPUT0"};
        g_batch_stats.clear();
        auto start = std::chrono::steady_clock::now();
        CHECK_EQ(m.Execute({a.get(), b.get()}), -1);
        CHECK(
            std::chrono::steady_clock::now() - start >=
            std::chrono::milliseconds(30));
        CHECK(g_batch_stats.size() == 1 && g_batch_stats[0].batch_size == 5);
        CHECK(
            b->stream->events.at(0).outputs.at("OUTPUT0").shape ==
            (std::vector<int64_t>{2, 1}));
      });

  Scenario("identity answers a failed request with a FINAL error", [&] {
    Loaded m(lib, IdentityConfig(0));
    std::unique_ptr<TRITONBACKEND_Request> r(new TRITONBACKEND_Request());
    AddInput(
        r.get(), "INPUT9", TRITONSERVER_TYPE_FP32, {1},
        {Bytes(std::vector<float>{1.5f})});
    r->outputs = {"OUTPUT9"};  // the mock host fails this output buffer
    CHECK_EQ(m.Execute({r.get()}), -1);
    CHECK(r->stream->released);
    CHECK_EQ(r->stream->events.size(), size_t(1));
    CHECK(
        r->stream->events[0].error &&
        r->stream->events[0].code == TRITONSERVER_ERROR_UNAVAILABLE &&
        r->stream->events[0].flags == TRITONSERVER_RESPONSE_COMPLETE_FINAL);
    CHECK(
        r->stream->request_stats.size() == 1 &&
        !r->stream->request_stats[0].success);
  });

  Scenario("identity refuses mismatched configurations", [&] {
    std::string dtype = IdentityConfig(0);
    dtype.replace(
        dtype.find("\"TYPE_FP32\",\"dims\":[1]}],"), 11, "\"TYPE_FP64\"");
    Loaded a(lib, dtype);
    CHECK_EQ(a.init_code, int(TRITONSERVER_ERROR_INVALID_ARG));
    CHECK(a.init_msg.find("data types to match") != std::string::npos);
    std::string name = IdentityConfig(0);
    name.replace(name.find("\"OUTPUT9\""), 9, "\"RESULT9\"");
    Loaded b(lib, name);
    CHECK_EQ(b.init_code, int(TRITONSERVER_ERROR_INVALID_ARG));
    Loaded c(
        lib,
        IdentityConfig(0, R"("execute_delay_ms":{"string_value":"soon"})"));
    CHECK_EQ(c.init_code, int(TRITONSERVER_ERROR_INVALID_ARG));
  });

  CHECK_EQ(Code(lib.fini(&backend)), -1);
}

int
main(int argc, char** argv)
{
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <backends_dir>\n", argv[0]);
    return 2;
  }
  TestRepeat(argv[1]);
  TestSquare(argv[1]);
  TestIdentity(argv[1]);
  if (g_failures != 0) {
    std::fprintf(stderr, "%d failure(s)\n", g_failures);
    return 1;
  }
  std::printf("ok\n");
  return 0;
}
