package core_test

import (
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// TestFailedLoadIsLoggedInTritonsWords: a version that fails to load is
// logged as Triton logs it, "failed to load '<model>' version <n>: <code>:
// <message>", which Triton's test scripts look for.
func TestFailedLoadIsLoggedInTritonsWords(t *testing.T) {
	t.Parallel()
	logs := &testenv.LogBuffer{}
	p := coretest.NewProvider().FailLoad("m", core.Errorf(core.CodeInvalidArg, "the backend does not take it"))
	srv := coretest.Serve(t, core.Options{Backends: p, Logger: serverlog.New(logs)},
		coretest.ModelDir{Name: "m", Config: `backend: "go"
input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]`})
	if srv.Ready() {
		t.Fatal("the model loaded")
	}
	if want := "failed to load 'm' version 1: Invalid argument: "; !strings.Contains(logs.String(), want) {
		t.Errorf("the log does not say %q:\n%s", want, logs.String())
	}
}
