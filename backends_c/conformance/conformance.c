/*
 * conformance.c: the entry points of the "conformance" backend
 * (libtriton_conformance.so). Each runs the checks that belong to it and
 * keeps their lines in its state (conformance.h); Execute hands every
 * request to kinds.c. No entry point fails because a check failed: the
 * checks are what the test compares, so the model must load whatever they
 * find. Only running out of memory is an error.
 */
#include "conformance.h"

#include <stdlib.h>

static TRITONSERVER_Error*
out_of_memory(void)
{
  return TRITONSERVER_ErrorNew(
      TRITONSERVER_ERROR_INTERNAL, "conformance: out of memory");
}

/* ---- backend ----------------------------------------------------------- */

TRITONBACKEND_ISPEC TRITONSERVER_Error*
TRITONBACKEND_Initialize(TRITONBACKEND_Backend* backend)
{
  conf_backend* st = calloc(1, sizeof(*st));
  if (st == NULL) {
    return out_of_memory();
  }
  conf_report_init(&st->report);
  conf_check_server_api(&st->report);
  conf_check_backend(&st->report, backend, st); /* sets the state */
  return NULL;
}

TRITONBACKEND_ISPEC TRITONSERVER_Error*
TRITONBACKEND_GetBackendAttribute(
    TRITONBACKEND_Backend* backend,
    TRITONBACKEND_BackendAttribute* backend_attributes)
{
  void* st = NULL;
  TRITONSERVER_Error* err = TRITONBACKEND_BackendState(backend, &st);
  if (err == NULL && st != NULL) {
    conf_check_backend_attributes(
        &((conf_backend*)st)->report, backend_attributes);
  }
  return err;
}

TRITONBACKEND_ISPEC TRITONSERVER_Error*
TRITONBACKEND_Finalize(TRITONBACKEND_Backend* backend)
{
  void* st = NULL;
  TRITONSERVER_Error* err = TRITONBACKEND_BackendState(backend, &st);
  if (err == NULL && st != NULL) {
    conf_report_destroy(&((conf_backend*)st)->report);
    free(st);
  }
  return err;
}

/* ---- model ------------------------------------------------------------- */

TRITONBACKEND_ISPEC TRITONSERVER_Error*
TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model* model)
{
  conf_model* st = calloc(1, sizeof(*st));
  if (st == NULL) {
    return out_of_memory();
  }
  conf_report_init(&st->report);
  TRITONBACKEND_Backend* backend = NULL;
  void* backend_state = NULL;
  if (TRITONBACKEND_ModelBackend(model, &backend) == NULL &&
      TRITONBACKEND_BackendState(backend, &backend_state) == NULL) {
    st->backend = backend_state;
  }
  conf_check_model(&st->report, model, st); /* sets the state */
  return NULL;
}

TRITONBACKEND_ISPEC TRITONSERVER_Error*
TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model* model)
{
  void* st = NULL;
  TRITONSERVER_Error* err = TRITONBACKEND_ModelState(model, &st);
  if (err == NULL && st != NULL) {
    conf_report_destroy(&((conf_model*)st)->report);
    free(st);
  }
  return err;
}

/* ---- instance ---------------------------------------------------------- */

TRITONBACKEND_ISPEC TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceInitialize(TRITONBACKEND_ModelInstance* instance)
{
  conf_instance* st = calloc(1, sizeof(*st));
  if (st == NULL) {
    return out_of_memory();
  }
  conf_report_init(&st->report);
  conf_report_init(&st->deferred);
  pthread_mutex_init(&st->mu, NULL);
  st->instance = instance;
  TRITONBACKEND_Model* model = NULL;
  void* model_state = NULL;
  if (TRITONBACKEND_ModelInstanceModel(instance, &model) == NULL &&
      TRITONBACKEND_ModelState(model, &model_state) == NULL) {
    st->model = model_state;
  }
  conf_check_instance(&st->report, instance, st); /* sets the state */
  return NULL;
}

TRITONBACKEND_ISPEC TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceFinalize(TRITONBACKEND_ModelInstance* instance)
{
  void* state = NULL;
  TRITONSERVER_Error* err = TRITONBACKEND_ModelInstanceState(instance, &state);
  if (err != NULL || state == NULL) {
    return err;
  }
  conf_instance* st = state;
  conf_join_threads(st);
  for (size_t i = 0; i < st->rescheduled_count; i++) {
    conf_report_destroy(&st->rescheduled[i]->report);
    free(st->rescheduled[i]);
  }
  conf_report_destroy(&st->report);
  conf_report_destroy(&st->deferred);
  pthread_mutex_destroy(&st->mu);
  free(st);
  return NULL;
}

TRITONBACKEND_ISPEC TRITONSERVER_Error*
TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t request_count)
{
  void* st = NULL;
  TRITONSERVER_Error* err = TRITONBACKEND_ModelInstanceState(instance, &st);
  if (err != NULL || st == NULL) {
    return err != NULL ? err
                       : TRITONSERVER_ErrorNew(
                             TRITONSERVER_ERROR_INTERNAL,
                             "conformance: no instance state");
  }
  for (uint32_t i = 0; i < request_count; i++) {
    conf_execute(st, requests[i]);
  }
  return NULL; /* every request was answered and released, or is rescheduled */
}
