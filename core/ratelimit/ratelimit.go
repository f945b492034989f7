// Package ratelimit is the server's rate limiter, as Triton's
// (--rate-limit=execution_count): it decides, across every model loaded,
// which model instance may execute next.
//
// Each active instance registers with the resources its instance_group's
// rate_limiter lists and its priority (Register). Before each execution
// the instance waits until the resources it lists are allocated to it
// (Slot.Acquire); they are released when the execution returns
// (Slot.Release). A resource is per device unless the configuration marks
// it global: a per-device resource is counted on the instance's device (a
// CPU or MODEL instance counts as device 0, as in Triton), a global one in
// one pool for the whole server.
//
// How many copies of a resource there are: by default, the largest count
// any registered instance asks for, recomputed as instances register and
// unregister (models load and unload), so that every instance can run. Once
// any resource is given explicitly (New's resources, the serve command's
// --rate-limit-resource), a resource not given counts 0 copies, and a
// registration that asks for more copies than there are is refused with
// Triton's text, as is a resource listed both as global and per device.
//
// The instances waiting for resources are served by scaled priority: the
// executions an instance has had so far times its priority (a priority of
// 0 counts as 1), lowest first, ties in the order they began to wait. Only
// the first in that order may take resources, as in Triton's rate limiter:
// while it waits for a resource that is taken, the instances behind it
// wait too, even those that need nothing that is taken. (So an instance
// whose execution waits, inside the backend, for a request to another
// model that is rate limited can hold up every instance: such models are
// better left without resources.)
//
// All methods are safe for concurrent use. The Limiter holds no goroutine;
// a waiting instance waits on its own goroutine.
package ratelimit

import (
	"cmp"
	"container/heap"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"sync"

	"github.com/tritonhost/tritonhost/core/configpb"
)

// EveryDevice is the Device of a Resource that every device has that many
// copies of (Triton's per-device resource, --rate-limit-resource
// <name>:<count> without a device).
const EveryDevice = -1

// globalDevice is the device key of a global resource.
const globalDevice = -2

// Resource is a count of copies of a resource, given explicitly: on one
// device, or on every device (EveryDevice). A resource that a model
// configuration marks global takes the largest count given for its name,
// whatever the device.
type Resource struct {
	Name   string
	Count  uint64
	Device int
}

// key is one pool of copies: a resource on a device, or a global one
// (device globalDevice).
type key struct {
	device int
	name   string
}

// Limiter is the server's rate limiter. Create it with New.
type Limiter struct {
	mu sync.Mutex
	// explicit holds the counts given, by device (EveryDevice: every
	// device) and name; nil when none was given.
	explicit  map[int]map[string]uint64
	slots     map[*Slot]struct{}
	available map[key]uint64 // copies of each pool the registered instances use
	allocated map[key]uint64 // copies held by executing instances
	waiting   waitQueue      // the instances waiting for their resources
	arrivals  uint64         // numbers the waits, for ties
}

// New returns a limiter with the given resource counts (none: each
// resource has as many copies as the largest count an instance asks for).
// A resource given twice for one device keeps the smaller count, as
// Triton's TRITONSERVER_ServerOptionsAddRateLimiterResource does.
func New(resources []Resource) (*Limiter, error) {
	l := &Limiter{slots: map[*Slot]struct{}{}, available: map[key]uint64{}, allocated: map[key]uint64{}}
	for _, r := range resources {
		if err := r.check(); err != nil {
			return nil, err
		}
		if l.explicit == nil {
			l.explicit = map[int]map[string]uint64{}
		}
		byName := l.explicit[r.Device]
		if byName == nil {
			byName = map[string]uint64{}
			l.explicit[r.Device] = byName
		}
		if n, ok := byName[r.Name]; !ok || r.Count < n {
			byName[r.Name] = r.Count
		}
	}
	return l, nil
}

// check refuses a resource without a name or with a device below
// EveryDevice.
func (r Resource) check() error {
	switch {
	case r.Name == "":
		return fmt.Errorf("rate limiter resource: the name is empty")
	case r.Device < EveryDevice:
		return fmt.Errorf("rate limiter resource %q: device %d is not a device id (or %d for every device)", r.Name, r.Device, EveryDevice)
	}
	return nil
}

// Slot is one instance registered with a limiter. Its owner, the instance,
// calls Acquire and Release around each execution, never two executions
// at once, and Unregister once it executes no more.
type Slot struct {
	l        *Limiter
	needs    map[key]uint64
	priority uint64
	granted  chan struct{} // capacity 1: the resources were allocated to the waiting Acquire

	// Guarded by l.mu.
	execs      uint64 // executions released so far
	scoreHi    uint64 // execs * priority, as 128 bits, while waiting
	scoreLo    uint64
	arrival    uint64 // when it began to wait, for ties
	index      int    // in l.waiting while waiting
	registered bool
}

