package metrics

import (
	"math"
	"slices"
	"sync"
	"testing"
)

func TestRegisterSameNameAndKindSharesTheFamily(t *testing.T) {
	r := NewRegistry()
	f1, err := r.Register("x_total", "first", KindCounter)
	if err != nil {
		t.Fatal(err)
	}
	f2, err := r.Register("x_total", "second", KindCounter)
	if err != nil {
		t.Fatal(err)
	}
	if f1 != f2 || f2.Help() != "first" {
		t.Fatalf("second Register gave %p (help %q), want the first family %p", f2, f2.Help(), f1)
	}
	if _, err := r.Register("x_total", "", KindGauge); err == nil {
		t.Fatal("Register with another kind succeeded")
	}
	var c Counter
	mustAdd(t, f1, nil, &c)
	r.Unregister(f1)
	if got := r.Gather(); len(got) != 1 {
		t.Fatalf("after one of two Unregisters: %d families, want 1", len(got))
	}
	r.Unregister(f2)
	if got := r.Gather(); len(got) != 0 {
		t.Fatalf("after the last Unregister: %+v, want nothing", got)
	}
	f3, _ := r.Register("x_total", "third", KindGauge)
	if f3 == f1 || f3.Kind() != KindGauge {
		t.Fatal("Register after the last Unregister did not make a new family")
	}
	r.Unregister(f1) // stale: ignored
	if f, _ := r.Register("x_total", "", KindGauge); f != f3 {
		t.Fatal("a stale Unregister removed the new family")
	}
}

func TestRegisterRefusesBadNamesAndKinds(t *testing.T) {
	for _, tt := range []struct {
		name string
		kind Kind
	}{
		{"", KindCounter}, {"1abc", KindCounter}, {"a-b", KindGauge}, {"a b", KindGauge},
		{"__reserved", KindGauge}, {"é", KindGauge}, {"ok", Kind(3)}, {"ok", Kind(-1)},
	} {
		if _, err := NewRegistry().Register(tt.name, "", tt.kind); err == nil {
			t.Errorf("Register(%q, %v) succeeded", tt.name, tt.kind)
		}
	}
	for _, name := range []string{"a", "_a", "a:b_c9", ":x", "A_1"} {
		if _, err := NewRegistry().Register(name, "", KindGauge); err != nil {
			t.Errorf("Register(%q): %v", name, err)
		}
	}
}

func TestAddWithSameLabelsSharesTheSeries(t *testing.T) {
	r := NewRegistry()
	f, _ := r.Register("g", "", KindGauge)
	created := 0
	newGauge := func() (Collector, error) { created++; return &Gauge{}, nil }
	s1, err := f.Add([]Label{{"a", "1"}, {"b", "2"}}, newGauge)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := f.Add([]Label{{"b", "2"}, {"a", "1"}}, newGauge)
	if err != nil {
		t.Fatal(err)
	}
	s3, err := f.Add([]Label{{"a", "1"}}, newGauge)
	if err != nil {
		t.Fatal(err)
	}
	if s1 != s2 || s1 == s3 || created != 2 {
		t.Fatalf("s1=%p s2=%p s3=%p created=%d; want s1==s2, s3 new, 2 collectors", s1, s2, s3, created)
	}
	if got := s1.Labels(); !slices.Equal(got, []Label{{"a", "1"}, {"b", "2"}}) {
		t.Errorf("labels %v, want sorted by name", got)
	}
	if f.Remove(s1) {
		t.Error("Remove of the first of two references reported the last")
	}
	if !f.Remove(s2) {
		t.Error("Remove of the last reference did not report it")
	}
	if f.Remove(s2) {
		t.Error("Remove of a removed series reported the last again")
	}
	got := r.Gather()
	if len(got) != 1 || len(got[0].Series) != 1 || len(got[0].Series[0].Labels) != 1 {
		t.Fatalf("Gather after removing {a,b}: %+v, want only {a}", got)
	}
}

func TestAddRefusesBadLabels(t *testing.T) {
	r := NewRegistry()
	g, _ := r.Register("g", "", KindGauge)
	h, _ := r.Register("h", "", KindHistogram)
	for _, tt := range []struct {
		f      *Family
		labels []Label
	}{
		{g, []Label{{"", "x"}}},
		{g, []Label{{"__name__", "x"}}},
		{g, []Label{{"a:b", "x"}}},
		{g, []Label{{"9a", "x"}}},
		{g, []Label{{"a", "1"}, {"a", "2"}}},
		{h, []Label{{"le", "1"}}},
	} {
		_, err := tt.f.Add(tt.labels, func() (Collector, error) { return &Gauge{}, nil })
		if err == nil {
			t.Errorf("%s.Add(%v) succeeded", tt.f.Name(), tt.labels)
		}
	}
	if _, err := g.Add([]Label{{"le", "1"}}, func() (Collector, error) { return &Gauge{}, nil }); err != nil {
		t.Errorf("a gauge refused the label le: %v", err)
	}
}

func TestGoValues(t *testing.T) {
	var c Counter
	c.Add(1.5)
	c.Add(0)
	if c.Value() != 1.5 {
		t.Errorf("counter = %v", c.Value())
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Counter.Add(-1) did not panic")
			}
		}()
		c.Add(-1)
	}()
	var g Gauge
	g.Set(3)
	g.Add(-4.5)
	if g.Value() != -1.5 {
		t.Errorf("gauge = %v", g.Value())
	}
	h, err := NewHistogram([]float64{1, 2, math.Inf(1)})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{0.5, 1, 1.5, 2, 7} {
		h.Observe(v)
	}
	var s Sample
	h.Collect(&s)
	if !slices.Equal(s.Bounds, []float64{1, 2}) || !slices.Equal(s.Counts, []uint64{2, 2, 1}) || s.Sum != 12 {
		t.Errorf("histogram sample %+v, want bounds [1 2] (trailing +Inf dropped), counts [2 2 1], sum 12", s)
	}
	for _, bad := range [][]float64{{2, 1}, {1, 1}, {math.NaN()}, {1, math.NaN()}} {
		if _, err := NewHistogram(bad); err == nil {
			t.Errorf("NewHistogram(%v) succeeded", bad)
		}
	}
}

// Gathering while series come and go must be race-free, and a series whose
// last reference was removed must never be collected again.
func TestGatherWhileAddingAndRemoving(t *testing.T) {
	r := NewRegistry()
	f, _ := r.Register("g", "", KindGauge)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				_ = r.Gather()
			}
		}
	}()
	for i := range 2000 {
		var freed bool
		var mu sync.Mutex
		c := CollectorFunc(func(s *Sample) {
			mu.Lock()
			defer mu.Unlock()
			if freed {
				t.Error("collected a removed series")
			}
			s.Value = float64(i)
		})
		s, err := f.Add([]Label{{"i", "x"}}, func() (Collector, error) { return c, nil })
		if err != nil {
			t.Fatal(err)
		}
		if f.Remove(s) {
			mu.Lock()
			freed = true
			mu.Unlock()
		}
	}
	close(stop)
	wg.Wait()
}

func mustAdd(t *testing.T, f *Family, labels []Label, c Collector) *Series {
	t.Helper()
	s, err := f.Add(labels, func() (Collector, error) { return c, nil })
	if err != nil {
		t.Fatalf("Add(%v): %v", labels, err)
	}
	return s
}
