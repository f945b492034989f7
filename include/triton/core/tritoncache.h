// tritoncache.h: the TRITONCACHE part of the C ABI between tritonhost and
// the response caches it loads.
//
// This header is written for tritonhost. It follows the names, signatures,
// type tags and numeric values of NVIDIA Triton's tritoncache.h (API version
// 0.1), so a cache written for Triton (its "local" and "redis" caches among
// them) compiles against it unchanged and a cache built against Triton's
// header runs in tritonhost.
//
// A cache is a shared library, libtritoncache_<name>.so, that the host opens
// with dlopen(RTLD_NOW | RTLD_LOCAL) from <cache-directory>/<name>/ when the
// server starts with --cache-config <name>,<key>=<value>. The server has at
// most one cache, shared by every model whose configuration enables
// response_cache. The API runs in both directions:
//
//   * Host functions (TRITONCACHE_DECLSPEC) are implemented and exported by
//     the host; a cache calls them to read and fill the entries the host
//     hands it, and to have the host copy data (TRITONCACHE_Copy).
//   * Entry points (TRITONCACHE_ISPEC) are implemented by the cache and
//     looked up by the host with dlsym. All four are required: a library
//     that lacks one does not load.
//
// The lifecycle: TRITONCACHE_CacheInitialize once, when the server starts;
// any number of TRITONCACHE_CacheLookup and TRITONCACHE_CacheInsert calls,
// concurrently, from threads of the host; TRITONCACHE_CacheFinalize once,
// after every lookup and insert has returned, before the library is closed.
//
// What the host stores. A key is a NUL-terminated string that names one
// request: a hash of the model's name and version and of every input (its
// name, data type, shape and bytes) and of the outputs asked for. An entry
// holds one response as buffers of bytes whose layout is the host's own:
// the cache stores and returns them as they are, and never needs to read
// them. Entries of every model share the cache.
//
// The conventions of tritonserver.h apply: a TRITONSERVER_Error* result is
// NULL on success or a new error the caller owns (the host deletes the
// errors a cache returns); out-parameters are written only on success;
// handles are opaque, and a handle that is not live (one used after its
// call returned, or made up) is refused with TRITONSERVER_ERROR_INVALID_ARG.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "triton/core/tritonserver.h"

