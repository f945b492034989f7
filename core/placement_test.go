package core_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
)

// twoGPUs are Devices with GPUs 0 and 1; placement reads only IDs.
type twoGPUs struct{ core.Devices }

func (twoGPUs) IDs() []int { return []int{0, 1} }

func TestInstanceGroupsArePlacedAsTritonPlacesThem(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		devices core.Devices
		groups  string
		want    string // name kind device policy, per instance
		reason  []string
	}{
		{"KIND_GPU on every GPU, count per GPU", twoGPUs{}, `instance_group [ { count: 2 kind: KIND_GPU } ]`,
			"m_0_0 GPU 0 gpu_0, m_0_0 GPU 1 gpu_1, m_0_1 GPU 0 gpu_0, m_0_1 GPU 1 gpu_1", nil},
		{"KIND_GPU on listed GPUs", twoGPUs{}, `instance_group [ { name: "one" count: 1 kind: KIND_GPU gpus: [ 1 ] } ]`,
			"one_0 GPU 1 gpu_1", nil},
		{"KIND_AUTO with GPUs", twoGPUs{}, `instance_group [ { count: 1 kind: KIND_AUTO } ]`,
			"m_0_0 GPU 0 gpu_0, m_0_0 GPU 1 gpu_1", nil},
		{"no instance_group with GPUs", twoGPUs{}, ``, "m_0 GPU 0 gpu_0, m_0 GPU 1 gpu_1", nil},
		{"KIND_AUTO without GPUs", nil, `instance_group [ { count: 1 kind: KIND_AUTO } ]`, "m_0_0 CPU 0 cpu", nil},
		{"KIND_CPU with GPUs", twoGPUs{}, `instance_group [ { count: 1 kind: KIND_CPU } ]`, "m_0_0 CPU 0 cpu", nil},
		{"a missing GPU", twoGPUs{}, `instance_group [ { name: "far" count: 1 kind: KIND_GPU gpus: [ 0, 2 ] } ]`,
			"", []string{`model "m"`, `instance_group "far"`, "GPU 2", "available GPUs: 0, 1"}},
		{"KIND_GPU without GPUs", nil, `instance_group [ { name: "g" kind: KIND_GPU } ]`,
			"", []string{`model "m"`, `instance_group "g"`, "no GPUs"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := coretest.Serve(t, core.Options{Backends: coretest.NewProvider(), Devices: tc.devices},
				coretest.ModelDir{Name: "m", Config: vectorConfig(tc.groups)})
			if tc.reason != nil {
				idx := srv.RepositoryIndex()
				if len(idx) != 1 || idx[0].Readiness != core.ModelUnavailable {
					t.Fatalf("index %+v, want m unavailable", idx)
				}
				for _, w := range tc.reason {
					if !strings.Contains(idx[0].Reason, w) {
						t.Errorf("reason %q lacks %q", idx[0].Reason, w)
					}
				}
				return
			}
			m, err := srv.Model("m", 0)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, inst := range m.Instances() {
				got = append(got, fmt.Sprintf("%s %s %d %s", inst.Name(), inst.Kind(), inst.DeviceID(), inst.HostPolicyName()))
			}
			if strings.Join(got, ", ") != tc.want {
				t.Errorf("instances %q, want %q", strings.Join(got, ", "), tc.want)
			}
		})
	}
}
