// The server's objects behind the handles of the two other plugin kinds,
// response caches (tritoncache.h) and repository agents
// (tritonrepoagent.h), and the calls into their entry points. Like
// objects.h, the layouts are the server's business.
//
// Caches. Entries and allocators live only during one call into the cache
// (thost_cache_insert, thost_cache_lookup): made before it, their handles
// freed after it, so a cache that keeps one finds it dead. The insert's
// data is Go memory that Go pinned for the call; nothing else here points
// into Go.
//
// Agents. An agent lives from its library's opening to its closing, an
// agent model from TRITONREPOAGENT_ModelInitialize to
// TRITONREPOAGENT_ModelFinalize; Go frees both, after their last call.
#ifndef TRITONHOST_ABI_PLUGINS_H
#define TRITONHOST_ABI_PLUGINS_H

#include "objects.h"
#include "triton/core/tritoncache.h"
#include "triton/core/tritonrepoagent.h"

// Makes the calling thread work for h (see thost_ambient_host) and returns
// the server it worked for before, to be restored after the call into a
// plugin (host.c).
struct thost_host* thost_swap_host(struct thost_host* h);

// ---- Caches (cache_api.c)
// ----------------------------------------------------

// The most buffers one entry may hold: the server inserts one per entry.
#define THOST_CACHE_ENTRY_MAX_BUFFERS 64
// The longest key handed to a cache, without its NUL.
#define THOST_CACHE_KEY_MAX 255

struct thost_cache_buffer {
  void* base;
  uint64_t byte_size;
  TRITONSERVER_MemoryType memory_type;
  int64_t memory_type_id;
};

struct thost_cache_entry {
  uint64_t handle;
  pthread_mutex_t mu;
  uint32_t count;
  struct thost_cache_buffer buffers[THOST_CACHE_ENTRY_MAX_BUFFERS];
};

enum thost_cache_direction {
  THOST_CACHE_INSERT = 1,  // Copy: from src into the entry's buffers
  THOST_CACHE_LOOKUP = 2,  // Copy: from the entry's buffers into Go
};

struct thost_cache_allocator {
  uint64_t handle;
  int direction;
  struct thost_host* host;
  const void* src;  // INSERT: the data (pinned Go memory), src_size bytes
  uint64_t src_size;
  uint64_t lookup;  // LOOKUP: the Go lookup's key
  int copied;       // atomic: TRITONCACHE_Copy ran
};

// Creates the cache: *cache is what TRITONCACHE_CacheInitialize returned.
TRITONSERVER_Error* thost_cache_initialize(
    void* fn, struct thost_host* h, void** cache, const char* config,
    size_t config_len);
TRITONSERVER_Error* thost_cache_finalize(
    void* fn, struct thost_host* h, void* cache);
// Inserts size bytes at src (Go memory, pinned for the call) under key.
TRITONSERVER_Error* thost_cache_insert(
    void* fn, struct thost_host* h, void* cache, const char* key,
    size_t key_len, const void* src, uint64_t size);
// Looks key up; lookup names the Go lookup that TRITONCACHE_Copy fills
// (thostCacheLookupCopy). *copied is whether the copy ran and succeeded.
TRITONSERVER_Error* thost_cache_lookup(
    void* fn, struct thost_host* h, void* cache, const char* key,
    size_t key_len, uint64_t lookup, bool* copied);

// ---- Repository agents (repoagent_api.c)
// -------------------------------------

struct thost_repoagent {
  uint64_t handle;
  struct thost_host* host;
  char* name;
  void* state;  // atomic: TRITONREPOAGENT_SetState
};

struct thost_repoagent_model {
  uint64_t handle;
  struct thost_repoagent* agent;
  pthread_mutex_t mu;  // guards location and acquired
  void* state;         // atomic: TRITONREPOAGENT_ModelSetState
  int action;          // the action being delivered; -1 before the first
  char* location;      // where the model's files are now
  char* acquired;      // the directory acquired for the agent, or NULL
  char* config_json;   // the configuration the agent reads
  size_t config_len;
  uint32_t param_count;
  char** param_names;
  char** param_values;
};

// NULL when out of memory or handles.
struct thost_repoagent* thost_repoagent_new(
    struct thost_host* h, const char* name, size_t name_len);
void thost_repoagent_free(struct thost_repoagent* a);
// Creates an agent model whose files are at location, with config (JSON)
// and param_count parameters set afterwards with
// thost_repoagent_model_set_param. NULL when out of memory or handles.
struct thost_repoagent_model* thost_repoagent_model_new(
    struct thost_repoagent* a, const char* location, size_t location_len,
    const char* config, size_t config_len, uint32_t param_count);
bool thost_repoagent_model_set_param(
    struct thost_repoagent_model* m, uint32_t index, const char* name,
    size_t name_len, const char* value, size_t value_len);
// The model's current location, a new string the caller frees.
char* thost_repoagent_model_location(struct thost_repoagent_model* m);
// Frees the agent model and removes the directory it acquired, if any.
void thost_repoagent_model_free(struct thost_repoagent_model* m);

// Calls into an agent: fn is TRITONREPOAGENT_Initialize or _Finalize, or
// TRITONREPOAGENT_ModelInitialize or _ModelFinalize, or
// TRITONREPOAGENT_ModelAction with action.
TRITONSERVER_Error* thost_call_repoagent(void* fn, struct thost_repoagent* a);
TRITONSERVER_Error* thost_call_repoagent_model(
    void* fn, struct thost_repoagent_model* m);
TRITONSERVER_Error* thost_call_repoagent_action(
    void* fn, struct thost_repoagent_model* m, int action);

#endif  // TRITONHOST_ABI_PLUGINS_H
