// tritonrepoagent.h: the TRITONREPOAGENT part of the C ABI between
// tritonhost and the repository agents it loads.
//
// This header is written for tritonhost. It follows the names, signatures,
// type tags and numeric values of NVIDIA Triton's tritonrepoagent.h (API
// version 0.1), so an agent written for Triton (its checksum agent among
// them) compiles against it unchanged and an agent built against Triton's
// header runs in tritonhost.
//
// A repository agent is a shared library, libtritonrepoagent_<name>.so,
// that the host opens with dlopen(RTLD_NOW | RTLD_LOCAL) from
// <repoagent-directory>/<name>/ the first time a model's configuration
// names it:
//
//   model_repository_agents { agents [ { name: "checksum"
//     parameters { key: "MD5:1/model.bin" value: "<digest>" } } ] }
//
// The agent is told of each step of the model's load and unload, reads the
// model's files and configuration, and may refuse the load or point the
// host at other files. The API runs in both directions:
//
//   * Host functions (TRITONREPOAGENT_DECLSPEC) are implemented and exported
//     by the host; the agent calls them for the model's location,
//     parameters and configuration, and to keep state.
//   * Entry points (TRITONREPOAGENT_ISPEC) are implemented by the agent and
//     looked up by the host with dlsym. Only TRITONREPOAGENT_ModelAction is
//     required; a missing optional one is treated as one that does nothing
//     and succeeds.
//
// The lifecycle: TRITONREPOAGENT_Initialize when the library is opened, for
// the first model that names the agent. For each load of such a model, the
// host creates a TRITONREPOAGENT_AgentModel (TRITONREPOAGENT_ModelInitialize)
// and calls TRITONREPOAGENT_ModelAction with, in order, one of
//
//   LOAD -> LOAD_COMPLETE -> UNLOAD -> UNLOAD_COMPLETE
//   LOAD -> LOAD_FAIL
//
// then TRITONREPOAGENT_ModelFinalize. A model naming several agents has
// LOAD and UNLOAD delivered to them in the configuration's order, and
// LOAD_COMPLETE, LOAD_FAIL and UNLOAD_COMPLETE in the reverse order; each
// agent's LOAD sees the location (and the configuration found there) that
// the agents before it left. When no loaded model names the agent any more,
// TRITONREPOAGENT_Finalize runs and the library is closed.
//
// Calls for one agent model never overlap; calls for different models of
// one agent may, from different threads. The host bounds each call by
// --backend-call-timeout-secs: a LOAD that does not return in time fails
// the load.
//
// The conventions of tritonserver.h apply: a TRITONSERVER_Error* result is
// NULL on success or a new error the caller owns (the host deletes the
// errors an agent returns); out-parameters are written only on success;
// handles are opaque, and one used after its object is gone (an agent model
// after TRITONREPOAGENT_ModelFinalize returned) is refused with
// TRITONSERVER_ERROR_INVALID_ARG.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "triton/core/tritonserver.h"

