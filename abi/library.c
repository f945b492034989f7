// Opening backend libraries, and the objects the server creates for a
// backend, its models and their instances (see host.h).
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"

// ---- Shared libraries -------------------------------------------------------

static char*
dl_error(const char* fallback)
{
  const char* e = dlerror();
  return strdup(e != NULL ? e : fallback);
}

void*
thost_dlopen(const char* path, char** err)
{
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL)
    *err = dl_error("unknown dlopen error");
  return lib;
}

bool
thost_dl_loaded(const char* soname)
{
  void* lib = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
  if (lib == NULL)
    return false;
  dlclose(lib);  // RTLD_NOLOAD counted a reference
  return true;
}

void*
thost_dlsym(void* lib, const char* name)
{
  dlerror();
  return dlsym(lib, name);
}

int
thost_dlclose(void* lib, char** err)
{
  int rc = dlclose(lib);
  if (rc != 0)
    *err = dl_error("unknown dlclose error");
  return rc;
}

// ---- Backends ---------------------------------------------------------------

struct thost_backend*
thost_backend_new(
    struct thost_host* host, const char* name, size_t name_len,
    const char* artifacts, size_t artifacts_len, const char* config,
    size_t config_len)
{
  struct thost_backend* b = calloc(1, sizeof(*b));
  if (b == NULL)
    return NULL;
  b->host = host;
  b->policy = TRITONBACKEND_EXECUTION_BLOCKING;
  b->name = thost_strndup(name, name_len);
  b->artifacts = thost_strndup(artifacts, artifacts_len);
  b->config = thost_message_new(config, config_len, host);
  b->handle = thost_handle_new(THOST_KIND_BACKEND, b);
  b->memory_manager = thost_handle_new(THOST_KIND_MEMORY_MANAGER, b);
  if (b->name == NULL || b->artifacts == NULL || b->config == NULL ||
      b->handle == 0 || b->memory_manager == 0) {
    thost_backend_free(b);
    return NULL;
  }
  return b;
}

void
thost_backend_free(struct thost_backend* b)
{
  thost_handle_free(b->handle);
  thost_handle_free(b->memory_manager);
  free(b->name);
  free(b->artifacts);
  thost_message_free(b->config);
  free(b);
}

struct thost_backend_attributes*
thost_attributes_new(void)
{
  struct thost_backend_attributes* a = calloc(1, sizeof(*a));
  if (a == NULL)
    return NULL;
  a->handle = thost_handle_new(THOST_KIND_BACKEND_ATTRIBUTE, a);
  if (a->handle == 0) {
    free(a);
    return NULL;
  }
  return a;
}

void
thost_attributes_free(struct thost_backend_attributes* a)
{
  thost_handle_free(a->handle);
  for (uint32_t i = 0; i < a->group_count; i++) free(a->groups[i].device_ids);
  free(a);
}

// ---- Models -----------------------------------------------------------------

struct thost_model*
thost_model_new(
    struct thost_backend* backend, uint64_t key, const char* name,
    size_t name_len, uint64_t version, const char* repository,
    size_t repository_len, bool auto_complete)
{
  struct thost_model* m = calloc(1, sizeof(*m));
  if (m == NULL)
    return NULL;
  m->key = key;
  m->backend = backend;
  m->version = version;
  m->auto_complete = auto_complete;
  pthread_mutex_init(&m->config_mu, NULL);
  m->name = thost_strndup(name, name_len);
  m->repository = thost_strndup(repository, repository_len);
  m->handle = thost_handle_new(THOST_KIND_MODEL, m);
  if (m->name == NULL || m->repository == NULL || m->handle == 0) {
    thost_model_free(m);
    return NULL;
  }
  return m;
}

void
thost_model_retire(struct thost_model* m)
{
  thost_handle_free(__atomic_exchange_n(&m->handle, 0, __ATOMIC_ACQ_REL));
}

void
thost_model_free(struct thost_model* m)
{
  thost_model_retire(m);
  free(m->name);
  free(m->repository);
  free(m->config_json);
  pthread_mutex_destroy(&m->config_mu);
  free(m);
}

// Replaces the configuration JSON a model hands out (at creation, and after
// TRITONBACKEND_ModelSetConfig).
void
thost_model_set_config_json(
    struct thost_model* model, const char* json, size_t len)
{
  char* copy = thost_strndup(json, len);
  pthread_mutex_lock(&model->config_mu);
  char* old = model->config_json;
  model->config_json = copy;
  model->config_len = copy != NULL ? len : 0;
  pthread_mutex_unlock(&model->config_mu);
  free(old);
}

// ---- Instances --------------------------------------------------------------

struct thost_instance*
thost_instance_new(
    struct thost_model* model, uint64_t key, const char* name, size_t name_len,
    int kind, int32_t device, bool passive, const char* host_policy,
    size_t host_policy_len, uint32_t profile_count)
{
  struct thost_instance* i = calloc(1, sizeof(*i));
  if (i == NULL)
    return NULL;
  i->key = key;
  i->model = model;
  i->kind = (TRITONSERVER_InstanceGroupKind)kind;
  i->device_id = device;
  i->passive = passive;
  i->profile_count = profile_count;
  i->profiles = calloc(profile_count + 1, sizeof(char*));
  i->name = thost_strndup(name, name_len);
  i->host_policy =
      thost_message_new(host_policy, host_policy_len, model->backend->host);
  i->handle = thost_handle_new(THOST_KIND_INSTANCE, i);
  if (i->profiles == NULL || i->name == NULL || i->host_policy == NULL ||
      i->handle == 0) {
    thost_instance_free(i);
    return NULL;
  }
  return i;
}

bool
thost_instance_set_profile(
    struct thost_instance* i, uint32_t index, const char* name, size_t name_len)
{
  i->profiles[index] = thost_strndup(name, name_len);
  return i->profiles[index] != NULL;
}

void
thost_instance_retire(struct thost_instance* i)
{
  thost_handle_free(__atomic_exchange_n(&i->handle, 0, __ATOMIC_ACQ_REL));
}

void
thost_instance_free(struct thost_instance* i)
{
  thost_instance_retire(i);
  free(i->name);
  thost_message_free(i->host_policy);
  if (i->profiles != NULL) {
    for (uint32_t k = 0; k < i->profile_count; k++) free(i->profiles[k]);
  }
  free(i->profiles);
  free(i);
}
