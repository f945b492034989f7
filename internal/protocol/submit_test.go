package protocol

import (
	"context"
	"testing"
)

func TestWatchedContextIsTheCallersOnlyOnceItEnded(t *testing.T) {
	live, cancel := context.WithCancel(context.Background())
	defer cancel()
	if got := WatchedContext(live); got != context.Background() {
		t.Errorf("a live context is watched: %v", got)
	}
	ended, end := context.WithCancel(context.Background())
	end()
	if got := WatchedContext(ended); got != ended {
		t.Errorf("an ended context is not passed on: %v", got)
	}
}
