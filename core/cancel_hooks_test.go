package core

import (
	"slices"
	"testing"
)

// TestOnCancelArgHooks: hooks of OnCancelArg run with their argument, in
// order with those of OnCancel, not once removed, and at once when the
// request is cancelled already.
func TestOnCancelArgHooks(t *testing.T) {
	p := newResponder(&Model{name: "m"}, "r", nil, false, func(*Response, bool) {})
	var ran []any
	note := func(arg any) { ran = append(ran, arg) }
	p.OnCancelArg(note, 1)
	p.OnCancel(func() { ran = append(ran, "f") })
	p.OnCancelArg(note, 3).Remove()
	p.OnCancelArg(note, 4)
	p.cancel()
	p.cancel() // hooks run once
	p.OnCancelArg(note, 5)
	if want := []any{1, "f", 4, 5}; !slices.Equal(ran, want) {
		t.Errorf("hooks ran %v, want %v", ran, want)
	}
}
