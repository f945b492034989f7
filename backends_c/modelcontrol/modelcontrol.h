/*
 * modelcontrol.h: what the modelcontrol backend's C files share. Internal;
 * the library exports only its TRITONBACKEND_* entry points.
 *
 * modelcontrol is a test backend that uses the server the way Triton's
 * python backend does for a Python model (pb_utils.load_model,
 * unload_model, is_model_ready and business-logic-scripting calls), and
 * reads what the server says of itself and of its models: it
 * loads models with TRITONSERVER_ServerLoadModelWithParameters (a "config"
 * string parameter and "file:<path>" bytes parameters), unloads them with
 * TRITONSERVER_ServerUnloadModel or ServerUnloadModelAndDependents, asks
 * TRITONSERVER_ServerModelTransactionProperties whether a model is
 * decoupled, and passes a request on to another model with a child of the
 * request's trace (TRITONSERVER_InferenceTraceContext,
 * TRITONSERVER_InferenceTraceSpawnChildTrace).
 *
 * Each request carries one command, a JSON object in its BYTES input
 * COMMAND ([1]), and gets one response whose BYTES output REPORT ([1]) is a
 * JSON object saying what happened:
 *
 *   {"op": "load", "model": m, "config": "<json>", "files": {"<path>": s}}
 *   {"op": "unload", "model": m, "dependents": bool}
 *   {"op": "ready", "model": m, "version": v}        -> "ready"
 *   {"op": "txn", "model": m, "version": v}          -> "flags", "voidp_null"
 *   {"op": "server"}        -> "live", "ready", "metadata", "index" (ready
 *                              models), "metrics_count_requests"
 *   {"op": "model", "model": m, "version": v} -> "statistics", "batch_flags"
 *   {"op": "trace", "model": m, "context": c, "callee_op": o}
 *                                   -> see modelcontrol_bls.c ("callee_op":
 *                                      the callee's op, "probe" by default)
 *   {"op": "probe"}                                  -> this request's trace
 *   {"op": "fail"}   -> a response carrying an error (INVALID_ARG), not a
 *                       report
 *
 * Every report has "ok" (the call returned no error) and, when not ok,
 * "code" (the error code's name without TRITONSERVER_ERROR_) and "message".
 */
#ifndef TRITONHOST_BACKENDS_MODELCONTROL_MODELCONTROL_H
#define TRITONHOST_BACKENDS_MODELCONTROL_MODELCONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cJSON.h"
#include "triton/core/tritonbackend.h"
#include "triton/core/tritonserver.h"

/* Per model: the server it runs on and an allocator for the responses of
 * the requests it makes. */
typedef struct mc_model {
  TRITONSERVER_Server* server;
  TRITONSERVER_ResponseAllocator* allocator;
} mc_model;

/* Records err in report ("ok", and "code" and "message" when it is an
 * error) and deletes it. Returns true when err is NULL. */
bool mc_record(cJSON* report, TRITONSERVER_Error* err);

/* modelcontrol_bls.c: the "trace" and "probe" commands. */
void mc_traced_call(
    mc_model* model, TRITONBACKEND_Request* request, const cJSON* command,
    cJSON* report);
void mc_probe(TRITONBACKEND_Request* request, cJSON* report);

/* The allocator of the requests a model makes: host memory, malloc'd. */
TRITONSERVER_Error* mc_allocator_new(TRITONSERVER_ResponseAllocator** out);

#endif  // TRITONHOST_BACKENDS_MODELCONTROL_MODELCONTROL_H
