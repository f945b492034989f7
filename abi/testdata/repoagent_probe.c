// A repository agent for tests, driven by its parameters in the model's
// configuration (model_repository_agents { agents [ { name: "probe"
// parameters { key: "..." value: "..." } } ] }):
//
//   log       a file the agent appends one line to per call: "initialize",
//             "model_initialize", the action ("LOAD", "LOAD_COMPLETE", ...),
//             "model_finalize", "finalize"
//   fail      the action ("LOAD", "UNLOAD", ...) on which ModelAction fails
//   config    on LOAD, the agent acquires a location, writes this text there
//             as config.pbtxt, makes the version directory "1" and points
//             the model at it (TRITONREPOAGENT_ModelRepositoryUpdate)
//   checks    on LOAD, the agent first calls the host functions with good
//             and bad arguments and fails naming the first that did not
//             answer as the header says
#define _XOPEN_SOURCE 700  // mkdir
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "triton/core/tritonrepoagent.h"

static const char* action_names[] = {
    "LOAD", "LOAD_COMPLETE", "LOAD_FAIL", "UNLOAD", "UNLOAD_COMPLETE"};

// param returns the value of the agent's parameter name, or NULL.
static const char*
param(
    TRITONREPOAGENT_Agent* agent, TRITONREPOAGENT_AgentModel* model,
    const char* name)
{
  uint32_t n = 0;
  if (TRITONREPOAGENT_ModelParameterCount(agent, model, &n) != NULL)
    return NULL;
  for (uint32_t i = 0; i < n; i++) {
    const char *k, *v;
    if (TRITONREPOAGENT_ModelParameter(agent, model, i, &k, &v) == NULL &&
        strcmp(k, name) == 0)
      return v;
  }
  return NULL;
}

static void
log_line(
    TRITONREPOAGENT_Agent* agent, TRITONREPOAGENT_AgentModel* model,
    const char* line)
{
  const char* path = param(agent, model, "log");
  if (path == NULL)
    return;
  FILE* f = fopen(path, "a");
  if (f != NULL) {
    fprintf(f, "%s\n", line);
    fclose(f);
  }
}

// expect fails the check named what unless err has code (0: no error).
static const char*
expect(TRITONSERVER_Error* err, int code, const char* what)
{
  int got = err == NULL ? 0 : (int)TRITONSERVER_ErrorCode(err) + 100;
  TRITONSERVER_ErrorDelete(err);
  return got == (code == 0 ? 0 : code + 100) ? NULL : what;
}

#define INVALID TRITONSERVER_ERROR_INVALID_ARG
#define CHECK(call, code, what)                    \
  do {                                             \
    const char* f_ = expect((call), (code), what); \
    if (f_ != NULL)                                \
      return f_;                                   \
  } while (0)

