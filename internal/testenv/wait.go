package testenv

import (
	"testing"
	"time"
)

// Patience is how long a test waits for something that must happen (a
// response, a backend call, goroutines ending, a count reaching zero)
// before it fails. It bounds a wait; no test asserts with it that
// anything was fast.
const Patience = 30 * time.Second

// WaitUntil polls cond until it holds, failing the test after Patience,
// naming what it waited for: for conditions nothing signals (a server's
// state, a count a request releases after its response reached the
// client).
func WaitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if !Eventually(cond) {
		t.Fatalf("testenv: gave up waiting after %v for %s", Patience, what)
	}
}

// Eventually polls cond until it holds or Patience has passed, and
// reports whether it held; for a test that states the failure itself.
func Eventually(cond func() bool) bool {
	return poll(Patience, cond)
}

// poll calls cond until it returns true or d has passed, sleeping between
// calls from a millisecond, for what happens at once, up to 20 ms, for
// what takes a while: a condition that reads a process's state costs
// little more than the wait.
func poll(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for pause := time.Millisecond; ; pause = min(2*pause, 20*time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
	}
}
