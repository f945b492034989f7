package httpserver_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/frontend/httpserver"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// TestRestrictedAPIsNeedTheirHeader: a restricted route answers Triton's
// 403 without its header or with a wrong value, before reading the body,
// and serves with it; other routes and unknown paths answer as ever.
func TestRestrictedAPIsNeedTheirHeader(t *testing.T) {
	t.Parallel()
	var rs protocol.Restrictions
	for _, arg := range []string{"inference,statistics:infer-key=v1", "model-repository:Admin-Key=v2"} {
		if err := rs.Add("http-restricted-api", "api", "", false, arg); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, setup{opts: httpserver.Options{Restricted: &rs}}, coretest.ModelDir{Name: "echo", Config: vector("")})
	infer := []byte(`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1],"data":[5]}]}`)
	for _, c := range []struct {
		method, path string
		body         []byte
		key          string
		status       int
		refused      string // the header the refusal names
	}{
		{"POST", "/v2/models/echo/infer", infer, "", 403, "infer-key"},
		{"POST", "/v2/models/echo/infer", infer, "infer-key: v2", 403, "infer-key"},
		{"POST", "/v2/models/echo/infer", infer, "infer-key: v1 ", 200, ""}, // HTTP trims the value
		{"POST", "/v2/models/echo/infer", infer, "INFER-KEY: v1", 200, ""},
		{"POST", "/v2/models/echo/versions/1/infer", infer, "", 403, "infer-key"},
		{"GET", "/v2/models/echo/stats", nil, "", 403, "infer-key"},
		{"GET", "/v2/models/stats", nil, "infer-key: v1", 200, ""},
		{"POST", "/v2/repository/index", nil, "infer-key: v1", 403, "Admin-Key"},
		{"POST", "/v2/repository/index", nil, "admin-key: v2", 200, ""},
		{"GET", "/v2/models/echo", nil, "", 200, ""},
		{"GET", "/v2/health/ready", nil, "", 200, ""},
		{"GET", "/v2/nothing/here", nil, "", 404, ""},
	} {
		var header []string
		if c.key != "" {
			k, v, _ := strings.Cut(c.key, ": ")
			header = []string{k, v}
		}
		status, _, body := h.call(t, c.method, c.path, c.body, header...)
		what := c.method + " " + c.path + " with " + c.key
		if c.refused != "" {
			wantError(t, what, status, body, http.StatusForbidden)
			if want := `{"error":"This API is restricted, expecting header '` + c.refused + `'"}`; string(body) != want {
				t.Errorf("%s: %s, want %s", what, body, want)
			}
			continue
		}
		if status != c.status {
			t.Errorf("%s: %d %s, want %d", what, status, body, c.status)
		}
	}
}
