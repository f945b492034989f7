// Package sharedmem keeps the shared-memory regions that clients register
// (Triton's system_shared_memory and cuda_shared_memory extensions), for
// every protocol frontend: the gRPC and the HTTP services of one server
// share one Registry, as Triton's share one SharedMemoryManager. System
// and CUDA regions share one namespace of names.
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
// A CUDA region is a client's device memory, registered by its CUDA IPC
// handle and opened in the primary context of the GPU the client names,
// through the CUDA interface (package gpu implements it). Leases of CUDA
// spans are bounds-checked as system ones; Lease.Read copies an input to
// host memory and Lease.Write an output to the device, since the core and
// the backends receive inputs in host memory. The handle is closed when
// the region is unregistered and no lease holds it.
//
// The errors are core errors with Triton's codes and words (server
// src/shared_memory_manager.cc), so each frontend maps them as it maps the
// core's.
//
// The server copies an input out of a system region when it decodes the
// request and an output into it when the response comes, checking the
// object's size first and turning a fault on the mapping into an error
// (fault.go): a client that shrinks the object under a region in use
// (ftruncate) fails the requests using it, and the server goes on.
package sharedmem
