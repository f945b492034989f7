package coretest

import (
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
)

// WantError fails the test unless err has code and mentions every part;
// what names the error in the failure.
func WantError(t testing.TB, what string, err error, code core.Code, parts ...string) {
	t.Helper()
	if err == nil || core.CodeOf(err) != code {
		t.Errorf("%s: error %v (code %v), want code %v", what, err, core.CodeOf(err), code)
		return
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %q does not mention %q", what, err, p)
		}
	}
}
