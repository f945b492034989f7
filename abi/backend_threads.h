// The backends' own threads that call the server: how many are running,
// and how many sent a response within the current window (internal/procs
// gives the Go runtime more processors while they outnumber its own).
// A backend's own thread is one outside an Execute (thost_executing_instance
// is NULL on it): a decoupled backend's response thread. Counting costs a
// thread-local compare per send, an atomic add once per thread and window,
// and one at the thread's start and end.
#ifndef TRITONHOST_ABI_BACKEND_THREADS_H
#define TRITONHOST_ABI_BACKEND_THREADS_H

#include <stdint.h>

// Threads that have sent and not ended; atomic.
extern int64_t thost_backend_threads_live;
// The current window's number, advanced by Go (procs.go); atomic.
extern uint64_t thost_backend_threads_window;
// Threads that sent within the current window, taken and reset by Go;
// atomic.
extern uint32_t thost_backend_threads_active;
// The calling thread's last window, and whether it is counted as live.
extern __thread uint64_t thost_backend_thread_window;
extern __thread int thost_backend_thread_known;

// Counts the calling thread as live until it ends.
void thost_backend_thread_register(void);

// Counts the calling thread, a backend's own, as one that sends now.
static inline void
thost_backend_thread_sends(void)
{
  if (!thost_backend_thread_known)
    thost_backend_thread_register();
  uint64_t w = __atomic_load_n(&thost_backend_threads_window, __ATOMIC_RELAXED);
  if (thost_backend_thread_window != w) {
    thost_backend_thread_window = w;
    __atomic_add_fetch(&thost_backend_threads_active, 1, __ATOMIC_RELAXED);
  }
}

#endif  // TRITONHOST_ABI_BACKEND_THREADS_H
