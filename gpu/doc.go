// Package gpu is tritonhost's view of NVIDIA GPUs: which ones there are
// (NVML), and the CUDA driver calls the server makes on them (primary
// contexts, device and pinned memory pools, copies to the host). It has no
// cgo of its own and needs nothing of CUDA to build.
//
// Discovery. Discover lists the GPUs through an nvml.Interface (package
// github.com/NVIDIA/go-nvml/pkg/nvml): go-nvml's mock in tests, and in the
// server OpenNVML, which loads libnvidia-ml.so.1 at run time with purego.
// go-nvml's own loader is not used: its cgo package leaves the nvml*
// functions as undefined symbols, to be bound once it has dlopen'd the
// library with RTLD_GLOBAL, but the server's linker script (package abi)
// makes every symbol but the backend API local, so those calls would jump
// to address 0; exporting them instead would stop a -z now build from
// starting where NVML is absent. Only go-nvml's types and mock are used.
// NVML is asked nothing unless its Init succeeded (a call after a failed
// Init may end the process), and no driver means zero GPUs, not an error.
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
