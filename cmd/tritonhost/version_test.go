package main

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/server"
)

func TestVersionPrintsStampedVersionAndCommit(t *testing.T) {
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "v0.1.0", "0123456789abcdef0123456789abcdef01234567"
	var out strings.Builder
	if err := writeVersion(&out); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("tritonhost v0.1.0\ncommit 0123456789abcdef0123456789abcdef01234567\ngo %s %s/%s\n"+
		"TRITONBACKEND_API_VERSION %d.%d\nTRITONSERVER_API_VERSION %d.%d\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, server.BackendAPIMajor, server.BackendAPIMinor, server.ServerAPIMajor, server.ServerAPIMinor)
	if out.String() != want {
		t.Errorf("tritonhost version printed\n%s\nwant\n%s", out.String(), want)
	}
}

// Unstamped (a plain go build, or this test binary), the version and the
// commit still say something: the go command's record, or dev and unknown.
func TestVersionWithoutStampIsNeverEmpty(t *testing.T) {
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "", ""
	if v := buildVersion(); v == "" || strings.ContainsAny(v, " ()") {
		t.Errorf("buildVersion() = %q, want a version, a dev-<commit> or dev", v)
	}
	if c := buildCommit(); c == "" || strings.Contains(c, " ") {
		t.Errorf("buildCommit() = %q, want a commit or unknown", c)
	}
}
