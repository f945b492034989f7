// TRITONREPOAGENT_* host functions, the server's agent and agent model
// objects, and its calls into an agent (see plugins.h). Pure C: what an
// agent reads (location, parameters, configuration) is copied here when the
// agent model is made, and what it changes (its location) Go reads back
// after the call (thost_repoagent_model_location).
#define _XOPEN_SOURCE 700  // mkdtemp, nftw

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugins.h"

#define AGENT(var, h) THOST_OBJECT(var, h, THOST_KIND_REPOAGENT, "agent")
#define AGENT_MODEL(var, h) \
  THOST_OBJECT(var, h, THOST_KIND_REPOAGENT_MODEL, "agent model")

TRITONSERVER_Error*
TRITONREPOAGENT_ApiVersion(uint32_t* major, uint32_t* minor)
{
  THOST_CHECK_ARG(major != NULL && minor != NULL, "major or minor is NULL");
  *major = TRITONREPOAGENT_API_VERSION_MAJOR;
  *minor = TRITONREPOAGENT_API_VERSION_MINOR;
  return NULL;
}

// model_of checks that model is a live agent model of agent.
#define MODEL_OF(var, agent, model)                                     \
  do {                                                                  \
    struct thost_repoagent* a_;                                         \
    AGENT(a_, agent);                                                   \
    AGENT_MODEL(var, model);                                            \
    THOST_CHECK_ARG(var->agent == a_, "the model is not this agent's"); \
  } while (0)

TRITONSERVER_Error*
TRITONREPOAGENT_ModelRepositoryLocation(
    TRITONREPOAGENT_Agent* agent, TRITONREPOAGENT_AgentModel* model,
    TRITONREPOAGENT_ArtifactType* artifact_type, const char** location)
{
  struct thost_repoagent_model* m;
  MODEL_OF(m, agent, model);
  THOST_CHECK_ARG(
      artifact_type != NULL && location != NULL,
      "artifact_type or location is NULL");
  pthread_mutex_lock(&m->mu);
  *location = m->location;
  pthread_mutex_unlock(&m->mu);
  *artifact_type = TRITONREPOAGENT_ARTIFACT_FILESYSTEM;
  return NULL;
}

