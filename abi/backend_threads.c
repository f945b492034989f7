// The backends' own threads that call the server (backend_threads.h).
#include "backend_threads.h"

#include <pthread.h>

int64_t thost_backend_threads_live = 0;
uint64_t thost_backend_threads_window = 1;  // a thread's own starts at 0
uint32_t thost_backend_threads_active = 0;
__thread uint64_t thost_backend_thread_window;
__thread int thost_backend_thread_known;

// A key whose destructor counts a known thread's end.
static pthread_key_t end_key;
static int end_key_made;
static pthread_once_t end_key_once = PTHREAD_ONCE_INIT;

static void
thread_ended(void* unused)
{
  (void)unused;
  __atomic_sub_fetch(&thost_backend_threads_live, 1, __ATOMIC_RELAXED);
}

static void
make_end_key(void)
{
  end_key_made = pthread_key_create(&end_key, thread_ended) == 0;
}

void
thost_backend_thread_register(void)
{
  thost_backend_thread_known = 1;
  pthread_once(&end_key_once, make_end_key);
  // A thread whose end could not be seen is not counted as live.
  if (end_key_made && pthread_setspecific(end_key, (void*)1) == 0)
    __atomic_add_fetch(&thost_backend_threads_live, 1, __ATOMIC_RELAXED);
}
