// Package core is the pure-Go heart of tritonhost: the model repository,
// loaded models and their instances, request validation, scheduling,
// response routing with Triton's decoupled rules, and statistics.
//
// core knows nothing about cgo or shared libraries. It reaches a backend
// through the BackendProvider, BackendModel and BackendInstance interfaces,
// which the loader and abi packages implement for Triton-style C backends.
//
// The in-process API is Server: NewServer loads a model repository,
// Server.Infer submits a request whose ResponseFunc may be called any number
// of times (the Go counterpart of TRITONSERVER_InferenceRequestSetResponseCallback),
// and Server.Stop drains in-flight work and unloads every model, within its
// context's deadline. Under explicit model control, LoadModelWith loads a
// model with the configuration and files a load request carries
// (LoadOptions), the files in a temporary directory that goes with the
// model.
//
// Requests are validated, and models looked up, with Triton's checks in
// Triton's order and Triton's words (request_text.go, model_lookup.go), so
// that a frontend passes Triton's messages to Triton's clients unchanged.
//
// A client submits a Submission; once validated and accepted it becomes a
// Request, which is what schedulers and backends see.
//
// Each model version has a Scheduler, which decides which instance runs
// which requests and when. core defines the contract (scheduler.go: the
// Scheduler interface, and what a scheduler may do with a Request, an
// Instance and a Model) but implements none: the server is given a
// SchedulerFactory (Options.Schedulers, required like Options.Backends),
// and core/scheduling's New picks from the configuration the ensemble
// scheduler (core/ensemble), the sequence batcher (core/seqbatch) or the
// dynamic batcher (core/dynbatch). Those packages import core; core
// imports none of them. The implicit state of a sequence stays in core
// (implicit_state.go): backends reach it through the request they execute.
//
// An ensemble (platform "ensemble") has no backend: its scheduler runs each
// request's steps as requests of the other models, through the same path
// as a client's (Server.SubmitStep). Loading it is core's: the server loads
// it after those models (ensemble_load.go), checks its graph against their
// configurations (ensemble_check.go) and unloads it with them
// (ensemble_deps.go).
//
// A model whose configuration enables response_cache, on a server given a
// ResponseCache (Options.ResponseCache: a Triton cache library through
// packages loader and abi, or a Go-native one), answers a request whose key
// the cache holds without running it, and inserts the responses of those it
// runs (cache_submit.go); the calls into the cache are bounded in time, in
// number and in bytes, and a cache that fails or hangs costs a request no
// more than a miss (cache_path.go). Repository agents a configuration
// names (model_repository_agents, started by Options.RepoAgents) see each
// load and unload of the model, and may refuse a load or give the model
// other files (repoagent_load.go).
//
// What a client or a model configuration can make the server hold is
// bounded: tensors by Options.MaxTensorBytes, the calls into a backend that
// load and unload by Options.BackendCallTimeout, statistics by
// ResponseStatsCap, the files a configuration names by the model's
// directory, and the files of load requests by Options.LoadFiles (never
// shared libraries, unless allowed, and a disk budget).
package core
