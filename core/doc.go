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
// An ensemble (platform "ensemble") has no backend: its scheduler
// (ensembleScheduler) runs each request's steps as requests of the other
// models, through the same path as a client's, and the server loads it
// after those models (ensemble_load.go).
//
// What a client or a model configuration can make the server hold is
// bounded: tensors by Options.MaxTensorBytes, the calls into a backend that
// load and unload by Options.BackendCallTimeout, statistics by
// ResponseStatsCap, the files a configuration names by the model's
// directory, and the files of load requests by Options.LoadFiles (never
// shared libraries, unless allowed, and a disk budget).
package core
