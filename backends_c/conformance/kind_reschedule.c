/*
 * kind_reschedule.c: the "reschedule" request (see kinds.c): released with
 * TRITONSERVER_REQUEST_RELEASE_RESCHEDULE until its third execution.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"

/* Finds or adds the entry of request 'id' (st->mu held). */
static conf_rescheduled*
rescheduled_entry(conf_instance* st, const char* id)
{
  for (size_t i = 0; i < st->rescheduled_count; i++) {
    if (strcmp(st->rescheduled[i]->id, id) == 0) {
      return st->rescheduled[i];
    }
  }
  conf_rescheduled* e = NULL;
  if (st->rescheduled_count == CONF_MAX_RESCHEDULED ||
      (e = calloc(1, sizeof(*e))) == NULL) {
    return NULL;
  }
  snprintf(e->id, sizeof(e->id), "%s", id);
  conf_report_init(&e->report);
  st->rescheduled[st->rescheduled_count++] = e;
  return e;
}

/* Forgets entry e (st->mu held). */
static void
rescheduled_remove(conf_instance* st, conf_rescheduled* e)
{
  for (size_t i = 0; i < st->rescheduled_count; i++) {
    if (st->rescheduled[i] == e) {
      st->rescheduled[i] = st->rescheduled[--st->rescheduled_count];
      break;
    }
  }
  conf_report_destroy(&e->report);
  free(e);
}

void
conf_execute_reschedule(conf_instance* st, TRITONBACKEND_Request* req)
{
  const char* id = NULL;
  if (TRITONBACKEND_RequestId(req, &id) != NULL || id == NULL ||
      id[0] == '\0') {
    conf_refuse(req, "conformance: a reschedule request needs an id");
    return;
  }
  pthread_mutex_lock(&st->mu);
  conf_rescheduled* e = rescheduled_entry(st, id);
  pthread_mutex_unlock(&st->mu);
  if (e == NULL) {
    conf_refuse(req, "conformance: too many rescheduled requests");
    return;
  }
  e->executions++;
  if (e->executions < 3) {
    char kase[32];
    snprintf(kase, sizeof(kase), "reschedule_%d", e->executions);
    if (CONF_CHECK(
            &e->report, TRITONBACKEND_RequestRelease, kase, req,
            TRITONSERVER_REQUEST_RELEASE_RESCHEDULE)) {
      return; /* it comes back in a later Execute */
    }
  }
  conf_value(&e->report, "reschedule.executions", "%d", e->executions);
  TRITONBACKEND_Response* resp = NULL;
  TRITONSERVER_ErrorDelete(TRITONBACKEND_ResponseNew(&resp, req));
  conf_send_report(&st->deferred, "rescheduled", resp, &e->report);
  CONF_CHECK(
      &st->deferred, TRITONBACKEND_RequestRelease, "rescheduled", req,
      CONF_RELEASE_ALL);
  pthread_mutex_lock(&st->mu);
  rescheduled_remove(st, e);
  pthread_mutex_unlock(&st->mu);
}
