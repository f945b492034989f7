/*
 * embed.c: a C program that embeds a tritonhost server through Triton's
 * in-process C API (libtritonserver.so), the flow of Triton's own simple.cc:
 *
 *   1. Server options: the model repository, the backend directory, the
 *      verbose log level; TRITONSERVER_ServerNew.
 *   2. Wait until the server is live and ready.
 *   3. Read the server's metadata and the metadata of the model "simple".
 *   4. Run a request on "simple" (INPUT0 + INPUT1, INPUT0 - INPUT1, INT32
 *      [1,16]) with TRITONSERVER_InferenceRequestNew, a response allocator
 *      and TRITONSERVER_ServerInferAsync, and check the outputs.
 *   5. Run a request on the decoupled "square_int32" (IN = k: k responses,
 *      then the final flag) and count its responses; then the same on the
 *      decoupled ensemble "square_pipeline", whose responses the server
 *      builds from its steps' outputs.
 *   6. Read the statistics of "simple" and the server's metrics.
 *   7. TRITONSERVER_ServerStop, TRITONSERVER_ServerDelete.
 *
 * Usage: embed <model repository> <backend directory> [verbose level]
 * Build: make embed (bin/embed, linked with lib/libtritonserver.so).
 * Each step prints one line; the program exits 0 when every check passed.
 */
#define _DEFAULT_SOURCE /* usleep */

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "triton/core/tritonserver.h"

/* Exits with the message of err, if it is an error. */
static void
check(TRITONSERVER_Error* err, const char* what)
{
  if (err == NULL)
    return;
  fprintf(
      stderr, "embed: %s: %s: %s\n", what, TRITONSERVER_ErrorCodeString(err),
      TRITONSERVER_ErrorMessage(err));
  TRITONSERVER_ErrorDelete(err);
  exit(1);
}

static void
fail(const char* what)
{
  fprintf(stderr, "embed: %s\n", what);
  exit(1);
}

/* Prints a message's JSON after 'label' and deletes the message. */
static void
print_message(const char* label, TRITONSERVER_Message* msg)
{
  const char* base;
  size_t size;
  check(TRITONSERVER_MessageSerializeToJson(msg, &base, &size), "serialize");
  printf("%s %.*s\n", label, (int)size, base);
  check(TRITONSERVER_MessageDelete(msg), "delete message");
}

/* ---- The response allocator: output buffers in host memory ------------- */

static TRITONSERVER_Error*
alloc_fn(
    TRITONSERVER_ResponseAllocator* allocator, const char* tensor_name,
    size_t byte_size, TRITONSERVER_MemoryType memory_type,
    int64_t memory_type_id, void* userp, void** buffer, void** buffer_userp,
    TRITONSERVER_MemoryType* actual_memory_type, int64_t* actual_memory_type_id)
{
  (void)allocator;
  (void)tensor_name;
  (void)memory_type;
  (void)memory_type_id;
  (void)userp;
  *buffer = byte_size > 0 ? malloc(byte_size) : NULL;
  *buffer_userp = NULL;
  *actual_memory_type = TRITONSERVER_MEMORY_CPU;
  *actual_memory_type_id = 0;
  if (byte_size > 0 && *buffer == NULL)
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  return NULL;
}

static TRITONSERVER_Error*
release_fn(
    TRITONSERVER_ResponseAllocator* allocator, void* buffer, void* buffer_userp,
    size_t byte_size, TRITONSERVER_MemoryType memory_type,
    int64_t memory_type_id)
{
  (void)allocator;
  (void)buffer_userp;
  (void)byte_size;
  (void)memory_type;
  (void)memory_type_id;
  free(buffer);
  return NULL;
}

/* ---- One request in flight --------------------------------------------- */

#define MAX_RESPONSES 64

typedef struct call {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  TRITONSERVER_InferenceResponse* responses[MAX_RESPONSES];
  int count;       /* responses received (non-NULL) */
  bool final_seen; /* TRITONSERVER_RESPONSE_COMPLETE_FINAL */
  bool released;   /* the request came back */
} call;

