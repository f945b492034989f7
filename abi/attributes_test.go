package abi_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/testenv"
	"github.com/tritonhost/tritonhost/loader"
)

func attributesModel(name, groups string) testenv.Model {
	return testenv.Model{Name: name, Config: `name: "` + name + `"
backend: "attributes"
max_batch_size: 0
input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
` + groups}
}

// attributesRepo puts the attributes backend in its own backend directory.
func attributesRepo(t *testing.T, models ...testenv.Model) (repo, backends string) {
	lib := testenv.SharedLibrary(t, "triton_attributes", "testdata/attributes.c")
	backends = t.TempDir()
	dir := backends + "/attributes"
	testenv.CopyFile(t, lib, dir+"/libtriton_attributes.so")
	return testenv.Repository(t, models...), backends
}

func instanceNames(t *testing.T, srv *testServer, model string) []string {
	m, err := srv.Model(model, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, inst := range m.Instances() {
		names = append(names, inst.Name())
	}
	return names
}

func TestPreferredInstanceGroupsAndReadiness(t *testing.T) {
	t.Parallel()
	repo, backends := attributesRepo(t,
		attributesModel("preferred", ""),
		attributesModel("explicit", `instance_group [ { count: 2 kind: KIND_CPU } ]`),
		attributesModel("unwell", `instance_group [ { name: "sick" count: 1 kind: KIND_CPU } ]`))
	srv := startServer(t, repo, func(_ *core.Options, l *loader.Options) { l.BackendDirectory = backends })
	if got := strings.Join(instanceNames(t, srv, "preferred"), ","); got != "preferred_0,preferred_1,preferred_2" {
		t.Errorf("a config without instance_group got instances %s, want the backend's preferred 3", got)
	}
	if got := strings.Join(instanceNames(t, srv, "explicit"), ","); got != "explicit_0_0,explicit_0_1" {
		t.Errorf("an explicit group got instances %s", got)
	}
	for name, ready := range map[string]bool{"preferred": true, "unwell": false} {
		m, _ := srv.Model(name, 0)
		if err := m.Ready(); (err == nil) != ready {
			t.Errorf("%s: Ready() = %v, want ready=%t", name, err, ready)
		} else if !ready && !strings.Contains(err.Error(), "feeling unwell") {
			t.Errorf("%s: Ready() = %v, want the backend's reason", name, err)
		}
	}
}

func TestDeviceBlockingPolicySerializesExecutions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		policy string
		want   int32
	}{{"", 2}, {"device", 1}} {
		t.Run("policy="+tc.policy, func(t *testing.T) {
			repo, backends := attributesRepo(t, attributesModel("m", `instance_group [ { count: 2 kind: KIND_CPU } ]`))
			srv := startServer(t, repo, func(_ *core.Options, l *loader.Options) {
				l.BackendDirectory = backends
				if tc.policy != "" {
					l.BackendConfig = map[string]map[string]string{"attributes": {"policy": tc.policy}}
				}
			})
			var wg sync.WaitGroup
			var most int32
			var mu sync.Mutex
			for range 6 {
				wg.Go(func() {
					c := newCollector()
					if err := srv.Infer(context.Background(), &core.Submission{Model: "m",
						Inputs: []core.Input{core.NewInput("IN", core.TypeInt32, []int64{1}, int32s(1))}}, c.fn); err != nil {
						t.Error(err)
						return
					}
					ev := c.wait(t)
					mu.Lock()
					most = max(most, scalarInt32(t, ev[0].resp, "OUT"))
					mu.Unlock()
				})
			}
			wg.Wait()
			if most != tc.want {
				t.Errorf("at most %d executions ran at once, want %d", most, tc.want)
			}
		})
	}
}
