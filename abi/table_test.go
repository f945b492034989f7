package abi

import (
	"sync"
	"testing"
)

func TestSlotTable(t *testing.T) {
	type step struct {
		op   string // add, get, take
		obj  int    // add: the object; get, take: the object of the key added at step key
		key  int    // get, take: the step whose key to use
		want int    // get, take: the object found, -1 for none
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"a key finds its object", []step{
			{op: "add", obj: 1}, {op: "get", key: 0, want: 1}, {op: "take", key: 0, want: 1}}},
		{"a taken key finds nothing", []step{
			{op: "add", obj: 1}, {op: "take", key: 0, want: 1}, {op: "get", key: 0, want: -1}, {op: "take", key: 0, want: -1}}},
		{"a reused slot does not answer its old key", []step{
			{op: "add", obj: 1}, {op: "take", key: 0, want: 1}, {op: "add", obj: 2},
			{op: "get", key: 0, want: -1}, {op: "take", key: 0, want: -1}, {op: "get", key: 2, want: 2}}},
		{"keys of live objects are distinct", []step{
			{op: "add", obj: 1}, {op: "add", obj: 2}, {op: "get", key: 0, want: 1}, {op: "get", key: 1, want: 2}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var tb slotTable[int]
			keys := make([]uint64, len(tc.steps))
			for i, s := range tc.steps {
				var got *int
				switch s.op {
				case "add":
					v := s.obj
					keys[i] = tb.add(&v)
					if keys[i] == 0 {
						t.Fatalf("step %d: add returned key 0", i)
					}
					continue
				case "get":
					got = tb.get(keys[s.key])
				case "take":
					got = tb.take(keys[s.key])
				}
				switch {
				case s.want < 0 && got != nil:
					t.Errorf("step %d: %s found %d, want nothing", i, s.op, *got)
				case s.want >= 0 && (got == nil || *got != s.want):
					t.Errorf("step %d: %s found %v, want %d", i, s.op, got, s.want)
				}
			}
		})
	}
	t.Run("unknown keys find nothing", func(t *testing.T) {
		var tb slotTable[int]
		for _, k := range []uint64{0, 1, 1 << 32, 1<<32 | 5000} {
			if got := tb.get(k); got != nil {
				t.Errorf("get(%#x) on an empty table = %d", k, *got)
			}
			if got := tb.take(k); got != nil {
				t.Errorf("take(%#x) on an empty table = %d", k, *got)
			}
		}
	})
}

// TestSlotTableGrowsAndCounts adds more objects than one chunk holds, from
// several goroutines, and finds each by its key while others come and go.
func TestSlotTableGrowsAndCounts(t *testing.T) {
	const workers, each = 4, 1500
	var tb slotTable[int]
	var wg sync.WaitGroup
	errs := make(chan string, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keys := make([]uint64, each)
			vals := make([]int, each)
			for i := range each {
				vals[i] = w*each + i
				keys[i] = tb.add(&vals[i])
			}
			for i := range each {
				if got := tb.get(keys[i]); got == nil || *got != vals[i] {
					errs <- "get found the wrong object"
					return
				}
			}
			for i := range each {
				if got := tb.take(keys[i]); got == nil || *got != vals[i] {
					errs <- "take found the wrong object"
					return
				}
				if got := tb.get(keys[i]); got != nil {
					errs <- "a taken key still finds its object"
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if n := tb.len(); n != 0 {
		t.Errorf("len = %d after every object was taken, want 0", n)
	}
}

// BenchmarkTableGet compares a lookup in the request table (slotTable)
// with one in a sync.Map keyed the same way (table).
func BenchmarkTableGet(b *testing.B) {
	const live = 256
	b.Run("slotTable", func(b *testing.B) {
		var tb slotTable[int]
		keys := make([]uint64, live)
		for i := range keys {
			v := i
			keys[i] = tb.add(&v)
		}
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				if tb.get(keys[i%live]) == nil {
					b.Error("missing")
				}
				i++
			}
		})
	})
	b.Run("sync.Map", func(b *testing.B) {
		var tb table[*int]
		keys := make([]uint64, live)
		for i := range keys {
			v := i
			keys[i] = tb.add(&v)
		}
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				if _, ok := tb.get(keys[i%live]); !ok {
					b.Error("missing")
				}
				i++
			}
		})
	})
}