static void
on_response(
    TRITONSERVER_InferenceResponse* response, const uint32_t flags, void* userp)
{
  call* c = userp;
  pthread_mutex_lock(&c->mu);
  if (response != NULL) {
    if (c->count < MAX_RESPONSES) {
      c->responses[c->count] = response;
    } else {
      TRITONSERVER_ErrorDelete(TRITONSERVER_InferenceResponseDelete(response));
    }
    c->count++;
  }
  if (flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL)
    c->final_seen = true;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
}

static void
on_release(
    TRITONSERVER_InferenceRequest* request, const uint32_t flags, void* userp)
{
  (void)request;
  (void)flags;
  call* c = userp;
  pthread_mutex_lock(&c->mu);
  c->released = true;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
}

/* Submits 'request' and waits for its final response and its release. */
static void
run(TRITONSERVER_Server* server, TRITONSERVER_InferenceRequest* request,
    TRITONSERVER_ResponseAllocator* allocator, call* c)
{
  pthread_mutex_init(&c->mu, NULL);
  pthread_cond_init(&c->cv, NULL);
  check(
      TRITONSERVER_InferenceRequestSetReleaseCallback(request, on_release, c),
      "set release callback");
  check(
      TRITONSERVER_InferenceRequestSetResponseCallback(
          request, allocator, NULL, on_response, c),
      "set response callback");
  check(TRITONSERVER_ServerInferAsync(server, request, NULL), "infer");
  pthread_mutex_lock(&c->mu);
  while (!(c->final_seen && c->released)) pthread_cond_wait(&c->cv, &c->mu);
  pthread_mutex_unlock(&c->mu);
}

static void
delete_responses(call* c)
{
  for (int i = 0; i < c->count && i < MAX_RESPONSES; i++) {
    check(
        TRITONSERVER_InferenceResponseDelete(c->responses[i]),
        "delete response");
  }
  pthread_cond_destroy(&c->cv);
  pthread_mutex_destroy(&c->mu);
}

/* Output 'index' of a response, which must be INT32 with 'n' elements. */
static const int32_t*
int32_output(
    TRITONSERVER_InferenceResponse* response, uint32_t index, size_t n,
    const char** name)
{
  TRITONSERVER_DataType datatype;
  const int64_t* shape;
  uint64_t dims;
  const void* base;
  size_t size;
  TRITONSERVER_MemoryType type;
  int64_t type_id;
  void* userp;
  check(TRITONSERVER_InferenceResponseError(response), "response");
  check(
      TRITONSERVER_InferenceResponseOutput(
          response, index, name, &datatype, &shape, &dims, &base, &size, &type,
          &type_id, &userp),
      "output");
  if (datatype != TRITONSERVER_TYPE_INT32 || size != n * sizeof(int32_t))
    fail("an output of the wrong type or size");
  return base;
}

/* ---- The steps -------------------------------------------------------- */

static TRITONSERVER_Server*
start(const char* repository, const char* backends, int verbose)
{
  uint32_t major, minor;
  check(TRITONSERVER_ApiVersion(&major, &minor), "api version");
  if (major != TRITONSERVER_API_VERSION_MAJOR ||
      minor < TRITONSERVER_API_VERSION_MINOR)
    fail("the library's API version does not support this program");
  printf("api: %u.%u\n", major, minor);

  TRITONSERVER_ServerOptions* options;
  check(TRITONSERVER_ServerOptionsNew(&options), "options");
  check(
      TRITONSERVER_ServerOptionsSetModelRepositoryPath(options, repository),
      "repository");
  check(TRITONSERVER_ServerOptionsSetLogVerbose(options, verbose), "verbose");
  check(
      TRITONSERVER_ServerOptionsSetBackendDirectory(options, backends),
      "backend directory");
  check(
      TRITONSERVER_ServerOptionsSetStrictModelConfig(options, true),
      "strict model config");
  TRITONSERVER_Server* server;
  check(TRITONSERVER_ServerNew(&server, options), "server");
  check(TRITONSERVER_ServerOptionsDelete(options), "delete options");

  /* Wait until the server is live and ready: at most 10 s. */
  bool live = false, ready = false;
  for (int i = 0; i < 1000 && !(live && ready); i++) {
    check(TRITONSERVER_ServerIsLive(server, &live), "is live");
    check(TRITONSERVER_ServerIsReady(server, &ready), "is ready");
    if (!(live && ready))
      usleep(10000);
  }
  if (!(live && ready))
    fail("the server did not become live and ready");
  printf("server: live and ready\n");
  return server;
}

