// What the Go side of abi calls in C to run a server: servers, opening
// libraries, creating the objects of backends, models and instances, and
// calling a backend's entry points. Never called by backends.
#ifndef TRITONHOST_ABI_HOST_H
#define TRITONHOST_ABI_HOST_H

#include "objects.h"

_Static_assert(
    sizeof(void*) == 8, "handles are 64-bit values passed as pointers");

// ---- Servers (host.c) -------------------------------------------------------

// outbuf_bytes bounds the memory kept for outputs (output_cache.c). NULL
// when out of memory.
struct thost_host* thost_host_new(uint64_t key, uint64_t outbuf_bytes);
void thost_host_close(struct thost_host* h);
void thost_set_newest_host(struct thost_host* h);  // NULL: none open
void thost_host_set_log(struct thost_host* h, int level, bool on);
int64_t thost_host_live(struct thost_host* h, int which);

// ---- Output buffers (output_cache.c) ----------------------------------------
// Set the bound before any backend runs; close frees what is kept and keeps
// nothing more.

void thost_outbuf_init(struct thost_outbuf_cache* c, uint64_t max_bytes);
void thost_outbuf_close(struct thost_outbuf_cache* c);
void thost_outbuf_stats(
    struct thost_outbuf_cache* c, uint64_t* count, uint64_t* bytes);

// ---- Entry points (host.c) --------------------------------------------------
// fn is the address of the entry point; the objects' handles are what the
// backend receives.

TRITONSERVER_Error* thost_call_backend(void* fn, struct thost_backend* b);
TRITONSERVER_Error* thost_call_attribute(
    void* fn, struct thost_backend* b, struct thost_backend_attributes* a);
TRITONSERVER_Error* thost_call_model(void* fn, struct thost_model* m);
TRITONSERVER_Error* thost_call_instance(void* fn, struct thost_instance* i);
TRITONSERVER_Error* thost_call_execute(
    void* fn, struct thost_instance* i, uint64_t* requests, uint32_t n);

// ---- Shared libraries (library.c) -------------------------------------------
// dlerror is per thread, so each call collects its own error message into
// *err (malloc'd, the caller frees it) within the same C call.

void* thost_dlopen(const char* path, char** err);  // RTLD_NOW | RTLD_LOCAL
void* thost_dlsym(void* lib, const char* name);    // NULL when absent
// Whether a loaded object has this file name or DT_SONAME (RTLD_NOLOAD).
bool thost_dl_loaded(const char* soname);
int thost_dlclose(void* lib, char** err);

// ---- Objects of backends, models and instances (library.c) ------------------
// Strings come as pointer and length (Go strings; copied). Each constructor
// returns NULL when memory or handles run out. Retire frees the object's
// handle, so the backend can no longer reach it, and keeps its memory for
// the server's own references; free releases both.

struct thost_backend* thost_backend_new(
    struct thost_host* host, const char* name, size_t name_len,
    const char* artifacts, size_t artifacts_len, const char* config,
    size_t config_len);
void thost_backend_free(struct thost_backend* b);
struct thost_backend_attributes* thost_attributes_new(void);
void thost_attributes_free(struct thost_backend_attributes* a);
struct thost_model* thost_model_new(
    struct thost_backend* backend, uint64_t key, const char* name,
    size_t name_len, uint64_t version, const char* repository,
    size_t repository_len, bool auto_complete);
void thost_model_retire(struct thost_model* m);
void thost_model_free(struct thost_model* m);
struct thost_instance* thost_instance_new(
    struct thost_model* model, uint64_t key, const char* name, size_t name_len,
    int kind, int32_t device, bool passive, const char* host_policy,
    size_t host_policy_len, uint32_t profile_count);
// Sets profile index (< profile_count) of a new instance; false when out of
// memory.
bool thost_instance_set_profile(
    struct thost_instance* i, uint32_t index, const char* name,
    size_t name_len);
void thost_instance_retire(struct thost_instance* i);
void thost_instance_free(struct thost_instance* i);

#endif  // TRITONHOST_ABI_HOST_H
