// Package dynbatch is the default scheduler of a model version: one queue
// of requests, handed to the version's instances in arrival order, with
// Triton's dynamic batching when the configuration asks for it
// (dynamic_batching) and the model batches.
//
// A Batcher implements core.Scheduler; core/scheduling makes one for every
// model that is neither an ensemble nor sequence-batched. Each instance
// runs in a goroutine of its own, so Execute is never called concurrently
// for one instance; one worker at a time forms the next batch.
package dynbatch