#ifdef __cplusplus
extern "C" {
#endif

// TRITONCACHE_DECLSPEC marks a function the host implements and exports;
// TRITONCACHE_ISPEC marks an entry point the cache implements. With GCC and
// Clang the host's build (which defines _COMPILING_TRITONCACHE and compiles
// with -fvisibility=hidden) gives host functions default visibility, and
// ISPEC is always empty. On Windows the two macros import and export in
// opposite directions.
#ifdef _COMPILING_TRITONCACHE
#if defined(_MSC_VER)
#define TRITONCACHE_DECLSPEC __declspec(dllexport)
#define TRITONCACHE_ISPEC __declspec(dllimport)
#elif defined(__GNUC__)
#define TRITONCACHE_DECLSPEC __attribute__((__visibility__("default")))
#define TRITONCACHE_ISPEC
#else
#define TRITONCACHE_DECLSPEC
#define TRITONCACHE_ISPEC
#endif
#else
#if defined(_MSC_VER)
#define TRITONCACHE_DECLSPEC __declspec(dllimport)
#define TRITONCACHE_ISPEC __declspec(dllexport)
#else
#define TRITONCACHE_DECLSPEC
#define TRITONCACHE_ISPEC
#endif
#endif

// ---------------------------------------------------------------------------
// Handle types
//
// TRITONCACHE_Cache is the cache's own object: the host never looks inside
// it, and passes back what TRITONCACHE_CacheInitialize returned. Entries and
// allocators are the host's, valid only during the call that hands them to
// the cache.
// ---------------------------------------------------------------------------

struct TRITONCACHE_Cache;
struct TRITONCACHE_CacheEntry;
struct TRITONCACHE_Allocator;

typedef struct TRITONCACHE_Cache TRITONCACHE_Cache;
typedef struct TRITONCACHE_CacheEntry TRITONCACHE_CacheEntry;
typedef struct TRITONCACHE_Allocator TRITONCACHE_Allocator;

// ---------------------------------------------------------------------------
// API version
//
// A cache should compare the version it was built with (the macros) with
// the version the host implements (TRITONCACHE_ApiVersion), usually in
// TRITONCACHE_CacheInitialize, and refuse to load with
// TRITONSERVER_ERROR_UNSUPPORTED unless the major numbers are equal and the
// host's minor number is at least its own.
// ---------------------------------------------------------------------------

#define TRITONCACHE_API_VERSION_MAJOR 0
#define TRITONCACHE_API_VERSION_MINOR 1

// Stores the TRITONCACHE API version the host implements in *major and
// *minor. Never fails for non-NULL arguments; any thread.
TRITONCACHE_DECLSPEC TRITONSERVER_Error* TRITONCACHE_ApiVersion(
    uint32_t* major, uint32_t* minor);

// ---------------------------------------------------------------------------
// Entries
//
// An entry is an ordered list of buffers, each an address and the
// attributes of the memory it lies in (size, memory type and device; only
// host memory, TRITONSERVER_MEMORY_CPU or CPU_PINNED, is used). The host
// hands the cache one entry per call:
//
//   * TRITONCACHE_CacheInsert: the entry holds the response's buffers, their
//     sizes set and their addresses pointing at the host's data, readable
//     until the insert returns. The cache keeps a copy, either by copying
//     itself or by setting its own buffers in the entry
//     (TRITONCACHE_CacheEntrySetBuffer) and asking the host to copy into
//     them (TRITONCACHE_Copy).
//   * TRITONCACHE_CacheLookup: the entry starts empty. A cache that finds
//     the key adds its stored buffers (TRITONCACHE_CacheEntryAddBuffer) and
//     calls TRITONCACHE_Copy before returning, so that the host copies them
//     while the cache still holds them (nothing it could evict meanwhile).
//
// An entry may be used from the thread of the call and from threads the
// cache runs for it, one at a time, until the call returns; after that its
// handle is dead.
// ---------------------------------------------------------------------------

// Stores in *count the number of buffers of entry.
TRITONCACHE_DECLSPEC TRITONSERVER_Error* TRITONCACHE_CacheEntryBufferCount(
    TRITONCACHE_CacheEntry* entry, size_t* count);

// Appends a buffer to entry: base is its address and buffer_attributes (which
// the caller creates with TRITONSERVER_BufferAttributesNew, sets and keeps
// owning) its size and memory type. The host reads the buffer only in
// TRITONCACHE_Copy: base must stay valid until that returns. Refused with
// TRITONSERVER_ERROR_INVALID_ARG for a NULL base with a non-zero size, for
// memory that is not host memory, and past the host's bound on the buffers
// of one entry.
TRITONCACHE_DECLSPEC TRITONSERVER_Error* TRITONCACHE_CacheEntryAddBuffer(
    TRITONCACHE_CacheEntry* entry, void* base,
    TRITONSERVER_BufferAttributes* buffer_attributes);

// Stores in *base the address of the buffer at index (0 <= index < count)
// and sets buffer_attributes, which the caller created and owns, to its
// size, memory type and device. The caller does not own the buffer: it may
// read it until the call that handed out entry returns, and must not write
// it unless it set it itself (TRITONCACHE_CacheEntrySetBuffer).
TRITONCACHE_DECLSPEC TRITONSERVER_Error* TRITONCACHE_CacheEntryGetBuffer(
    TRITONCACHE_CacheEntry* entry, size_t index, void** base,
    TRITONSERVER_BufferAttributes* buffer_attributes);

// Replaces the address of the buffer at index with new_base, memory the
// cache owns (entries never free it). buffer_attributes, optional (NULL
// keeps them), replaces the buffer's attributes; its size must be the
// buffer's. In TRITONCACHE_CacheInsert this is how a cache provides the
// memory TRITONCACHE_Copy then fills.
TRITONCACHE_DECLSPEC TRITONSERVER_Error* TRITONCACHE_CacheEntrySetBuffer(
    TRITONCACHE_CacheEntry* entry, size_t index, void* new_base,
    TRITONSERVER_BufferAttributes* buffer_attributes);

// Has the host copy the entry's data, as the allocator it handed out with
// the entry says:
//
//   * in TRITONCACHE_CacheInsert, from the response into the entry's
//     buffers (those the cache set with TRITONCACHE_CacheEntrySetBuffer;
//     a buffer still at the host's own address is left as it is);
//   * in TRITONCACHE_CacheLookup, from the entry's buffers into the
//     response the host builds. An entry larger than the host is willing
//     to hold fails with TRITONSERVER_ERROR_UNAVAILABLE, which the cache
//     returns, and the lookup counts as a miss.
//
// Call it from within the call that handed out allocator and entry, on any
// thread, at most once per call.
TRITONCACHE_DECLSPEC TRITONSERVER_Error* TRITONCACHE_Copy(
    TRITONCACHE_Allocator* allocator, TRITONCACHE_CacheEntry* entry);

// ---------------------------------------------------------------------------
// Entry points (implemented by the cache; all required)
// ---------------------------------------------------------------------------

// Creates the cache and stores it in *cache. config is the server's
// --cache-config settings for this cache as a JSON object whose values are
// strings ({"size":"1048576"} for --cache-config local,size=1048576);
// --response-cache-byte-size N gives the local cache {"size":"N"}. The
// string is the host's, valid during the call. An error stops the server's
// start-up with its message. Called once, on the thread that starts the
// server.
TRITONCACHE_ISPEC TRITONSERVER_Error* TRITONCACHE_CacheInitialize(
    TRITONCACHE_Cache** cache, const char* config);

// Destroys cache. Called once, when the server stops, after every lookup
// and insert has returned; an error is logged. The library is closed after.
TRITONCACHE_ISPEC TRITONSERVER_Error* TRITONCACHE_CacheFinalize(
    TRITONCACHE_Cache* cache);

// Stores the response in entry under key (see Entries). key, entry and
// allocator are the host's, valid during the call. A cache that already
// holds key returns TRITONSERVER_ERROR_ALREADY_EXISTS (the host does not
// count that as a failure), one that cannot make room returns another
// error: the host logs and counts it, and the request it came from has
// already been answered. Called concurrently, with other inserts and
// lookups, from the host's own threads (never a backend's); the host
// bounds how many calls it makes at once and stops waiting for one that
// does not return in time.
TRITONCACHE_ISPEC TRITONSERVER_Error* TRITONCACHE_CacheInsert(
    TRITONCACHE_Cache* cache, const char* key, TRITONCACHE_CacheEntry* entry,
    TRITONCACHE_Allocator* allocator);

// Looks key up: when found, adds the stored buffers to entry and calls
// TRITONCACHE_Copy before returning (see Entries); when not found, returns
// TRITONSERVER_ERROR_NOT_FOUND. Any error, or no copy, makes the request a
// miss: it runs on its model as if there were no cache. Concurrent with
// other lookups and inserts, from the host's own threads; a lookup that
// does not return within the host's bound is treated as a miss and its
// late result discarded.
TRITONCACHE_ISPEC TRITONSERVER_Error* TRITONCACHE_CacheLookup(
    TRITONCACHE_Cache* cache, const char* key, TRITONCACHE_CacheEntry* entry,
    TRITONCACHE_Allocator* allocator);

#ifdef __cplusplus
}  // extern "C"
#endif
