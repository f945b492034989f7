/*
 * json_int64.h: reading a cJSON number as an int64_t, for the C backends.
 *
 * cJSON keeps every number as a double. The host writes the int64 fields of
 * a model configuration (max_batch_size, dims, counts) as integer literals,
 * which come back exactly up to 2^53; that is the range this reads exactly.
 * A number with a fraction, or outside int64_t's range, is not an integer.
 */
#ifndef TRITONHOST_BACKENDS_C_JSON_INT64_H
#define TRITONHOST_BACKENDS_C_JSON_INT64_H

#include <stdbool.h>
#include <stdint.h>

#include "cJSON.h"

/* Stores the value of 'item' in *out and returns true if 'item' is a number
 * with no fractional part within int64_t's range; returns false (and leaves
 * *out alone) for anything else, NULL included. */
static inline bool
json_int64(const cJSON* item, int64_t* out)
{
  if (!cJSON_IsNumber(item)) {
    return false;
  }
  const double d = item->valuedouble;
  /* -2^63 is a double exactly; 2^63 is the first double past INT64_MAX. */
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) ||
      (double)(int64_t)d != d) {
    return false;
  }
  *out = (int64_t)d;
  return true;
}

#endif /* TRITONHOST_BACKENDS_C_JSON_INT64_H */
