// Package loader finds and loads Triton-style backend shared libraries and
// implements core.BackendProvider over them.
//
// A model's backend library is libtriton_<backend>.so (or the file its
// configuration's runtime names), searched in Triton's order:
//
//	<repository>/<model>/<version>/
//	<repository>/<model>/
//	<backend-directory>/<backend>/
//
// The lifecycle of a library, written once here:
//  1. Before the first library, a stub named libtritonserver.so is loaded so
//     that backends linked against Triton's stub (DT_NEEDED
//     libtritonserver.so) load; the API functions themselves come from this
//     executable's exports (package abi).
//  2. dlopen(RTLD_NOW|RTLD_LOCAL); resolve the entry points. Only
//     TRITONBACKEND_ModelInstanceExecute is required.
//  3. TRITONBACKEND_Initialize (if exported), then
//     TRITONBACKEND_GetBackendAttribute (if exported). A failure closes the
//     library again; the model that asked fails to load, naming the file.
//  4. Per model version: TRITONBACKEND_ModelInitialize; per instance:
//     TRITONBACKEND_ModelInstanceInitialize; then executions.
//  5. On unload: ModelInstanceFinalize per instance, then ModelFinalize.
//  6. When no model uses the library: TRITONBACKEND_Finalize, then dlclose,
//     but only once no request of its models is still held anywhere (a
//     factory, an unsent response); otherwise the library stays mapped.
package loader
