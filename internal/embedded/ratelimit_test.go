package embedded_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core/ratelimit"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// TestOptionsRateLimiter: TRITONSERVER_RATE_LIMIT_EXEC_COUNT and the
// resources added to the options give the server its rate limiter, as
// --rate-limit and --rate-limit-resource do: a model needing more copies
// than given fails to load with Triton's text. Off (the default), the
// server has none.
func TestOptionsRateLimiter(t *testing.T) {
	backends := testenv.BackendDir(t)
	limited := func(count string) string {
		return identityConfig + `instance_group [ { count: 1 kind: KIND_CPU rate_limiter { resources [ { name: "R" count: ` + count + ` } ] } } ]`
	}
	repo := testenv.Repository(t,
		testenv.Model{Name: "fits", Config: limited("1")},
		testenv.Model{Name: "greedy", Config: limited("2")})
	tests := []struct {
		name    string
		limit   bool
		ready   []string
		limited bool
	}{
		{"exec_count", true, []string{"fits"}, true},
		{"off", false, []string{"fits", "greedy"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := abi.NewServerOptions()
			o.ModelRepositories, o.BackendDirectory, o.LogInfo = []string{repo}, backends, false
			o.ExitOnError = false
			o.RateLimit = tc.limit
			o.RateLimitResources = []ratelimit.Resource{{Name: "R", Count: 1, Device: ratelimit.EveryDevice}}
			_, srv := start(t, o)
			if got := ready(srv); !slices.Equal(got, tc.ready) {
				t.Errorf("ready %v, want %v", got, tc.ready)
			}
			if (srv.RateLimiter() != nil) != tc.limited {
				t.Errorf("rate limiter %v, want one: %v", srv.RateLimiter(), tc.limited)
			}
			if !tc.limited {
				return
			}
			const want = `Resource count for "R" is limited to 1 which will prevent scheduling of one or more model instances, the minimum required count is 2`
			for _, st := range srv.RepositoryIndex() {
				if st.Name == "greedy" && !strings.Contains(st.Reason, want) {
					t.Errorf("greedy: %q, want %q", st.Reason, want)
				}
			}
		})
	}
}
