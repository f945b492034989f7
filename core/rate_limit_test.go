package core_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/core/ratelimit"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// limitedConfig is a vector model (named after its directory) with count
// CPU instances whose rate_limiter lists resources (text such as
// `{ name: "R" count: 1 }`) at priority.
func limitedConfig(count, priority int, resources string) string {
	return vectorConfig(fmt.Sprintf(`instance_group [ { count: %d kind: KIND_CPU rate_limiter { resources [ %s ] priority: %d } } ]`,
		count, resources, priority))
}

// concurrency wraps a behaviour and records the most executions, of every
// model it wraps, that ran at once.
type concurrency struct {
	mu       sync.Mutex
	running  int
	mostSeen int
}

func (c *concurrency) wrap(b coretest.Behaviour) coretest.Behaviour {
	return func(x *coretest.Exec) error {
		c.mu.Lock()
		c.running++
		c.mostSeen = max(c.mostSeen, c.running)
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			c.running--
			c.mu.Unlock()
		}()
		return b(x)
	}
}

// now returns how many executions are running.
func (c *concurrency) now() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.running
}

func (c *concurrency) most() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mostSeen
}

func newLimiter(t *testing.T, resources ...ratelimit.Resource) *ratelimit.Limiter {
	t.Helper()
	l, err := ratelimit.New(resources)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestRateLimiterSharedResource: two models whose instances each need one
// copy of a resource: with one copy (the default, the most either asks
// for) they never execute together; with two (given explicitly) they do.
func TestRateLimiterSharedResource(t *testing.T) {
	tests := []struct {
		name     string
		given    []ratelimit.Resource
		together bool
	}{
		{"one copy", nil, false},
		{"two copies", []ratelimit.Resource{{Name: "R", Count: 2, Device: ratelimit.EveryDevice}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lim := newLimiter(t, tc.given...)
			p := coretest.NewProvider()
			srv := coretest.Serve(t, core.Options{Backends: p, RateLimiter: lim},
				coretest.ModelDir{Name: "a", Config: limitedConfig(1, 1, `{ name: "R" count: 1 }`)},
				coretest.ModelDir{Name: "b", Config: limitedConfig(1, 1, `{ name: "R" count: 1 }`)})
			gate := coretest.NewGate(t)
			var c concurrency
			p.Set("a", c.wrap(coretest.Gated(gate, coretest.Echo())))
			p.Set("b", c.wrap(coretest.Gated(gate, coretest.Echo())))
			ra := coretest.Infer(t, srv, coretest.Request("a", "a1", coretest.Int32Input("INPUT0", []int64{1}, 1)))
			rb := coretest.Infer(t, srv, coretest.Request("b", "b1", coretest.Int32Input("INPUT0", []int64{1}, 2)))
			if tc.together {
				// Both wait at the gate, executing: the provider logs an
				// execution before its behaviour runs, so wait for the
				// behaviours themselves.
				testenv.WaitUntil(t, "both to execute at once", func() bool { return c.now() == 2 })
			} else {
				testenv.WaitUntil(t, "one to execute and the other to wait for the resource", func() bool {
					return len(p.Executions("")) == 1 && lim.Waiting() == 1
				})
			}
			gate.Open()
			coretest.Succeeded(t, ra, rb)
			want := 1
			if tc.together {
				want = 2
			}
			if got := c.most(); got != want {
				t.Errorf("at most %d executions at once, want %d", got, want)
			}
		})
	}
}

// TestRateLimiterPriority: under contention for one copy of a resource,
// the instances of priority 2 get half the turns of those of priority 1.
// Each execution waits for the test's turn, so that every other instance
// waits for the resource whenever one is released.
func TestRateLimiterPriority(t *testing.T) {
	t.Parallel()
	lim := newLimiter(t)
	p := coretest.NewProvider()
	srv := coretest.Serve(t, core.Options{Backends: p, RateLimiter: lim},
		coretest.ModelDir{Name: "hi", Config: limitedConfig(2, 1, `{ name: "R" count: 1 }`)},
		coretest.ModelDir{Name: "lo", Config: limitedConfig(2, 2, `{ name: "R" count: 1 }`)})
	turns := make(chan struct{})
	var once sync.Once
	endTurns := func() { once.Do(func() { close(turns) }) }
	t.Cleanup(endTurns) // before the server stops
	turn := func(x *coretest.Exec) error {
		<-turns
		return coretest.Echo()(x)
	}
	p.Set("hi", turn).Set("lo", turn)
	var replies []*coretest.Collector
	for i := range 50 {
		for _, model := range []string{"hi", "lo"} {
			id := fmt.Sprintf("%s%d", model, i)
			replies = append(replies, coretest.Infer(t, srv, coretest.Request(model, id, coretest.Int32Input("INPUT0", []int64{1}, int32(i)))))
		}
	}
	const rounds = 60
	for n := 1; n <= rounds; n++ {
		testenv.WaitUntil(t, fmt.Sprintf("execution %d to run while the three other instances wait", n), func() bool {
			return len(p.Executions("")) == n && lim.Waiting() == 3
		})
		turns <- struct{}{}
	}
	count := map[string]int{}
	for _, e := range p.Executions("")[:rounds] {
		count[e.Model]++
	}
	if count["hi"] != 2*rounds/3 || count["lo"] != rounds/3 {
		t.Errorf("of %d executions, priority 1 had %d and priority 2 had %d, want %d and %d", rounds, count["hi"], count["lo"], 2*rounds/3, rounds/3)
	}
	endTurns()
	coretest.Succeeded(t, replies...)
}

// TestRateLimiterRefusesLoads: with resources given explicitly, a model
// whose instances need more copies than given fails to load, as does one
// that makes a resource both global and per device; Triton's texts.
func TestRateLimiterRefusesLoads(t *testing.T) {
	tests := []struct {
		name   string
		given  []ratelimit.Resource
		first  string // rate_limiter resources of model "a", which loads
		second string // of model "b", which fails
		want   string
	}{
		{"more than given", []ratelimit.Resource{{Name: "R", Count: 1, Device: ratelimit.EveryDevice}},
			`{ name: "R" count: 1 }`, `{ name: "R" count: 2 }`,
			`Resource count for "R" is limited to 1 which will prevent scheduling of one or more model instances, the minimum required count is 2`},
		{"not given", []ratelimit.Resource{{Name: "R", Count: 1, Device: ratelimit.EveryDevice}},
			`{ name: "R" count: 1 }`, `{ name: "S" count: 1 }`,
			`Resource count for "S" is limited to 0 which will prevent scheduling of one or more model instances, the minimum required count is 1`},
		{"global and per device", nil,
			`{ name: "R" count: 1 global: true }`, `{ name: "R" count: 1 }`,
			`Resource "R" is present as both global and device-specific resource in the model configuration.`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lim := newLimiter(t, tc.given...)
			p := coretest.NewProvider()
			srv := coretest.Serve(t, core.Options{Backends: p, RateLimiter: lim, ExplicitModelControl: true},
				coretest.ModelDir{Name: "a", Config: limitedConfig(1, 1, tc.first)},
				coretest.ModelDir{Name: "b", Config: limitedConfig(1, 1, tc.second)})
			if err := srv.LoadModel("a"); err != nil {
				t.Fatalf("load a: %v", err)
			}
			before := lim.Available()
			err := srv.LoadModel("b")
			coretest.WantError(t, "load b", err, core.CodeInvalidArg, `model "b" version 1 instance "b_0_0": instance_group rate_limiter: `+tc.want)
			if got := lim.Available(); fmt.Sprint(got) != fmt.Sprint(before) {
				t.Errorf("after the refused load the counts are %v, want %v as before", got, before)
			}
			p.WaitEvent(t, "finalize model b")
		})
	}
}

