package isolation

import (
	"reflect"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/wire"
)

// TestLoadMessageCarriesHostPolicies: what a worker is asked to load
// reads back whole, the server's host policies included, so that its
// instances run under them (and their backends read their settings) as in
// process.
func TestLoadMessageCarriesHostPolicies(t *testing.T) {
	node := 1
	for _, tc := range []struct {
		name     string
		policies map[string]core.HostPolicy
	}{
		{"none", nil},
		{"settings only", map[string]core.HostPolicy{"cpu": {Settings: map[string]string{"custom": "value"}}}},
		{"cores and node", map[string]core.HostPolicy{
			"gpu_0": {CPUs: []int{0, 2}, NUMANode: &node, Settings: map[string]string{"cpu-cores": "0,2", "numa-node": "1"}},
			"cpu":   {Settings: map[string]string{}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sent := &loadMsg{Name: "m", Version: 3, Dir: "/models/m", Config: []byte(`{}`),
				BackendConfig: map[string]map[string]string{}, GPUs: []int{0}, HostPolicies: tc.policies, PipelineDepth: 5,
				CUDADriver: "libcuda.so.1", CUDAPoolBytes: map[int]uint64{0: 1 << 20, 1: 0}, PinnedPoolBytes: 1 << 22}
			e := wire.NewEncoder(nil)
			sent.encode(e)
			d := wire.NewDecoder(e.Bytes())
			if kind, _ := readHeader(d); kind != msgLoad {
				t.Fatalf("kind %d, want the load message", kind)
			}
			var got loadMsg
			got.decode(d)
			if err := d.Done(); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.HostPolicies, tc.policies) {
				t.Errorf("host policies %+v, want %+v", got.HostPolicies, tc.policies)
			}
			if got.Name != sent.Name || got.Version != sent.Version || got.Dir != sent.Dir {
				t.Errorf("read back %q %d %q", got.Name, got.Version, got.Dir)
			}
			if got.PipelineDepth != sent.PipelineDepth || got.CUDADriver != sent.CUDADriver || got.PinnedPoolBytes != sent.PinnedPoolBytes ||
				!reflect.DeepEqual(got.CUDAPoolBytes, sent.CUDAPoolBytes) {
				t.Errorf("read back depth %d, driver %q, pools %v and %d", got.PipelineDepth, got.CUDADriver, got.CUDAPoolBytes, got.PinnedPoolBytes)
			}
		})
	}
}
