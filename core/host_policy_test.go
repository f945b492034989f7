package core_test

import (
	"slices"
	"strconv"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
)

// threadCPUs returns the CPUs the calling thread may run on.
func threadCPUs(t *testing.T) []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Errorf("sched_getaffinity: %v", err)
		return nil
	}
	var cpus []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

// TestHostPolicyPinsInstanceThreads: an instance whose host policy
// (--host-policy) has cpu-cores executes on those CPUs only, and the
// thread gets its CPUs back afterwards; an instance under another policy
// name runs on every CPU; and the backend finds the policy's settings on
// its instance.
func TestHostPolicyPinsInstanceThreads(t *testing.T) {
	t.Parallel()
	all := threadCPUs(t)
	if len(all) < 2 {
		t.Skipf("the process may run on %v only: pinning to one CPU changes nothing to see", all)
	}
	pinned := all[len(all)-1:]
	var mu sync.Mutex
	seen := map[string][]int{}
	settings := map[string]map[string]string{}
	p := coretest.NewProvider()
	for _, model := range []string{"pinned", "free"} {
		p.Set(model, func(x *coretest.Exec) error {
			mu.Lock()
			seen[model] = threadCPUs(t)
			settings[model] = x.Instance.HostPolicySettings()
			mu.Unlock()
			return coretest.Echo()(x)
		})
	}
	cores := strconv.Itoa(pinned[0])
	policy := core.HostPolicy{CPUs: pinned, Settings: map[string]string{"cpu-cores": cores}}
	srv := coretest.Serve(t, core.Options{Backends: p, HostPolicies: map[string]core.HostPolicy{"edge": policy}},
		coretest.ModelDir{Name: "pinned", Config: coretest.VectorConfig(`instance_group [ { kind: KIND_CPU host_policy: "edge" } ]`)},
		coretest.ModelDir{Name: "free", Config: coretest.VectorConfig(`instance_group [ { kind: KIND_CPU } ]`)})
	if !srv.Ready() {
		t.Fatalf("not ready: %+v", srv.RepositoryIndex())
	}
	for _, model := range []string{"pinned", "free"} {
		if err := coretest.Infer(t, srv, coretest.Request(model, "r", coretest.Int32Input("INPUT0", []int64{1}, 1))).Err(t); err != nil {
			t.Fatalf("%s: %v", model, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(seen["pinned"], pinned) {
		t.Errorf("an instance under cpu-cores %v executed on CPUs %v", pinned, seen["pinned"])
	}
	if !slices.Equal(seen["free"], all) {
		t.Errorf("an instance without a policy executed on CPUs %v, want all of %v", seen["free"], all)
	}
	if settings["pinned"]["cpu-cores"] != cores || settings["free"] != nil {
		t.Errorf("policy settings the instances report: %v", settings)
	}
}

// TestCheckHostPolicy: a policy whose CPUs or NUMA node the machine does
// not have is refused; an empty one passes.
func TestCheckHostPolicy(t *testing.T) {
	t.Parallel()
	node := 4000
	for _, tc := range []struct {
		name   string
		policy core.HostPolicy
		ok     bool
	}{
		{"empty", core.HostPolicy{}, true},
		{"a CPU out of range", core.HostPolicy{CPUs: []int{1 << 20}}, false},
		{"a CPU the machine lacks", core.HostPolicy{CPUs: []int{1000}}, false},
		{"a NUMA node the machine lacks", core.HostPolicy{NUMANode: &node}, false},
	} {
		if err := core.CheckHostPolicy(tc.policy); (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}