TRITONSERVER_Error*
TRITONREPOAGENT_ModelRepositoryLocationAcquire(
    TRITONREPOAGENT_Agent* agent, TRITONREPOAGENT_AgentModel* model,
    const TRITONREPOAGENT_ArtifactType artifact_type, const char** location)
{
  struct thost_repoagent_model* m;
  MODEL_OF(m, agent, model);
  THOST_CHECK_ARG(location != NULL, "location is NULL");
  if (artifact_type != TRITONREPOAGENT_ARTIFACT_FILESYSTEM) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "%s: unexpected artifact type, expects "
        "'TRITONREPOAGENT_ARTIFACT_FILESYSTEM'",
        __func__);
  }
  pthread_mutex_lock(&m->mu);
  if (m->acquired == NULL) {
    const char* tmp = getenv("TMPDIR");
    char tmpl[4096];
    int n = snprintf(
        tmpl, sizeof tmpl, "%s/tritonhost-repoagent-XXXXXX",
        tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    if (n < 0 || (size_t)n >= sizeof tmpl || mkdtemp(tmpl) == NULL ||
        (m->acquired = strdup(tmpl)) == NULL) {
      pthread_mutex_unlock(&m->mu);
      return thost_errorf(
          TRITONSERVER_ERROR_INTERNAL, "%s: cannot create a directory in %s",
          __func__, tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    }
  }
  *location = m->acquired;
  pthread_mutex_unlock(&m->mu);
  return NULL;
}

static int
remove_entry(const char* path, const struct stat* st, int flag, struct FTW* ftw)
{
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

// remove_all removes dir and everything under it, not following links.
static int
remove_all(const char* dir)
{
  return nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

TRITONSERVER_Error*
TRITONREPOAGENT_ModelRepositoryLocationRelease(
    TRITONREPOAGENT_Agent* agent, TRITONREPOAGENT_AgentModel* model,
    const char* location)
{
  struct thost_repoagent_model* m;
  MODEL_OF(m, agent, model);
  (void)location;  // Triton releases what was acquired, whatever is passed
  pthread_mutex_lock(&m->mu);
  if (m->acquired == NULL) {
    pthread_mutex_unlock(&m->mu);
    return thost_errorf(
        TRITONSERVER_ERROR_UNAVAILABLE,
        "%s: this agent model has acquired no location", __func__);
  }
  char* dir = m->acquired;
  m->acquired = NULL;
  pthread_mutex_unlock(&m->mu);
  int rc = remove_all(dir);
  TRITONSERVER_Error* err = NULL;
  if (rc != 0) {
    err = thost_errorf(
        TRITONSERVER_ERROR_INTERNAL, "%s: cannot remove %s", __func__, dir);
  }
  free(dir);
  return err;
}

TRITONSERVER_Error*
TRITONREPOAGENT_ModelRepositoryUpdate(
    TRITONREPOAGENT_Agent* agent, TRITONREPOAGENT_AgentModel* model,
    const TRITONREPOAGENT_ArtifactType artifact_type, const char* location)
{
  struct thost_repoagent_model* m;
  MODEL_OF(m, agent, model);
  THOST_CHECK_ARG(location != NULL && location[0] != '\0', "location is empty");
  if (artifact_type != TRITONREPOAGENT_ARTIFACT_FILESYSTEM) {
    return thost_errorf(
        TRITONSERVER_ERROR_UNSUPPORTED,
        "%s: only TRITONREPOAGENT_ARTIFACT_FILESYSTEM locations are served",
        __func__);
  }
  pthread_mutex_lock(&m->mu);
  if (m->action != TRITONREPOAGENT_ACTION_LOAD) {
    pthread_mutex_unlock(&m->mu);
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "%s: location can only be updated during TRITONREPOAGENT_ACTION_LOAD",
        __func__);
  }
  char* copy = strdup(location);
  if (copy == NULL) {
    pthread_mutex_unlock(&m->mu);
    return thost_errorf(
        TRITONSERVER_ERROR_INTERNAL, "%s: out of memory", __func__);
  }
  free(m->location);
  m->location = copy;
  pthread_mutex_unlock(&m->mu);
  return NULL;
}

TRITONSERVER_Error*
TRITONREPOAGENT_ModelParameterCount(
    TRITONREPOAGENT_Agent* agent, TRITONREPOAGENT_AgentModel* model,
    uint32_t* count)
{
  struct thost_repoagent_model* m;
  MODEL_OF(m, agent, model);
  THOST_CHECK_ARG(count != NULL, "count is NULL");
  *count = m->param_count;
  return NULL;
}

TRITONSERVER_Error*
TRITONREPOAGENT_ModelParameter(
    TRITONREPOAGENT_Agent* agent, TRITONREPOAGENT_AgentModel* model,
    const uint32_t index, const char** parameter_name,
    const char** parameter_value)
{
  struct thost_repoagent_model* m;
  MODEL_OF(m, agent, model);
  THOST_CHECK_ARG(
      parameter_name != NULL && parameter_value != NULL,
      "parameter_name or parameter_value is NULL");
  if (index >= m->param_count) {
    return thost_errorf(
        TRITONSERVER_ERROR_INVALID_ARG,
        "%s: index out of range for model parameters (%u of %u)", __func__,
        index, m->param_count);
  }
  *parameter_name = m->param_names[index];
  *parameter_value = m->param_values[index];
  return NULL;
}

TRITONSERVER_Error*
TRITONREPOAGENT_ModelConfig(
    TRITONREPOAGENT_Agent* agent, TRITONREPOAGENT_AgentModel* model,
    const uint32_t config_version, TRITONSERVER_Message** model_config)
{
  struct thost_repoagent_model* m;
  MODEL_OF(m, agent, model);
  THOST_CHECK_ARG(model_config != NULL, "model_config is NULL");
  if (config_version != 1) {
    return thost_errorf(
        TRITONSERVER_ERROR_UNSUPPORTED,
        "%s: model configuration version %u is not supported (only 1)",
        __func__, config_version);
  }
  struct thost_message* msg =
      thost_message_new(m->config_json, m->config_len, NULL);
  if (msg == NULL) {
    return thost_errorf(
        TRITONSERVER_ERROR_INTERNAL, "%s: out of memory", __func__);
  }
  *model_config = THOST_AS_HANDLE(TRITONSERVER_Message, msg->handle);
  return NULL;
}

TRITONSERVER_Error*
TRITONREPOAGENT_ModelState(TRITONREPOAGENT_AgentModel* model, void** state)
{
  struct thost_repoagent_model* m;
  AGENT_MODEL(m, model);
  THOST_CHECK_ARG(state != NULL, "state is NULL");
  *state = __atomic_load_n(&m->state, __ATOMIC_ACQUIRE);
  return NULL;
}

TRITONSERVER_Error*
TRITONREPOAGENT_ModelSetState(TRITONREPOAGENT_AgentModel* model, void* state)
{
  struct thost_repoagent_model* m;
  AGENT_MODEL(m, model);
  __atomic_store_n(&m->state, state, __ATOMIC_RELEASE);
  return NULL;
}

TRITONSERVER_Error*
TRITONREPOAGENT_State(TRITONREPOAGENT_Agent* agent, void** state)
{
  struct thost_repoagent* a;
  AGENT(a, agent);
  THOST_CHECK_ARG(state != NULL, "state is NULL");
  *state = __atomic_load_n(&a->state, __ATOMIC_ACQUIRE);
  return NULL;
}

TRITONSERVER_Error*
TRITONREPOAGENT_SetState(TRITONREPOAGENT_Agent* agent, void* state)
{
  struct thost_repoagent* a;
  AGENT(a, agent);
  __atomic_store_n(&a->state, state, __ATOMIC_RELEASE);
  return NULL;
}

// ---- The server's objects and calls
// ---------------------------------------------

struct thost_repoagent*
thost_repoagent_new(struct thost_host* h, const char* name, size_t name_len)
{
  struct thost_repoagent* a = calloc(1, sizeof(*a));
  if (a == NULL)
    return NULL;
  a->host = h;
  a->name = thost_strndup(name, name_len);
  a->handle = thost_handle_new(THOST_KIND_REPOAGENT, a);
  if (a->name == NULL || a->handle == 0) {
    thost_repoagent_free(a);
    return NULL;
  }
  return a;
}

void
thost_repoagent_free(struct thost_repoagent* a)
{
  thost_handle_free(a->handle);
  free(a->name);
  free(a);
}

struct thost_repoagent_model*
thost_repoagent_model_new(
    struct thost_repoagent* a, const char* location, size_t location_len,
    const char* config, size_t config_len, uint32_t param_count)
{
  struct thost_repoagent_model* m = calloc(1, sizeof(*m));
  if (m == NULL)
    return NULL;
  m->agent = a;
  m->action = -1;
  pthread_mutex_init(&m->mu, NULL);
  m->location = thost_strndup(location, location_len);
  m->config_json = thost_strndup(config, config_len);
  m->config_len = config_len;
  m->param_count = param_count;
  m->param_names = calloc(param_count + 1, sizeof(char*));
  m->param_values = calloc(param_count + 1, sizeof(char*));
  m->handle = thost_handle_new(THOST_KIND_REPOAGENT_MODEL, m);
  if (m->location == NULL || m->config_json == NULL || m->param_names == NULL ||
      m->param_values == NULL || m->handle == 0) {
    thost_repoagent_model_free(m);
    return NULL;
  }
  return m;
}

bool
thost_repoagent_model_set_param(
    struct thost_repoagent_model* m, uint32_t index, const char* name,
    size_t name_len, const char* value, size_t value_len)
{
  if (index >= m->param_count)
    return false;
  m->param_names[index] = thost_strndup(name, name_len);
  m->param_values[index] = thost_strndup(value, value_len);
  return m->param_names[index] != NULL && m->param_values[index] != NULL;
}

char*
thost_repoagent_model_location(struct thost_repoagent_model* m)
{
  pthread_mutex_lock(&m->mu);
  char* loc = strdup(m->location);
  pthread_mutex_unlock(&m->mu);
  return loc;
}

void
thost_repoagent_model_free(struct thost_repoagent_model* m)
{
  thost_handle_free(m->handle);
  if (m->acquired != NULL) {
    remove_all(m->acquired);
    free(m->acquired);
  }
  for (uint32_t i = 0; m->param_names != NULL && i < m->param_count; i++) {
    free(m->param_names[i]);
    free(m->param_values[i]);
  }
  free(m->param_names);
  free(m->param_values);
  free(m->location);
  free(m->config_json);
  pthread_mutex_destroy(&m->mu);
  free(m);
}

typedef TRITONSERVER_Error* (*agent_fn)(TRITONREPOAGENT_Agent*);
typedef TRITONSERVER_Error* (*agent_model_fn)(
    TRITONREPOAGENT_Agent*, TRITONREPOAGENT_AgentModel*);
typedef TRITONSERVER_Error* (*agent_action_fn)(
    TRITONREPOAGENT_Agent*, TRITONREPOAGENT_AgentModel*,
    const TRITONREPOAGENT_ActionType);

TRITONSERVER_Error*
thost_call_repoagent(void* fn, struct thost_repoagent* a)
{
  struct thost_host* saved = thost_swap_host(a->host);
  TRITONSERVER_Error* err =
      ((agent_fn)fn)(THOST_AS_HANDLE(TRITONREPOAGENT_Agent, a->handle));
  thost_swap_host(saved);
  return err;
}

TRITONSERVER_Error*
thost_call_repoagent_model(void* fn, struct thost_repoagent_model* m)
{
  struct thost_host* saved = thost_swap_host(m->agent->host);
  TRITONSERVER_Error* err = ((agent_model_fn)fn)(
      THOST_AS_HANDLE(TRITONREPOAGENT_Agent, m->agent->handle),
      THOST_AS_HANDLE(TRITONREPOAGENT_AgentModel, m->handle));
  thost_swap_host(saved);
  return err;
}

TRITONSERVER_Error*
thost_call_repoagent_action(
    void* fn, struct thost_repoagent_model* m, int action)
{
  pthread_mutex_lock(&m->mu);
  m->action = action;
  pthread_mutex_unlock(&m->mu);
  struct thost_host* saved = thost_swap_host(m->agent->host);
  TRITONSERVER_Error* err = ((agent_action_fn)fn)(
      THOST_AS_HANDLE(TRITONREPOAGENT_Agent, m->agent->handle),
      THOST_AS_HANDLE(TRITONREPOAGENT_AgentModel, m->handle),
      (TRITONREPOAGENT_ActionType)action);
  thost_swap_host(saved);
  return err;
}
