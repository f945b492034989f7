// Package loader finds Triton-style backend shared libraries, shares each
// between the models that use it, and implements core.BackendProvider over
// them. It is pure Go: opening a library and calling into it is the
// business of an Opener, which package abi implements with dlopen and cgo;
// tests use Go fakes.
//
// A model's backend library is libtriton_<backend>.so (or the file its
// configuration's runtime names), searched in Triton's order:
//
//	<repository>/<model>/<version>/
//	<repository>/<model>/
//	<backend-directory>/<backend>/
//
// The lifecycle of a backend library, written once here (the Library, Model
// and Instance interfaces name the calls):
//
//  1. Open, when a model first needs the library: the Opener loads it (with
//     the libtritonserver.so stub that Triton-linked backends need), resolves
//     the entry points, refusing a library without
//     TRITONBACKEND_ModelInstanceExecute, and creates the backend's handle.
//  2. Library.Initialize (TRITONBACKEND_Initialize), then
//     Library.Attributes (TRITONBACKEND_GetBackendAttribute). If either
//     fails the library is finalized and closed (a failed initialize is
//     followed by its finalize, as in Triton: a backend cleans up there
//     what its initialize created). Either way the model that asked fails
//     to load, naming the file.
//  3. Per model version: Library.NewModel, then Model.Initialize
//     (TRITONBACKEND_ModelInitialize); the backend may complete the model's
//     configuration meanwhile. Per instance: Model.NewInstance, then
//     Instance.Initialize. A failed initialize is followed by its
//     finalize, then what was created is retired (the backend
//     can no longer reach it) and the model does not load.
//  4. Executions: Instance.Execute, one at a time per instance, from any
//     goroutine.
//  5. On unload: Instance.Finalize and Instance.Retire per instance, then
//     Model.Finalize and Model.Retire. Backends may still send responses
//     from their own threads.
//  6. When no model uses the library any more: Library.Finalize, then
//     Library.Close, but only once the backend holds no request of its
//     models (no request, factory or unsent response: HeldRequests is
//     zero), waiting Options.CloseGrace for it. If it still holds some, the
//     library stays loaded: its code may still run on the backend's threads.
//
// The same library file used by several models is opened once and shared;
// Provider counts its users.
//
// core bounds the calls of steps 3 and 5 (Options.BackendCallTimeout) and
// keeps their order when one returns after it stopped waiting (see
// core.BackendProvider), so a hung backend costs the loader nothing of its
// own: a model that waits for a library another model is opening (step 1
// and 2 run under the library's lock) waits as long as that, within core's
// bound, and is finalized as usual if core gave up on it meanwhile.
//
// The two other plugin kinds Triton loads are found the same way, in their
// own directories: the server's response cache,
// <cache-directory>/<name>/libtritoncache_<name>.so (OpenCache, opened
// through a CacheOpener), and repository agents,
// <repoagent-directory>/<name>/libtritonrepoagent_<name>.so (RepoAgents,
// which implements core.RepoAgentProvider through a RepoAgentOpener: an
// agent opens for the first model whose configuration names it and closes
// after its last agent model is finalized).
package loader
