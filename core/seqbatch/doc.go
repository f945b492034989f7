// Package seqbatch is Triton's sequence batcher, the scheduler of a
// stateful model (sequence_batching in its configuration): every request
// names a sequence by its correlation id, a sequence keeps one slot of one
// instance from its START request to its END request (or until it stays
// idle too long), and its requests run in order, one at a time, each with
// the control inputs the configuration asks for (START, END, READY,
// CORRID) and the sequence's implicit state.
//
// A Batcher implements core.Scheduler; core/scheduling makes one for every
// model with sequence_batching. The implicit state itself is core's
// (core.States, core.StateRun): the backend reads and updates it through
// the request it is executing, with core's checks and limits; the batcher
// starts a state run for each run of a sequence and ties it to every
// request it dispatches.
//
// Files: batcher.go (accepting requests, stopping), slots.go (sequences
// and their slots), lane.go (one instance's executions), reaper.go (idle
// sequences and cancelled requests), config.go and controls.go (what
// sequence_batching asks for).
package seqbatch
