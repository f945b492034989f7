// Package testhooks reads the TRITONSERVER_DELAY_* environment variables
// that Triton's own test suites set to widen the windows of the races they
// test (a scheduler that waits for a queue to fill, a frontend that pauses
// before it answers). They are for tests only: unset, every hook is inert
// and costs a load of a field read once at start.
//
// Names and meanings are Triton's:
//
//	TRITONSERVER_DELAY_SCHEDULER          a scheduler runs nothing until this
//	                                      many requests are queued (once)
//	TRITONSERVER_BACKLOG_DELAY_SCHEDULER  the sequence batcher runs nothing
//	                                      until this many requests wait in its
//	                                      backlog (once)
//	TRITONSERVER_DELAY_GRPC_PROCESS_ENTRY milliseconds the gRPC frontend
//	                                      waits when a request arrives,
//	                                      before anything else
//	TRITONSERVER_DELAY_GRPC_PROCESS       milliseconds it waits before it
//	                                      reads each request's model and
//	                                      inputs
//	TRITONSERVER_DELAY_GRPC_ENQUEUE       milliseconds it waits before it
//	                                      submits each request to the model
//	TRITONSERVER_DELAY_RESPONSE_COMPLETION milliseconds it waits in the
//	                                      callback that hands it each
//	                                      response of a model
//	TRITONSERVER_DELAY_GRPC_RESPONSE      milliseconds it waits before it
//	                                      sends each response
//	TRITONSERVER_DELAY_GRPC_COMPLETE      milliseconds it waits before it
//	                                      ends a call that was answered
//	TRITONSERVER_DELAY_GRPC_NOTIFICATION  milliseconds it waits before it
//	                                      acts on a client's cancellation
package testhooks

import (
	"os"
	"strconv"
	"time"
)

// The hooks, by environment variable.
const (
	DelayScheduler          = "TRITONSERVER_DELAY_SCHEDULER"
	BacklogDelayScheduler   = "TRITONSERVER_BACKLOG_DELAY_SCHEDULER"
	DelayGRPCProcessEntry   = "TRITONSERVER_DELAY_GRPC_PROCESS_ENTRY"
	DelayGRPCProcess        = "TRITONSERVER_DELAY_GRPC_PROCESS"
	DelayGRPCEnqueue        = "TRITONSERVER_DELAY_GRPC_ENQUEUE"
	DelayResponseCompletion = "TRITONSERVER_DELAY_RESPONSE_COMPLETION"
	DelayGRPCResponse       = "TRITONSERVER_DELAY_GRPC_RESPONSE"
	DelayGRPCComplete       = "TRITONSERVER_DELAY_GRPC_COMPLETE"
	DelayGRPCNotification   = "TRITONSERVER_DELAY_GRPC_NOTIFICATION"
)

// GRPC are the gRPC frontend's delays, read once (GRPCDelays); all zero
// unless a test set them.
type GRPC struct {
	ProcessEntry, Process, Enqueue, ResponseCompletion, Response, Complete, Notification time.Duration
}

// Any reports whether any delay is set.
func (g GRPC) Any() bool { return g != GRPC{} }

// GRPCDelays reads the gRPC frontend's hooks from the environment.
func GRPCDelays() GRPC {
	return GRPC{
		ProcessEntry:       Delay(DelayGRPCProcessEntry),
		Process:            Delay(DelayGRPCProcess),
		Enqueue:            Delay(DelayGRPCEnqueue),
		ResponseCompletion: Delay(DelayResponseCompletion),
		Response:           Delay(DelayGRPCResponse),
		Complete:           Delay(DelayGRPCComplete),
		Notification:       Delay(DelayGRPCNotification),
	}
}

// Sleep waits d, if it is set.
func Sleep(d time.Duration) {
	if d > 0 {
		time.Sleep(d)
	}
}

// Count returns the value of the hook name as a count: 0 when it is unset
// or not a positive integer (as Triton's atoi reads it, a leading number
// counts).
func Count(name string) int {
	v, ok := os.LookupEnv(name)
	if !ok {
		return 0
	}
	end := 0
	for end < len(v) && v[end] >= '0' && v[end] <= '9' {
		end++
	}
	n, err := strconv.Atoi(v[:end])
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// Delay returns the value of the hook name as milliseconds: 0 when unset.
func Delay(name string) time.Duration {
	return time.Duration(Count(name)) * time.Millisecond
}