static void
describe(TRITONSERVER_Server* server)
{
  TRITONSERVER_Message* msg;
  check(TRITONSERVER_ServerMetadata(server, &msg), "server metadata");
  print_message("server metadata:", msg);
  bool ready = false;
  check(
      TRITONSERVER_ServerModelIsReady(server, "simple", 1, &ready),
      "model ready");
  if (!ready)
    fail("model simple is not ready");
  check(
      TRITONSERVER_ServerModelMetadata(server, "simple", 1, &msg),
      "model metadata");
  print_message("simple metadata:", msg);
}

static void
infer_simple(
    TRITONSERVER_Server* server, TRITONSERVER_ResponseAllocator* allocator)
{
  int32_t in0[16], in1[16];
  for (int i = 0; i < 16; i++) {
    in0[i] = i;
    in1[i] = 1;
  }
  const int64_t shape[2] = {1, 16};
  TRITONSERVER_InferenceRequest* request;
  check(
      TRITONSERVER_InferenceRequestNew(&request, server, "simple", -1),
      "request");
  check(TRITONSERVER_InferenceRequestSetId(request, "simple-1"), "id");
  check(
      TRITONSERVER_InferenceRequestAddInput(
          request, "INPUT0", TRITONSERVER_TYPE_INT32, shape, 2),
      "INPUT0");
  check(
      TRITONSERVER_InferenceRequestAddInput(
          request, "INPUT1", TRITONSERVER_TYPE_INT32, shape, 2),
      "INPUT1");
  check(
      TRITONSERVER_InferenceRequestAppendInputData(
          request, "INPUT0", in0, sizeof(in0), TRITONSERVER_MEMORY_CPU, 0),
      "INPUT0 data");
  check(
      TRITONSERVER_InferenceRequestAppendInputData(
          request, "INPUT1", in1, sizeof(in1), TRITONSERVER_MEMORY_CPU, 0),
      "INPUT1 data");
  check(
      TRITONSERVER_InferenceRequestAddRequestedOutput(request, "OUTPUT0"),
      "OUTPUT0");
  check(
      TRITONSERVER_InferenceRequestAddRequestedOutput(request, "OUTPUT1"),
      "OUTPUT1");
  call c = {0};
  run(server, request, allocator, &c);
  if (c.count != 1)
    fail("simple did not answer with one response");
  uint32_t outputs = 0;
  check(
      TRITONSERVER_InferenceResponseOutputCount(c.responses[0], &outputs),
      "outputs");
  if (outputs != 2)
    fail("simple's response does not have two outputs");
  for (uint32_t o = 0; o < outputs; o++) {
    const char* name;
    const int32_t* v = int32_output(c.responses[0], o, 16, &name);
    bool sum = strcmp(name, "OUTPUT0") == 0;
    for (int i = 0; i < 16; i++) {
      if (v[i] != (sum ? in0[i] + in1[i] : in0[i] - in1[i]))
        fail("simple's outputs are wrong");
    }
  }
  printf("simple: INPUT0 + INPUT1 and INPUT0 - INPUT1 PASS\n");
  delete_responses(&c);
  check(TRITONSERVER_InferenceRequestDelete(request), "delete request");
}

