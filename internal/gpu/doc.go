// Package gpu is tritonhost's view of NVIDIA GPUs: which ones there are
// (NVML), and the CUDA driver calls the server makes on them (primary
// contexts, device and pinned memory pools, copies to the host). It calls
// both libraries through purego, opened at run time where they exist: it
// has no cgo (it builds with CGO_ENABLED=0), needs nothing of CUDA to
// build, and links no NVIDIA library.
//
// Discovery. Discover lists the GPUs through NVML, an interface whose
// methods are the ones of go-nvml's nvml.Interface that the server calls,
// with the same names and meanings. In the server it is OpenNVML, which
// loads libnvidia-ml.so.1 with purego; the tests adapt go-nvml's mock of a
// DGX A100 to it (gonvml_test.go), and run OpenNVML on a fake NVML library
// (internal/testenv). go-nvml's own loader (nvml.New, then Init) is not
// used, because of how its cgo package binds NVML: its wrappers call the
// nvml* functions directly, left undefined at link time
// (-Wl,--unresolved-symbols=ignore-in-object-files), for the dynamic
// linker to bind lazily once the loader has opened the library with
// RTLD_GLOBAL. The server's binary makes every symbol but the backend API
// local (package abi's linker script, which the exact-exports test holds),
// so the linker resolves those calls to address 0: go-nvml's Init opens
// the library, then jumps to 0. Keeping nvml* global instead leaves some
// 430 undefined symbols in the binary: built with -z now, as hardened
// distribution builds are, it then fails to start wherever NVML is absent,
// and a function that an older driver lacks ends the process at its first
// call rather than returning an error; and in libtritonserver.so they
// would stay undefined dynamic symbols, which the link of every
// application using the library refuses. purego looks each function up with
// Dlsym when NVML is opened: a required one missing fails Init, an
// optional one (the energy counter of drivers older than Volta's) fails
// its own calls, with NVML's ERROR_FUNCTION_NOT_FOUND. go-nvml is
// therefore a dependency of the tests only; the binary links none of it
// (cmd/tritonhost's TestBinaryNeedsNoNVIDIALibrary). NVML is asked nothing
// unless its Init succeeded (a call after a failed Init may end the
// process), and no driver means zero GPUs, not an error.
//
// Numbering. GPUs are numbered as the CUDA runtime numbers them:
// CUDA_VISIBLE_DEVICES (indices or GPU UUIDs, as CUDA reads them) picks and
// orders the visible devices, which are then 0, 1, ... in that order.
// Devices below --min-supported-compute-capability are hidden without
// renumbering the others, as Triton does.
//
// CUDA. OpenDriver loads the driver API (libcuda.so.1) with purego: no
// link-time dependency, and optional functions are looked up with Dlsym so
// that a missing one is an error, not a panic. Devices then holds a primary
// context per GPU, a device memory pool per GPU (--cuda-memory-pool-byte-size)
// and a pinned host memory pool (--pinned-memory-pool-byte-size), as
// Triton's memory managers do, and gives package abi what it needs to make
// a GPU current on a backend's thread and to copy device memory to the
// host.
//
// Metrics. Collector reports each GPU's utilization, memory, power and
// energy under Triton's metric names, for a Prometheus registry.
package gpu
