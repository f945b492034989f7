package isolation

import (
	"reflect"
	"testing"
	"unsafe"

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

// TestExecuteInputsAreOwnedOutOfTheMessage: the inputs of an execute
// message that came without a region are copied out of the receive
// buffer (which the next message overwrites): small ones into the
// request's own room, one after the other, larger ones into memory of
// their own; none aliases the buffer after.
func TestExecuteInputsAreOwnedOutOfTheMessage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sizes  []int
		inRoom []bool
	}{
		{"one small", []int{16}, []bool{true}},
		{"two that fit", []int{40, 24}, []bool{true, true}},
		{"the second past the room", []int{40, 32}, []bool{true, false}},
		{"one large", []int{65}, []bool{false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := make([]byte, 256)
			for i := range msg {
				msg[i] = byte(i)
			}
			q := &executeReq{}
			off := 0
			for _, n := range tc.sizes {
				q.sub.Inputs = append(q.sub.Inputs, core.Input{Buffers: [][]byte{msg[off : off+n]}})
				off += n
			}
			q.ownInputs()
			want := make([]byte, 256)
			copy(want, msg)
			for i := range msg {
				msg[i] = 0xff // the next message
			}
			off = 0
			for j, n := range tc.sizes {
				b := q.sub.Inputs[j].Buffers[0]
				if string(b) != string(want[off:off+n]) {
					t.Errorf("input %d reads %v, want %v", j, b, want[off:off+n])
				}
				inRoom := uintptr(unsafe.Pointer(unsafe.SliceData(b))) >= uintptr(unsafe.Pointer(&q.small[0])) &&
					uintptr(unsafe.Pointer(unsafe.SliceData(b))) < uintptr(unsafe.Pointer(&q.small[0]))+uintptr(len(q.small))
				if inRoom != tc.inRoom[j] {
					t.Errorf("input %d of %d bytes in the request's room: %v, want %v", j, n, inRoom, tc.inRoom[j])
				}
				if inRoom && cap(b) != n {
					t.Errorf("input %d has capacity %d, want %d (an append must not reach the next)", j, cap(b), n)
				}
				off += n
			}
		})
	}
}