static const char*
bad_arguments(TRITONREPOAGENT_Agent* agent, TRITONREPOAGENT_AgentModel* model)
{
  uint32_t major = 0, minor = 0, n = 0;
  const char *loc, *k, *v;
  TRITONREPOAGENT_ArtifactType type;
  TRITONSERVER_Message* msg = NULL;
  void* state = NULL;
  CHECK(TRITONREPOAGENT_ApiVersion(&major, &minor), 0, "ApiVersion");
  if (major != TRITONREPOAGENT_API_VERSION_MAJOR ||
      minor < TRITONREPOAGENT_API_VERSION_MINOR)
    return "ApiVersion values";
  CHECK(TRITONREPOAGENT_ApiVersion(NULL, &minor), INVALID, "ApiVersion NULL");
  CHECK(
      TRITONREPOAGENT_ModelRepositoryLocation(agent, model, &type, &loc), 0,
      "Location");
  if (type != TRITONREPOAGENT_ARTIFACT_FILESYSTEM || loc[0] != '/')
    return "Location is a local absolute path";
  CHECK(
      TRITONREPOAGENT_ModelRepositoryLocation(NULL, model, &type, &loc),
      INVALID, "Location NULL agent");
  CHECK(
      TRITONREPOAGENT_ModelRepositoryLocation(
          agent, (TRITONREPOAGENT_AgentModel*)agent, &type, &loc),
      INVALID, "Location agent as model");
  CHECK(
      TRITONREPOAGENT_ModelRepositoryLocation(agent, model, NULL, &loc),
      INVALID, "Location NULL type");
  CHECK(
      TRITONREPOAGENT_ModelParameterCount(agent, model, NULL), INVALID,
      "ParameterCount NULL");
  CHECK(TRITONREPOAGENT_ModelParameterCount(agent, model, &n), 0, "Count");
  CHECK(
      TRITONREPOAGENT_ModelParameter(agent, model, n, &k, &v), INVALID,
      "Parameter out of range");
  CHECK(
      TRITONREPOAGENT_ModelParameter(agent, model, 0, NULL, &v), INVALID,
      "Parameter NULL name");
  CHECK(
      TRITONREPOAGENT_ModelConfig(agent, model, 2, &msg), 5 /* UNSUPPORTED */,
      "Config version 2");
  CHECK(TRITONREPOAGENT_ModelConfig(agent, model, 1, &msg), 0, "Config");
  const char* json = NULL;
  size_t len = 0;
  CHECK(TRITONSERVER_MessageSerializeToJson(msg, &json, &len), 0, "json");
  if (strstr(json, "\"name\"") == NULL)
    return "Config holds the model's name";
  CHECK(TRITONSERVER_MessageDelete(msg), 0, "MessageDelete");
  CHECK(
      TRITONREPOAGENT_ModelRepositoryLocationAcquire(
          agent, model, TRITONREPOAGENT_ARTIFACT_REMOTE_FILESYSTEM, &loc),
      INVALID, "Acquire remote");
  CHECK(
      TRITONREPOAGENT_ModelRepositoryLocationRelease(agent, model, "/nope"),
      4 /* UNAVAILABLE */, "Release with nothing acquired");
  CHECK(
      TRITONREPOAGENT_ModelRepositoryUpdate(
          agent, model, TRITONREPOAGENT_ARTIFACT_REMOTE_FILESYSTEM, "s3://x"),
      5 /* UNSUPPORTED */, "Update remote");
  CHECK(
      TRITONREPOAGENT_ModelRepositoryUpdate(
          agent, model, TRITONREPOAGENT_ARTIFACT_FILESYSTEM, NULL),
      INVALID, "Update NULL");
  const char *a1, *a2;
  CHECK(
      TRITONREPOAGENT_ModelRepositoryLocationAcquire(
          agent, model, TRITONREPOAGENT_ARTIFACT_FILESYSTEM, &a1),
      0, "Acquire");
  CHECK(
      TRITONREPOAGENT_ModelRepositoryLocationAcquire(
          agent, model, TRITONREPOAGENT_ARTIFACT_FILESYSTEM, &a2),
      0, "Acquire again");
  if (strcmp(a1, a2) != 0)
    return "Acquire twice gives the same location";
  struct stat st;
  if (stat(a1, &st) != 0 || !S_ISDIR(st.st_mode))
    return "Acquire makes a directory";
  char* path = strdup(a1);
  CHECK(
      TRITONREPOAGENT_ModelRepositoryLocationRelease(
          agent, model, "/elsewhere"),
      0, "Release (the location passed is not looked at, as in Triton)");
  int gone = stat(path, &st) != 0;
  free(path);
  if (!gone)
    return "Release removes the directory";
  CHECK(TRITONREPOAGENT_ModelSetState(model, &n), 0, "ModelSetState");
  CHECK(TRITONREPOAGENT_ModelState(model, &state), 0, "ModelState");
  if (state != &n)
    return "ModelState gives back what ModelSetState set";
  CHECK(TRITONREPOAGENT_ModelSetState(model, NULL), 0, "ModelSetState NULL");
  CHECK(TRITONREPOAGENT_ModelState(NULL, &state), INVALID, "ModelState NULL");
  CHECK(TRITONREPOAGENT_State(agent, NULL), INVALID, "State NULL out");
  CHECK(
      TRITONREPOAGENT_SetState((TRITONREPOAGENT_Agent*)model, NULL), INVALID,
      "SetState model as agent");
  return NULL;
}

