package httpserver

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/tritonhost/tritonhost/core"
)

// net/http formats a Date header for every response that has none
// (time.Now, then Time.AppendFormat): about a quarter of a microsecond of
// each small answer. The handlers' answers carry one formatted once a
// second instead, the same text net/http would write.

// dateValue is the Date header of the current second, as a header's
// value (shared by every answer: never modified), and the monotonic time
// (core.Nanotime) from which it is stale.
type dateValue struct {
	header  []string
	staleAt uint64
}

var currentDate atomic.Pointer[dateValue]

// httpDate returns the Date header for an answer sent now.
func httpDate() []string {
	now := core.Nanotime()
	if d := currentDate.Load(); d != nil && now < d.staleAt {
		return d.header
	}
	t := time.Now()
	// Stale when the wall clock's second ends, measured from before t was
	// read: never late, at worst formatted again a moment early.
	d := &dateValue{header: []string{t.UTC().Format(http.TimeFormat)}, staleAt: now + uint64(time.Second) - uint64(t.Nanosecond())}
	currentDate.Store(d)
	return d.header
}

// setDate gives an answer its Date header (h is its header).
func setDate(h http.Header) { h["Date"] = httpDate() }
