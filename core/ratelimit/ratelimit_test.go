package ratelimit

import (
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"

	"github.com/tritonhost/tritonhost/core/configpb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// need is one resource of a rate_limiter configuration.
type need struct {
	name   string
	count  uint32
	global bool
}

func limiterConfig(priority uint32, needs ...need) *configpb.ModelRateLimiter {
	cfg := &configpb.ModelRateLimiter{Priority: priority}
	for _, n := range needs {
		cfg.Resources = append(cfg.Resources, &configpb.ModelRateLimiter_Resource{Name: n.name, Count: n.count, Global: n.global})
	}
	return cfg
}

// instance is one registration: an instance on device with needs.
type instance struct {
	device int32
	needs  []need
}

// TestResourceCounts: the copies of each resource, by default the most any
// instance asks for, or as given; and the registrations refused, with
// Triton's texts. The first two cases are the examples of Triton's rate
// limiter documentation.
func TestResourceCounts(t *testing.T) {
	tests := []struct {
		name      string
		explicit  []Resource
		instances []instance
		want      map[string]uint64
		wantErr   string // of the last registration
	}{
		{name: "the most any instance asks for",
			instances: []instance{
				{0, []need{{"R1", 4, false}, {"R2", 4, false}}},
				{0, []need{{"R2", 5, false}, {"R3", 10, false}, {"R4", 5, false}}},
				{0, []need{{"R1", 1, false}, {"R3", 7, false}, {"R4", 2, false}}},
			},
			want: map[string]uint64{"R1@0": 4, "R2@0": 5, "R3@0": 10, "R4@0": 5}},
		{name: "given per device, for a device, and global",
			explicit: []Resource{{"R1", 10, EveryDevice}, {"R2", 5, 0}, {"R2", 8, 1}, {"R3", 2, EveryDevice}},
			instances: []instance{
				{0, []need{{"R1", 1, false}, {"R2", 1, false}, {"R3", 1, true}}},
				{1, []need{{"R1", 1, false}, {"R2", 1, false}}},
			},
			want: map[string]uint64{"R1@0": 10, "R1@1": 10, "R2@0": 5, "R2@1": 8, "R3": 2}},
		{name: "a resource given twice for a device keeps the smaller count",
			explicit:  []Resource{{"R", 3, EveryDevice}, {"R", 2, EveryDevice}},
			instances: []instance{{0, []need{{"R", 1, false}}}},
			want:      map[string]uint64{"R@0": 2}},
		{name: "a device's own count and every device's: the larger",
			explicit:  []Resource{{"R", 3, EveryDevice}, {"R", 5, 0}},
			instances: []instance{{0, []need{{"R", 1, false}}}},
			want:      map[string]uint64{"R@0": 5}},
		{name: "a global resource takes the largest count given for its name",
			explicit:  []Resource{{"G", 1, 0}, {"G", 4, 3}},
			instances: []instance{{0, []need{{"G", 2, true}}}},
			want:      map[string]uint64{"G": 4}},
		{name: "more than given",
			explicit:  []Resource{{"R", 1, EveryDevice}},
			instances: []instance{{0, []need{{"R", 2, false}}}},
			wantErr:   `Resource count for "R" is limited to 1 which will prevent scheduling of one or more model instances, the minimum required count is 2`},
		{name: "not given when others are: none",
			explicit:  []Resource{{"other", 1, EveryDevice}},
			instances: []instance{{0, []need{{"R", 1, false}}}},
			wantErr:   `Resource count for "R" is limited to 0 which will prevent scheduling of one or more model instances, the minimum required count is 1`},
		{name: "given for another device only",
			explicit:  []Resource{{"R", 4, 1}},
			instances: []instance{{0, []need{{"R", 1, false}}}},
			wantErr:   `Resource count for "R" is limited to 0 which will prevent scheduling of one or more model instances, the minimum required count is 1`},
		{name: "both global and per device",
			instances: []instance{{0, []need{{"R", 1, true}}}, {0, []need{{"R", 1, false}}}},
			wantErr:   `Resource "R" is present as both global and device-specific resource in the model configuration.`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := New(tc.explicit)
			if err != nil {
				t.Fatal(err)
			}
			var err2 error
			for i, in := range tc.instances {
				_, err2 = l.Register(in.device, limiterConfig(1, in.needs...))
				if err2 != nil && i < len(tc.instances)-1 {
					t.Fatalf("registration %d: %v", i, err2)
				}
			}
			if tc.wantErr != "" {
				if err2 == nil || err2.Error() != tc.wantErr {
					t.Fatalf("got %v, want %q", err2, tc.wantErr)
				}
				if n := len(l.slots); n != len(tc.instances)-1 {
					t.Errorf("%d slot(s) registered after the refusal, want %d", n, len(tc.instances)-1)
				}
				return
			}
			if err2 != nil {
				t.Fatal(err2)
			}
			if got := l.Available(); !maps.Equal(got, tc.want) {
				t.Errorf("available %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNewRefusesBadResources(t *testing.T) {
	for _, tc := range []struct {
		r    Resource
		want string
	}{
		{Resource{"", 1, 0}, "the name is empty"},
		{Resource{"R", 1, -2}, "device -2 is not a device id"},
	} {
		if _, err := New([]Resource{tc.r}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v): %v, want %q", tc.r, err, tc.want)
		}
	}
}

// TestUnregisterRecounts: an instance that goes takes its count with it.
func TestUnregisterRecounts(t *testing.T) {
	l, _ := New(nil)
	big, err := l.Register(0, limiterConfig(1, need{"R", 4, false}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Register(0, limiterConfig(1, need{"R", 1, false})); err != nil {
		t.Fatal(err)
	}
	big.Unregister()
	big.Unregister() // a second time does nothing
	if got := l.Available(); got["R@0"] != 1 {
		t.Errorf("after the instance asking for 4 left: %v, want R@0 = 1", got)
	}
}

// TestGrantOrder: the waiting instances are served by scaled priority
// (executions times priority), then in the order they began to wait, and
// only the first may take resources.
func TestGrantOrder(t *testing.T) {
	l, _ := New(nil)
	reg := func(priority uint32, needs ...need) *Slot {
		t.Helper()
		s, err := l.Register(0, limiterConfig(priority, needs...))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	r := need{"R", 1, false}
	holder := reg(1, r)
	a := reg(1, r)
	b := reg(3, r)
	c := reg(1, r)
	free := reg(1) // needs nothing
	run := func(s *Slot, n int) {
		for range n {
			s.Acquire()
			s.Release()
		}
	}
	run(a, 2) // scaled priority 2*1 = 2
	run(b, 1) // 1*3 = 3
	run(c, 2) // 2*1 = 2, but waits after a
	holder.Acquire()

	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	wait := func(name string, s *Slot, waiting int) {
		wg.Go(func() {
			s.Acquire()
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			s.Release()
		})
		testenv.WaitUntil(t, name+" to wait", func() bool { return l.Waiting() == waiting })
	}
	wait("b", b, 1)
	wait("a", a, 2)
	wait("c", c, 3)
	// free needs nothing, but its score (0) puts it first: it goes at once.
	free.Acquire()
	free.Release()
	if got := l.Waiting(); got != 3 {
		t.Fatalf("%d waiting, want 3", got)
	}
	holder.Release()
	wg.Wait()
	if got := fmt.Sprint(order); got != "[a c b]" {
		t.Errorf("served %s, want [a c b]", got)
	}
}

// TestHeadOfLineWaits: an instance that needs nothing taken still waits
// behind the first waiting instance, as Triton's allocation only ever
// tries the first.
func TestHeadOfLineWaits(t *testing.T) {
	l, _ := New(nil)
	r := need{"R", 1, false}
	holder, _ := l.Register(0, limiterConfig(1, r))
	first, _ := l.Register(0, limiterConfig(1, r))
	other, _ := l.Register(0, limiterConfig(1))
	holder.Acquire()
	var wg sync.WaitGroup
	wg.Go(func() { first.Acquire(); first.Release() })
	testenv.WaitUntil(t, "the first to wait", func() bool { return l.Waiting() == 1 })
	got := make(chan struct{})
	wg.Go(func() { other.Acquire(); close(got); other.Release() })
	testenv.WaitUntil(t, "the other to wait", func() bool { return l.Waiting() == 2 })
	select {
	case <-got:
		t.Fatal("an instance behind the first took its resources")
	default:
	}
	holder.Release()
	wg.Wait()
}
