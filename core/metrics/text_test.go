package metrics

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestWriteTextFormatsFamilies(t *testing.T) {
	tests := []struct {
		name     string
		families []FamilySnapshot
		want     string
	}{
		{
			name: "counter without labels",
			families: []FamilySnapshot{{Name: "requests_total", Help: "Requests.", Kind: KindCounter,
				Series: []SeriesSnapshot{{Sample: Sample{Value: 3}}}}},
			want: "# HELP requests_total Requests.\n# TYPE requests_total counter\nrequests_total 3\n",
		},
		{
			name: "empty help leaves out the HELP line",
			families: []FamilySnapshot{{Name: "g", Kind: KindGauge,
				Series: []SeriesSnapshot{{Sample: Sample{Value: -1.5}}}}},
			want: "# TYPE g gauge\ng -1.5\n",
		},
		{
			name: "help escapes backslash and line feed but not quotes",
			families: []FamilySnapshot{{Name: "g", Help: "a \\ b\nc \"d\"", Kind: KindGauge,
				Series: []SeriesSnapshot{{Sample: Sample{Value: 0}}}}},
			want: "# HELP g a \\\\ b\\nc \"d\"\n# TYPE g gauge\ng 0\n",
		},
		{
			name: "label values escape backslash, quote and line feed",
			families: []FamilySnapshot{{Name: "g", Kind: KindGauge, Series: []SeriesSnapshot{{
				Labels: []Label{{"a", `C:\dir`}, {"b", `say "hi"`}, {"c", "two\nlines"}, {"d", ""}},
				Sample: Sample{Value: 1}}}}},
			want: "# TYPE g gauge\n" + `g{a="C:\\dir",b="say \"hi\"",c="two\nlines",d=""} 1` + "\n",
		},
		{
			name: "special values",
			families: []FamilySnapshot{{Name: "g", Kind: KindGauge, Series: []SeriesSnapshot{
				{Labels: []Label{{"v", "a"}}, Sample: Sample{Value: math.Inf(1)}},
				{Labels: []Label{{"v", "b"}}, Sample: Sample{Value: math.Inf(-1)}},
				{Labels: []Label{{"v", "c"}}, Sample: Sample{Value: math.NaN()}},
				{Labels: []Label{{"v", "d"}}, Sample: Sample{Value: 1e21}},
				{Labels: []Label{{"v", "e"}}, Sample: Sample{Value: 0.1}},
			}}},
			want: "# TYPE g gauge\n" +
				"g{v=\"a\"} +Inf\ng{v=\"b\"} -Inf\ng{v=\"c\"} NaN\ng{v=\"d\"} 1e+21\ng{v=\"e\"} 0.1\n",
		},
		{
			name: "histogram buckets are cumulative and end with +Inf",
			families: []FamilySnapshot{{Name: "lat", Help: "Latency.", Kind: KindHistogram, Series: []SeriesSnapshot{{
				Labels: []Label{{"model", "m"}},
				Sample: Sample{Bounds: []float64{0.5, 1, 2.5}, Counts: []uint64{1, 0, 2, 3}, Sum: 17.25}}}}},
			want: "# HELP lat Latency.\n# TYPE lat histogram\n" +
				"lat_bucket{model=\"m\",le=\"0.5\"} 1\n" +
				"lat_bucket{model=\"m\",le=\"1\"} 1\n" +
				"lat_bucket{model=\"m\",le=\"2.5\"} 3\n" +
				"lat_bucket{model=\"m\",le=\"+Inf\"} 6\n" +
				"lat_sum{model=\"m\"} 17.25\n" +
				"lat_count{model=\"m\"} 6\n",
		},
		{
			name: "histogram without labels or bounds",
			families: []FamilySnapshot{{Name: "h", Kind: KindHistogram, Series: []SeriesSnapshot{{
				Sample: Sample{Counts: []uint64{0}}}}}},
			want: "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 0\nh_sum 0\nh_count 0\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := WriteText(&b, tt.families); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", b.String(), tt.want)
			}
		})
	}
}

func TestWriteTextRefusesHistogramWithWrongCounts(t *testing.T) {
	err := WriteText(&strings.Builder{}, []FamilySnapshot{{Name: "h", Kind: KindHistogram,
		Series: []SeriesSnapshot{{Sample: Sample{Bounds: []float64{1}, Counts: []uint64{1}}}}}})
	if err == nil {
		t.Fatal("WriteText accepted 1 count for 1 bound")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("closed") }

func TestWriteTextReturnsWriteErrors(t *testing.T) {
	r := NewRegistry()
	f, _ := r.Register("g", "", KindGauge)
	var g Gauge
	if _, err := f.Add(nil, func() (Collector, error) { return &g, nil }); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteText(failingWriter{}); err == nil {
		t.Fatal("WriteText to a failing writer returned nil")
	}
}

func TestRegistryWriteTextSortsFamiliesSeriesAndLabels(t *testing.T) {
	r := NewRegistry()
	b, _ := r.Register("b_total", "B.", KindCounter)
	a, _ := r.Register("a", "A.", KindGauge)
	empty, _ := r.Register("empty", "No series.", KindGauge)
	_ = empty
	var c1, c2 Counter
	c1.Add(1)
	c2.Add(2)
	var g Gauge
	g.Set(7)
	mustAdd(t, b, []Label{{"z", "1"}, {"model", "y"}}, &c2)
	mustAdd(t, b, []Label{{"model", "x"}, {"z", "2"}}, &c1)
	mustAdd(t, a, nil, &g)
	var out strings.Builder
	if err := r.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	want := "# HELP a A.\n# TYPE a gauge\na 7\n" +
		"# HELP b_total B.\n# TYPE b_total counter\n" +
		"b_total{model=\"x\",z=\"2\"} 1\nb_total{model=\"y\",z=\"1\"} 2\n"
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}

func mustAdd(t *testing.T, f *Family, labels []Label, c Collector) *Series {
	t.Helper()
	s, err := f.Add(labels, func() (Collector, error) { return c, nil })
	if err != nil {
		t.Fatalf("Add(%v): %v", labels, err)
	}
	return s
}