// relocate writes config as config.pbtxt, with version directory 1, into a
// location of the agent's own and makes it the model's.
static TRITONSERVER_Error*
relocate(
    TRITONREPOAGENT_Agent* agent, TRITONREPOAGENT_AgentModel* model,
    const char* config)
{
  const char* dir;
  TRITONSERVER_Error* err = TRITONREPOAGENT_ModelRepositoryLocationAcquire(
      agent, model, TRITONREPOAGENT_ARTIFACT_FILESYSTEM, &dir);
  if (err != NULL)
    return err;
  char path[4096];
  snprintf(path, sizeof path, "%s/config.pbtxt", dir);
  FILE* f = fopen(path, "w");
  if (f == NULL) {
    return TRITONSERVER_ErrorNew(
        TRITONSERVER_ERROR_INTERNAL, "cannot write config.pbtxt");
  }
  fputs(config, f);
  fclose(f);
  snprintf(path, sizeof path, "%s/1", dir);
  mkdir(path, 0755);
  return TRITONREPOAGENT_ModelRepositoryUpdate(
      agent, model, TRITONREPOAGENT_ARTIFACT_FILESYSTEM, dir);
}

TRITONSERVER_Error*
TRITONREPOAGENT_Initialize(TRITONREPOAGENT_Agent* agent)
{
  int* calls = calloc(1, sizeof(int));
  return TRITONREPOAGENT_SetState(agent, calls);
}

TRITONSERVER_Error*
TRITONREPOAGENT_Finalize(TRITONREPOAGENT_Agent* agent)
{
  void* state = NULL;
  TRITONSERVER_Error* err = TRITONREPOAGENT_State(agent, &state);
  free(state);
  return err;
}

TRITONSERVER_Error*
TRITONREPOAGENT_ModelInitialize(
    TRITONREPOAGENT_Agent* agent, TRITONREPOAGENT_AgentModel* model)
{
  log_line(agent, model, "model_initialize");
  return NULL;
}

TRITONSERVER_Error*
TRITONREPOAGENT_ModelFinalize(
    TRITONREPOAGENT_Agent* agent, TRITONREPOAGENT_AgentModel* model)
{
  log_line(agent, model, "model_finalize");
  return NULL;
}

TRITONSERVER_Error*
TRITONREPOAGENT_ModelAction(
    TRITONREPOAGENT_Agent* agent, TRITONREPOAGENT_AgentModel* model,
    const TRITONREPOAGENT_ActionType action_type)
{
  const char* name = action_names[action_type];
  log_line(agent, model, name);
  const char* fail = param(agent, model, "fail");
  if (fail != NULL && strcmp(fail, name) == 0) {
    char msg[128];
    snprintf(msg, sizeof msg, "the probe agent refuses %s", name);
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG, msg);
  }
  if (action_type != TRITONREPOAGENT_ACTION_LOAD) {
    TRITONSERVER_Error* err = TRITONREPOAGENT_ModelRepositoryUpdate(
        agent, model, TRITONREPOAGENT_ARTIFACT_FILESYSTEM, "/tmp");
    if (expect(err, INVALID, "Update outside LOAD") != NULL) {
      return TRITONSERVER_ErrorNew(
          TRITONSERVER_ERROR_INTERNAL, "check failed: Update outside LOAD");
    }
    return NULL;
  }
  if (param(agent, model, "checks") != NULL) {
    const char* failed = bad_arguments(agent, model);
    if (failed != NULL) {
      char msg[256];
      snprintf(msg, sizeof msg, "check failed: %s", failed);
      return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL, msg);
    }
  }
  const char* config = param(agent, model, "config");
  if (config != NULL)
    return relocate(agent, model, config);
  return NULL;
}