// TestRateLimiterUnregistersOnUnload: a model's instances leave the
// limiter as it unloads, and their counts with them.
func TestRateLimiterUnregistersOnUnload(t *testing.T) {
	t.Parallel()
	lim := newLimiter(t)
	p := coretest.NewProvider()
	srv := coretest.Serve(t, core.Options{Backends: p, RateLimiter: lim, ExplicitModelControl: true, StartupModels: []string{"big", "small"}},
		coretest.ModelDir{Name: "big", Config: limitedConfig(1, 1, `{ name: "R" count: 4 }`)},
		coretest.ModelDir{Name: "small", Config: limitedConfig(2, 1, `{ name: "R" count: 1 }, { name: "G" count: 3 global: true }`)},
		coretest.ModelDir{Name: "standby", Config: vectorConfig(
			`instance_group [ { count: 1 kind: KIND_CPU passive: true rate_limiter { resources [ { name: "P" count: 9 } ] } } ]`)})
	if got := fmt.Sprint(lim.Available()); got != "map[G:3 R@0:4]" {
		t.Fatalf("counts %s, want map[G:3 R@0:4]", got)
	}
	if err := srv.UnloadModel(context.Background(), "big"); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(lim.Available()); got != "map[G:3 R@0:1]" {
		t.Errorf("after big unloaded: %s, want map[G:3 R@0:1]", got)
	}
	if err := srv.UnloadModel(context.Background(), "small"); err != nil {
		t.Fatal(err)
	}
	if got := lim.Available(); len(got) != 0 {
		t.Errorf("after every model unloaded: %v, want none", got)
	}
	// A passive instance never executes: it does not register.
	if err := srv.LoadModel("standby"); err != nil {
		t.Fatal(err)
	}
	if got := lim.Available(); len(got) != 0 {
		t.Errorf("with a passive instance: %v, want none", got)
	}
}

// TestRateLimiterOffByDefault: without a limiter, rate_limiter resources
// do not hold executions back.
func TestRateLimiterOffByDefault(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider()
	srv := coretest.Start(t, p,
		coretest.ModelDir{Name: "a", Config: limitedConfig(1, 1, `{ name: "R" count: 1 }`)},
		coretest.ModelDir{Name: "b", Config: limitedConfig(1, 1, `{ name: "R" count: 1 }`)})
	gate := coretest.NewGate(t)
	p.Set("a", coretest.Gated(gate, coretest.Echo())).Set("b", coretest.Gated(gate, coretest.Echo()))
	ra := coretest.Infer(t, srv, coretest.Request("a", "a1", coretest.Int32Input("INPUT0", []int64{1}, 1)))
	rb := coretest.Infer(t, srv, coretest.Request("b", "b1", coretest.Int32Input("INPUT0", []int64{1}, 2)))
	p.Reached(t, "a1", "b1")
	gate.Open()
	coretest.Succeeded(t, ra, rb)
	if srv.RateLimiter() != nil {
		t.Error("a server without Options.RateLimiter has a rate limiter")
	}
}
