// Blocks of memory kept for reuse, so that the objects a backend makes and
// frees for every response (the response with its outputs, response
// statistics, the reports buffered for Go) cost no malloc, no free and no
// lock on the common path.
//
// Each pool hands out blocks of one size. A thread keeps up to
// THOST_POOL_THREAD_BLOCKS blocks of each pool for itself, in a list only it
// touches: a get or a put there is a few loads and stores. A block freed on
// another thread than the one that took it (a response the frontend frees
// once the wire has written it) goes to the freeing thread's list. Blocks
// move between threads in batches of THOST_POOL_BATCH_BLOCKS through the
// pool's shared stack, under its mutex: a thread whose list is full gives a
// batch, a thread whose list is empty takes one (or mallocs when there is
// none), so at most one get or put in THOST_POOL_BATCH_BLOCKS takes the
// lock. A thread's blocks go to the shared stack when it exits (a
// pthread key's destructor). What the pools keep is bounded:
// THOST_POOL_THREAD_BLOCKS per thread and pool, THOST_POOL_SHARED_BLOCKS
// per pool shared; blocks past the bound go back to malloc.
//
// Blocks are not zeroed, and are C memory: no Go pointer is ever stored in
// one by the pool.
#ifndef TRITONHOST_ABI_BLOCK_POOL_H
#define TRITONHOST_ABI_BLOCK_POOL_H

#include <stddef.h>
#include <stdint.h>

enum thost_pool {
  THOST_POOL_RESPONSE,  // struct thost_response, its first outputs inside
  THOST_POOL_RSTATS,    // struct thost_response_statistics
  THOST_POOL_RSTAT,     // struct thost_rstat: a report buffered for Go
  THOST_POOL_COUNT
};

#define THOST_POOL_THREAD_BLOCKS 64
#define THOST_POOL_BATCH_BLOCKS (THOST_POOL_THREAD_BLOCKS / 2)
#define THOST_POOL_SHARED_BLOCKS 4096

// A block of pool's size; NULL when out of memory.
void* thost_block_get(enum thost_pool pool);
// Gives a block of thost_block_get back, from any thread (NULL: nothing).
void thost_block_put(enum thost_pool pool, void* block);

#endif  // TRITONHOST_ABI_BLOCK_POOL_H
