package core

import (
	"sort"
	"sync"
)

// MemoryType is where memory lives, numbered as TRITONSERVER_MemoryType.
type MemoryType int

// Memory types.
const (
	MemoryCPU       MemoryType = 0
	MemoryCPUPinned MemoryType = 1
	MemoryGPU       MemoryType = 2
)

// String returns the name Triton's statistics use ("CPU", "CPU_PINNED", "GPU").
func (t MemoryType) String() string {
	switch t {
	case MemoryCPU:
		return "CPU"
	case MemoryCPUPinned:
		return "CPU_PINNED"
	case MemoryGPU:
		return "GPU"
	}
	return "<invalid>"
}

// MemoryUsage is memory a model or instance reports holding, of one type
// and device.
type MemoryUsage struct {
	Type     MemoryType
	ID       int64
	ByteSize uint64
}

// memoryUsage keeps the latest report of each model and instance.
type memoryUsage struct {
	mu      sync.Mutex
	reports map[any][]MemoryUsage
}

func (u *memoryUsage) set(owner any, usage []MemoryUsage) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.reports == nil {
		u.reports = map[any][]MemoryUsage{}
	}
	u.reports[owner] = append([]MemoryUsage(nil), usage...)
}

// total sums the reports by memory type and device, ordered by both.
func (u *memoryUsage) total() []MemoryUsage {
	u.mu.Lock()
	defer u.mu.Unlock()
	type key struct {
		t  MemoryType
		id int64
	}
	sums := map[key]uint64{}
	for _, usage := range u.reports {
		for _, e := range usage {
			sums[key{e.Type, e.ID}] += e.ByteSize
		}
	}
	out := make([]MemoryUsage, 0, len(sums))
	for k, n := range sums {
		out = append(out, MemoryUsage{Type: k.t, ID: k.id, ByteSize: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Type != out[j].Type {
			return out[i].Type < out[j].Type
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// ReportMemoryUsage records the memory the model holds outside its
// instances (replacing its previous report).
func (m *Model) ReportMemoryUsage(usage []MemoryUsage) { m.memory.set(m, usage) }

// ReportMemoryUsage records the memory the instance holds (replacing its
// previous report).
func (i *Instance) ReportMemoryUsage(usage []MemoryUsage) { i.model.memory.set(i, usage) }