// Register adds an active instance on device (0 for CPU and MODEL
// instances) whose instance_group's rate_limiter is cfg (nil: no resources,
// priority 1). It fails, registering nothing, when the instance needs more
// copies of a resource than were given explicitly, or when a resource
// would be both global and per device; the errors carry Triton's text.
func (l *Limiter) Register(device int32, cfg *configpb.ModelRateLimiter) (*Slot, error) {
	s := &Slot{l: l, needs: map[key]uint64{}, priority: uint64(max(cfg.GetPriority(), 1)), granted: make(chan struct{}, 1), index: -1}
	for _, r := range cfg.GetResources() {
		k := key{device: int(device), name: r.GetName()}
		if r.GetGlobal() {
			k.device = globalDevice
		}
		s.needs[k] = uint64(r.GetCount())
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.slots[s] = struct{}{}
	if err := l.updateLocked(); err != nil {
		delete(l.slots, s)
		return nil, err
	}
	s.registered = true
	l.grantLocked()
	return s, nil
}

// Unregister removes the slot's instance, which no longer executes; the
// copies of its resources are counted again without it. Calling it twice
// does nothing.
func (s *Slot) Unregister() {
	l := s.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if !s.registered {
		return
	}
	s.registered = false
	delete(l.slots, s)
	// Without an instance no limit tightens and no resource gains a
	// second kind: the counts that held before hold still.
	_ = l.updateLocked()
	l.grantLocked()
}

// Acquire waits until the slot's instance is first among the waiting
// instances and every resource it lists has the copies it needs free, and
// allocates them to it. The caller then executes and calls Release.
func (s *Slot) Acquire() {
	l := s.l
	l.mu.Lock()
	s.scoreHi, s.scoreLo = bits.Mul64(s.execs, s.priority)
	s.arrival = l.arrivals
	l.arrivals++
	heap.Push(&l.waiting, s)
	l.grantLocked()
	l.mu.Unlock()
	<-s.granted
}

// Release gives back the copies Acquire allocated, once the execution
// returned, and counts the execution.
func (s *Slot) Release() {
	l := s.l
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, n := range s.needs {
		l.allocated[k] -= n
	}
	s.execs++
	l.grantLocked()
}

// Waiting returns how many instances wait for their resources.
func (l *Limiter) Waiting() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waiting.Len()
}

// Available returns the copies of each resource there are, as
// "<name>" for a global resource and "<name>@<device>" for a per-device
// one, for the resources the registered instances use.
func (l *Limiter) Available() map[string]uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]uint64, len(l.available))
	for k, n := range l.available {
		out[k.String()] = n
	}
	return out
}

// String names the pool: "<name>" when global, else "<name>@<device>".
func (k key) String() string {
	if k.device == globalDevice {
		return k.name
	}
	return fmt.Sprintf("%s@%d", k.name, k.device)
}

// grantLocked allocates their resources to the first waiting instances,
// in order, as long as the first one's fit.
func (l *Limiter) grantLocked() {
	for l.waiting.Len() > 0 {
		s := l.waiting[0]
		if !l.fitsLocked(s) {
			return
		}
		heap.Pop(&l.waiting)
		for k, n := range s.needs {
			l.allocated[k] += n
		}
		s.granted <- struct{}{}
	}
}

func (l *Limiter) fitsLocked(s *Slot) bool {
	for k, n := range s.needs {
		if l.allocated[k]+n > l.available[k] {
			return false
		}
	}
	return true
}

// updateLocked recomputes the copies of each resource the registered
// instances use, as Triton's ResourceManager::UpdateResourceLimits: the
// largest count asked for, or the count given explicitly (0 when none
// was), which must cover every instance's; and no resource may be both
// global and per device. On error nothing changes.
func (l *Limiter) updateLocked() error {
	most := map[key]uint64{}
	for s := range l.slots {
		for k, n := range s.needs {
			most[k] = max(most[k], n)
		}
	}
	keys := make([]key, 0, len(most))
	for k := range most {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.device, b.device), strings.Compare(a.name, b.name))
	})
	if l.explicit != nil {
		for _, k := range keys {
			have := l.explicitCount(k)
			if have < most[k] {
				return fmt.Errorf("Resource count for \"%s\" is limited to %d which will prevent scheduling of one or more model instances, the minimum required count is %d",
					k.name, have, most[k])
			}
			most[k] = have
		}
	}
	for _, g := range keys {
		if g.device != globalDevice {
			continue
		}
		for _, d := range keys {
			if d.device != globalDevice && d.name == g.name {
				return fmt.Errorf("Resource \"%s\" is present as both global and device-specific resource in the model configuration.", d.name)
			}
		}
	}
	l.available = most
	return nil
}

// explicitCount is the count given for pool k: for a global resource the
// largest given for its name on any device; for a device's, the largest
// given for that device or for every device; 0 when none was given.
func (l *Limiter) explicitCount(k key) uint64 {
	var n uint64
	if k.device == globalDevice {
		for _, byName := range l.explicit {
			n = max(n, byName[k.name])
		}
		return n
	}
	return max(l.explicit[k.device][k.name], l.explicit[EveryDevice][k.name])
}

// waitQueue orders the waiting slots by scaled priority, lowest first,
// then by arrival (container/heap's interface).
type waitQueue []*Slot

func (q waitQueue) Len() int { return len(q) }

func (q waitQueue) Less(i, j int) bool {
	a, b := q[i], q[j]
	if a.scoreHi != b.scoreHi {
		return a.scoreHi < b.scoreHi
	}
	if a.scoreLo != b.scoreLo {
		return a.scoreLo < b.scoreLo
	}
	return a.arrival < b.arrival
}

func (q waitQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}

func (q *waitQueue) Push(x any) {
	s := x.(*Slot)
	s.index = len(*q)
	*q = append(*q, s)
}

func (q *waitQueue) Pop() any {
	old := *q
	s := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	s.index = -1
	return s
}
