// Package sharedmem keeps the system shared-memory regions that clients
// register (Triton's system_shared_memory extension), for every protocol
// frontend: the gRPC and the HTTP services of one server share one
// Registry, as Triton's share one SharedMemoryManager.
//
// A region is a span of a POSIX shared-memory object (shm_open's key,
// /dev/shm/<key> on Linux) given by offset and byte size, mapped read-write
// into the server with plain system calls (mmap, no cgo). A request whose
// input or output lives in a region takes a Lease on the span it uses: the
// span is bounds-checked against the region, and against the object's size
// at that moment, every time; the mapping stays valid, even if the client
// unregisters the region meanwhile, until the last lease is released, and
// is unmapped then (or at once when nothing holds it).
//
// The errors are core errors with Triton's codes and words (server
// src/shared_memory_manager.cc), so each frontend maps them as it maps the
// core's.
//
// A client that shrinks the object under a registered region (ftruncate)
// while a request reads or writes it makes that access fault, as it does in
// Triton; the size check of each lease narrows that window to the request
// itself.
package sharedmem
