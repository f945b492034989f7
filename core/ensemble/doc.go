// Package ensemble is Triton's ensemble scheduler: the scheduler of a
// model of platform "ensemble", which has no backend. Each request runs
// the ensemble's steps as requests of the models they name, through the
// server's own request path (core.Server.SubmitStep), so that every step
// model's scheduling, validation and statistics apply; a step runs as soon
// as the tensors it reads exist, the tensors pass from step to step
// without copies, and a decoupled step's responses each run the steps
// after it.
//
// A Scheduler implements core.Scheduler; core/scheduling makes one for
// every model with ensemble_scheduling. Loading an ensemble is core's: the
// models its steps run load first, its graph is checked against their
// configurations (which also decides whether it is decoupled), and it
// unloads when one of them does.
//
// Files: scheduler.go (accepting requests, stopping, the per-step bound
// max_inflight_requests), plan.go (the graph as requests run it), run.go
// (one request's tensors and steps), steps.go (sending steps, taking their
// responses, finishing).
package ensemble