static void
infer_square(
    TRITONSERVER_Server* server, TRITONSERVER_ResponseAllocator* allocator,
    const char* model)
{
  uint32_t flags = 0;
  check(
      TRITONSERVER_ServerModelTransactionProperties(
          server, model, -1, &flags, NULL),
      "transaction properties");
  if (!(flags & TRITONSERVER_TXN_DECOUPLED))
    fail("the square model is not decoupled");
  const int32_t k = 5;
  const int64_t shape[1] = {1};
  TRITONSERVER_InferenceRequest* request;
  check(
      TRITONSERVER_InferenceRequestNew(&request, server, model, -1), "request");
  check(
      TRITONSERVER_InferenceRequestAddInput(
          request, "IN", TRITONSERVER_TYPE_INT32, shape, 1),
      "IN");
  check(
      TRITONSERVER_InferenceRequestAppendInputData(
          request, "IN", &k, sizeof(k), TRITONSERVER_MEMORY_CPU, 0),
      "IN data");
  call c = {0};
  run(server, request, allocator, &c);
  for (int i = 0; i < c.count && i < MAX_RESPONSES; i++) {
    const char* name;
    if (*int32_output(c.responses[i], 0, 1, &name) != k)
      fail("a response of the square model is wrong");
  }
  printf("%s: %d responses, then the final PASS\n", model, c.count);
  if (c.count != k)
    fail("the square model did not send k responses");
  delete_responses(&c);
  check(TRITONSERVER_InferenceRequestDelete(request), "delete request");
}

static void
report(TRITONSERVER_Server* server)
{
  TRITONSERVER_Message* msg;
  check(
      TRITONSERVER_ServerModelStatistics(server, "simple", -1, &msg),
      "statistics");
  print_message("simple statistics:", msg);
  TRITONSERVER_Metrics* metrics;
  check(TRITONSERVER_ServerMetrics(server, &metrics), "metrics");
  const char* text;
  size_t size;
  check(
      TRITONSERVER_MetricsFormatted(
          metrics, TRITONSERVER_METRIC_PROMETHEUS, &text, &size),
      "metrics text");
  /* The success counter of "simple", one line of the text. */
  const char* line =
      strstr(text, "nv_inference_request_success{model=\"simple\"");
  if (line == NULL)
    fail("the metrics do not count simple's requests");
  printf("metrics: %.*s\n", (int)strcspn(line, "\n"), line);
  check(TRITONSERVER_MetricsDelete(metrics), "delete metrics");
}

/* The objects named libtritonserver.so in this process: the library this
 * program linked, and no stub beside it. */
static void
libraries(void)
{
  FILE* maps = fopen("/proc/self/maps", "r");
  if (maps == NULL)
    return;
  char line[4096], last[4096] = "";
  while (fgets(line, sizeof(line), maps) != NULL) {
    const char* path = strchr(line, '/');
    if (path == NULL || strstr(path, "libtritonserver.so") == NULL)
      continue;
    if (strcmp(path, last) != 0)
      printf("mapped: %s", path);
    snprintf(last, sizeof(last), "%s", path);
  }
  fclose(maps);
}

int
main(int argc, char** argv)
{
  if (argc < 3) {
    fprintf(
        stderr,
        "usage: %s <model repository> <backend directory> [verbose level]\n",
        argv[0]);
    return 2;
  }
  TRITONSERVER_Server* server =
      start(argv[1], argv[2], argc > 3 ? atoi(argv[3]) : 0);
  describe(server);
  TRITONSERVER_ResponseAllocator* allocator;
  check(
      TRITONSERVER_ResponseAllocatorNew(&allocator, alloc_fn, release_fn, NULL),
      "allocator");
  infer_simple(server, allocator);
  infer_square(server, allocator, "square_int32");
  infer_square(server, allocator, "square_pipeline");
  report(server);
  libraries();
  check(TRITONSERVER_ResponseAllocatorDelete(allocator), "delete allocator");
  check(TRITONSERVER_ServerStop(server), "stop");
  check(TRITONSERVER_ServerDelete(server), "delete");
  printf("PASS\n");
  return 0;
}
