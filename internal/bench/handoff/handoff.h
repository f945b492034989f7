#ifndef TRITONHOST_BENCH_HANDOFF_H
#define TRITONHOST_BENCH_HANDOFF_H

#include <stdint.h>

void run_callbacks(long n);
void start_mutex_ring(long n);
long drain_mutex_ring(uintptr_t* out, long max);
void start_lockfree_ring(long n);
long drain_lockfree_ring(uintptr_t* out, long max);
void join_producer(void);

#endif  // TRITONHOST_BENCH_HANDOFF_H
