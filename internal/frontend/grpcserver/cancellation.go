package grpcserver

import "sync"

// Cancellation notifications: a client that cancels a call (or whose
// deadline passes, or whose connection drops) ends its requests. Each one
// is logged at verbose level 1 in the words Triton's gRPC handlers log it
// with, "Cancellation notification received for <handler>", which Triton's
// request-cancellation tests look for, followed by the request id.

// Handler names as Triton's gRPC frontend calls them in its log.
const (
	unaryHandlerName  = "ModelInferHandler"
	streamHandlerName = "ModelStreamInferHandler"
)

// logCancellation logs that the client cancelled request id of handler.
func (s *Service) logCancellation(handler, id string) {
	if id == "" {
		id = "<id_unknown>"
	}
	s.core.Logger().Verbosef(1, "Cancellation notification received for %s, request id: %s", handler, id)
}

// liveRequests is the set of a stream's requests still waiting for their
// last response, for logging them when the client cancels the stream: those
// still live when the notification comes are logged then (take), those the
// cancellation completes first as they complete (remove).
type liveRequests struct {
	mu  sync.Mutex
	set map[*streamRequest]struct{}
}

func (l *liveRequests) add(sr *streamRequest) {
	l.mu.Lock()
	if l.set == nil {
		l.set = map[*streamRequest]struct{}{}
	}
	l.set[sr] = struct{}{}
	l.mu.Unlock()
}

// remove takes sr out of the set and reports whether it was there.
func (l *liveRequests) remove(sr *streamRequest) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.set[sr]
	delete(l.set, sr)
	return ok
}

// take empties the set and returns the ids of the requests it held.
func (l *liveRequests) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.set))
	for sr := range l.set {
		out = append(out, sr.header.id)
	}
	clear(l.set)
	return out
}