#ifdef __cplusplus
extern "C" {
#endif

// TRITONREPOAGENT_DECLSPEC marks a function the host implements and exports;
// TRITONREPOAGENT_ISPEC marks an entry point the agent implements. With GCC
// and Clang the host's build (which defines _COMPILING_TRITONREPOAGENT and
// compiles with -fvisibility=hidden) gives host functions default
// visibility, and ISPEC is always empty. On Windows the two macros import
// and export in opposite directions.
#ifdef _COMPILING_TRITONREPOAGENT
#if defined(_MSC_VER)
#define TRITONREPOAGENT_DECLSPEC __declspec(dllexport)
#define TRITONREPOAGENT_ISPEC __declspec(dllimport)
#elif defined(__GNUC__)
#define TRITONREPOAGENT_DECLSPEC __attribute__((__visibility__("default")))
#define TRITONREPOAGENT_ISPEC
#else
#define TRITONREPOAGENT_DECLSPEC
#define TRITONREPOAGENT_ISPEC
#endif
#else
#if defined(_MSC_VER)
#define TRITONREPOAGENT_DECLSPEC __declspec(dllimport)
#define TRITONREPOAGENT_ISPEC __declspec(dllexport)
#else
#define TRITONREPOAGENT_DECLSPEC
#define TRITONREPOAGENT_ISPEC
#endif
#endif

// ---------------------------------------------------------------------------
// Handle types
//
// TRITONREPOAGENT_Agent is one opened agent library, valid from
// TRITONREPOAGENT_Initialize to TRITONREPOAGENT_Finalize.
// TRITONREPOAGENT_AgentModel is one load of one model as this agent sees
// it, valid from TRITONREPOAGENT_ModelInitialize to
// TRITONREPOAGENT_ModelFinalize.
// ---------------------------------------------------------------------------

struct TRITONREPOAGENT_Agent;
struct TRITONREPOAGENT_AgentModel;

typedef struct TRITONREPOAGENT_Agent TRITONREPOAGENT_Agent;
typedef struct TRITONREPOAGENT_AgentModel TRITONREPOAGENT_AgentModel;

// ---------------------------------------------------------------------------
// API version
//
// An agent should compare the version it was built with (the macros) with
// the version the host implements (TRITONREPOAGENT_ApiVersion), usually in
// TRITONREPOAGENT_Initialize, and refuse to load with
// TRITONSERVER_ERROR_UNSUPPORTED unless the major numbers are equal and the
// host's minor number is at least its own.
// ---------------------------------------------------------------------------

#define TRITONREPOAGENT_API_VERSION_MAJOR 0
#define TRITONREPOAGENT_API_VERSION_MINOR 1

// Stores the TRITONREPOAGENT API version the host implements in *major and
// *minor. Never fails for non-NULL arguments; any thread.
TRITONREPOAGENT_DECLSPEC TRITONSERVER_Error* TRITONREPOAGENT_ApiVersion(
    uint32_t* major, uint32_t* minor);

// How a model's files reach the agent and the host. FILESYSTEM: a location
// is the path of a local directory, read with ordinary file APIs.
// REMOTE_FILESYSTEM: a location is a remote path ("s3://...", "gs://...");
// tritonhost serves local repositories only, so it never hands one out and
// refuses one from an agent.
typedef enum TRITONREPOAGENT_artifacttype_enum {
  TRITONREPOAGENT_ARTIFACT_FILESYSTEM,
  TRITONREPOAGENT_ARTIFACT_REMOTE_FILESYSTEM
} TRITONREPOAGENT_ArtifactType;

// What is happening to the model (see the lifecycle above).
//   LOAD: the model is about to load; the agent may check or replace its
//     files (TRITONREPOAGENT_ModelRepositoryUpdate), or refuse the load by
//     returning an error, whose message becomes the model's reason.
//   LOAD_COMPLETE: the model loaded (at least one version is ready).
//   LOAD_FAIL: the load failed, after LOAD succeeded for this agent.
//   UNLOAD: the model is about to unload.
//   UNLOAD_COMPLETE: the model has unloaded.
// Errors returned for anything but LOAD are logged and change nothing.
typedef enum TRITONREPOAGENT_actiontype_enum {
  TRITONREPOAGENT_ACTION_LOAD,
  TRITONREPOAGENT_ACTION_LOAD_COMPLETE,
  TRITONREPOAGENT_ACTION_LOAD_FAIL,
  TRITONREPOAGENT_ACTION_UNLOAD,
  TRITONREPOAGENT_ACTION_UNLOAD_COMPLETE
} TRITONREPOAGENT_ActionType;

// ---------------------------------------------------------------------------
// The model's files
// ---------------------------------------------------------------------------

// Stores in *artifact_type and *location where the model's files are: the
// model's directory in the repository (<repository>/<model>, holding
// config.pbtxt and the version directories), or the location an agent
// before this one gave with TRITONREPOAGENT_ModelRepositoryUpdate. The
// string is the host's, valid until the model's location changes or
// TRITONREPOAGENT_ModelFinalize returns. The directory's contents are the
// repository's: the agent must not change them (it acquires a location of
// its own to write).
TRITONREPOAGENT_DECLSPEC TRITONSERVER_Error*
TRITONREPOAGENT_ModelRepositoryLocation(
    TRITONREPOAGENT_Agent* agent, TRITONREPOAGENT_AgentModel* model,
    TRITONREPOAGENT_ArtifactType* artifact_type, const char** location);

// Creates an empty directory the agent may fill (new model files, a new
// config.pbtxt) and stores its path in *location; artifact_type must be
// TRITONREPOAGENT_ARTIFACT_FILESYSTEM. An agent model has at most one such
// location: a second call returns the same path. The string is the host's,
// valid until the location is released. The host removes the directory and
// everything in it when the agent releases it
// (TRITONREPOAGENT_ModelRepositoryLocationRelease) or, at the latest, after
// TRITONREPOAGENT_ModelFinalize.
TRITONREPOAGENT_DECLSPEC TRITONSERVER_Error*
TRITONREPOAGENT_ModelRepositoryLocationAcquire(
    TRITONREPOAGENT_Agent* agent, TRITONREPOAGENT_AgentModel* model,
    const TRITONREPOAGENT_ArtifactType artifact_type, const char** location);

// Removes the location acquired with
// TRITONREPOAGENT_ModelRepositoryLocationAcquire, and its contents; location
// must be that path. Afterwards the agent must not use it. Releasing the
// location the model loads from while it is loaded is the agent's mistake:
// backends may still read those files.
TRITONREPOAGENT_DECLSPEC TRITONSERVER_Error*
TRITONREPOAGENT_ModelRepositoryLocationRelease(
    TRITONREPOAGENT_Agent* agent, TRITONREPOAGENT_AgentModel* model,
    const char* location);

// Makes location (artifact_type TRITONREPOAGENT_ARTIFACT_FILESYSTEM; a
// directory laid out as a model directory of a repository) the model's
// files in place of the repository's: the agents after this one see it,
// and the host reads the model's configuration and version directories
// from it and loads from it. Only during TRITONREPOAGENT_ACTION_LOAD; the
// host copies the string. The directory must stay as it is until
// TRITONREPOAGENT_ModelFinalize. This is also how an agent gives the model
// a new configuration: it writes a config.pbtxt into a location it
// acquired and makes that location the model's.
TRITONREPOAGENT_DECLSPEC TRITONSERVER_Error*
TRITONREPOAGENT_ModelRepositoryUpdate(
    TRITONREPOAGENT_Agent* agent, TRITONREPOAGENT_AgentModel* model,
    const TRITONREPOAGENT_ArtifactType artifact_type, const char* location);

// ---------------------------------------------------------------------------
// The model's parameters and configuration
// ---------------------------------------------------------------------------

// Stores in *count the number of parameters the model's configuration
// gives this agent (its entry of model_repository_agents).
TRITONREPOAGENT_DECLSPEC TRITONSERVER_Error*
TRITONREPOAGENT_ModelParameterCount(
    TRITONREPOAGENT_Agent* agent, TRITONREPOAGENT_AgentModel* model,
    uint32_t* count);

// Stores the name and value of parameter index (0 <= index < count) in
// *parameter_name and *parameter_value, sorted by name (parameters are a
// map in the configuration, without an order). The strings are the host's,
// valid until TRITONREPOAGENT_ModelFinalize returns.
TRITONREPOAGENT_DECLSPEC TRITONSERVER_Error* TRITONREPOAGENT_ModelParameter(
    TRITONREPOAGENT_Agent* agent, TRITONREPOAGENT_AgentModel* model,
    const uint32_t index, const char** parameter_name,
    const char** parameter_value);

// Stores in *model_config a new message holding the model's configuration
// as JSON (as TRITONBACKEND_ModelConfig gives it to backends), the one read
// from the model's current location; the caller owns it and deletes it with
// TRITONSERVER_MessageDelete. config_version must be 1.
TRITONREPOAGENT_DECLSPEC TRITONSERVER_Error* TRITONREPOAGENT_ModelConfig(
    TRITONREPOAGENT_Agent* agent, TRITONREPOAGENT_AgentModel* model,
    const uint32_t config_version, TRITONSERVER_Message** model_config);

// ---------------------------------------------------------------------------
// State
//
// One pointer of the agent's own per agent and per agent model; the host
// never looks at it, and it starts NULL. Any thread.
// ---------------------------------------------------------------------------

// Stores in *state the agent model's state.
TRITONREPOAGENT_DECLSPEC TRITONSERVER_Error* TRITONREPOAGENT_ModelState(
    TRITONREPOAGENT_AgentModel* model, void** state);

// Sets the agent model's state; free it in TRITONREPOAGENT_ModelFinalize.
TRITONREPOAGENT_DECLSPEC TRITONSERVER_Error* TRITONREPOAGENT_ModelSetState(
    TRITONREPOAGENT_AgentModel* model, void* state);

// Stores in *state the agent's state.
TRITONREPOAGENT_DECLSPEC TRITONSERVER_Error* TRITONREPOAGENT_State(
    TRITONREPOAGENT_Agent* agent, void** state);

// Sets the agent's state; free it in TRITONREPOAGENT_Finalize.
TRITONREPOAGENT_DECLSPEC TRITONSERVER_Error* TRITONREPOAGENT_SetState(
    TRITONREPOAGENT_Agent* agent, void* state);

// ---------------------------------------------------------------------------
// Entry points (implemented by the agent)
// ---------------------------------------------------------------------------

// Optional. Called once, when the library is opened for the first model
// that names the agent; an error fails that model's load and closes the
// library.
TRITONREPOAGENT_ISPEC TRITONSERVER_Error* TRITONREPOAGENT_Initialize(
    TRITONREPOAGENT_Agent* agent);

// Optional. Called once, when no loaded model names the agent any more,
// before the library is closed; it must stop every thread the agent
// started. An error is logged.
TRITONREPOAGENT_ISPEC TRITONSERVER_Error* TRITONREPOAGENT_Finalize(
    TRITONREPOAGENT_Agent* agent);

// Optional. Called when the host starts a load of a model naming the agent,
// before its LOAD action; an error fails the load.
TRITONREPOAGENT_ISPEC TRITONSERVER_Error* TRITONREPOAGENT_ModelInitialize(
    TRITONREPOAGENT_Agent* agent, TRITONREPOAGENT_AgentModel* model);

// Optional. Called last for an agent model, after LOAD_FAIL or
// UNLOAD_COMPLETE (or after a LOAD that failed); the agent frees what it
// keeps for the model. An error is logged.
TRITONREPOAGENT_ISPEC TRITONSERVER_Error* TRITONREPOAGENT_ModelFinalize(
    TRITONREPOAGENT_Agent* agent, TRITONREPOAGENT_AgentModel* model);

// Required. Tells the agent what is happening to the model (see
// TRITONREPOAGENT_ActionType). An agent that has nothing to do for an action
// returns NULL. An error for TRITONREPOAGENT_ACTION_LOAD fails the load, its
// message the model's reason in the repository index; for the others it is
// logged.
TRITONREPOAGENT_ISPEC TRITONSERVER_Error* TRITONREPOAGENT_ModelAction(
    TRITONREPOAGENT_Agent* agent, TRITONREPOAGENT_AgentModel* model,
    const TRITONREPOAGENT_ActionType action_type);

#ifdef __cplusplus
}  // extern "C"
#endif
