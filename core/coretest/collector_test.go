package coretest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
)

// failures is a testing.TB that keeps the failures reported to it.
type failures struct {
	testing.TB
	msgs []string
}

func (f *failures) Helper() {}
func (f *failures) Errorf(format string, args ...any) {
	f.msgs = append(f.msgs, fmt.Sprintf(format, args...))
}

func TestCollectorReportsCallsAfterTheFinal(t *testing.T) {
	c := NewCollector()
	c.Receive(&core.Response{}, false)
	c.Receive(nil, true)
	if got := c.Wait(t); len(got.Responses) != 1 || !got.FlagsOnlyFinal {
		t.Fatalf("Wait = %+v, want one response and a flags-only final", got)
	}
	c.Receive(&core.Response{}, true)
	f := &failures{TB: t}
	c.Check(f)
	if len(f.msgs) != 1 || !strings.Contains(f.msgs[0], "after the final") {
		t.Errorf("Check reported %q, want the call after the final", f.msgs)
	}
}
