package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseRange(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want []float64
		err  string
	}{
		{"4", []float64{4}, ""},
		{"1:4", []float64{1, 2, 3, 4}, ""},
		{"1:16:5", []float64{1, 6, 11, 16}, ""},
		{"100:300:100", []float64{100, 200, 300}, ""},
		{"0", nil, "not a positive number"},
		{"4:1", nil, "END is below START"},
		{"1:2:3:4", nil, "want START"},
		{"1:100000", nil, "more than 1000 levels"},
		{"x", nil, "not a positive number"},
	} {
		got, err := parseRange(tc.spec)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseRange(%q) = %v, %v; want an error with %q", tc.spec, got, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("parseRange(%q) = %v, %v; want %v", tc.spec, got, err, tc.want)
		}
	}
}

// readPerfCSV runs perf with opts against s and returns its CSV rows.
func runPerf(t *testing.T, o *perfOptions) (string, [][]string) {
	t.Helper()
	o.CSV = filepath.Join(t.TempDir(), "perf.csv")
	o.NoProgress = true
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	var out, progress bytes.Buffer
	if err := o.Run(context.Background(), &out, &progress); err != nil {
		t.Fatalf("perf: %v\n%s%s", err, out.String(), progress.String())
	}
	f, err := os.Open(o.CSV)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), rows
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	n, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return n
}

// TestPerfMeasuresUnaryAndDecoupledModels: perf against the real server
// reports, per level, completed requests without errors, and for square
// on a stream exactly k responses per request.
func TestPerfMeasuresUnaryAndDecoupledModels(t *testing.T) {
	s := startServer(t, "")
	base := perfOptions{URL: s.addr, Protocol: "grpc", Mode: "auto", IntervalMs: 400, WarmupMs: 100, MaxOutstanding: 64, ConcurrencyRange: "1"}

	o := base
	o.Model, o.Shapes, o.ConcurrencyRange = "identity_int32", []string{"INPUT0:16"}, "1:3:2"
	table, rows := runPerf(t, &o)
	if len(rows) != 3 || !strings.Contains(table, "unary") {
		t.Fatalf("identity: %d CSV rows (want a header and 2 levels)\n%s", len(rows), table)
	}
	for _, r := range rows[1:] {
		if num(t, r[3]) == 0 || r[5] != "0" || r[3] != r[4] {
			t.Errorf("identity at concurrency %s: %s requests, %s responses, %s errors", r[0], r[3], r[4], r[5])
		}
	}

	o = base
	o.Model, o.Inputs = "square_int32", []string{"IN:INT32:1:7"}
	table, rows = runPerf(t, &o)
	if len(rows) != 2 || !strings.Contains(table, "stream") || !strings.Contains(table, "Responses/s") {
		t.Fatalf("square: %d CSV rows\n%s", len(rows), table)
	}
	if req, resp := num(t, rows[1][3]), num(t, rows[1][4]); req == 0 || resp != 7*req || rows[1][5] != "0" {
		t.Errorf("square k=7: %v requests, %v responses (want 7 each), %s errors", req, resp, rows[1][5])
	}

	o = base
	o.Model, o.Shapes, o.RateRange = "identity_int32", []string{"INPUT0:4"}, "200"
	_, rows = runPerf(t, &o)
	if got := num(t, rows[1][1]); got < 100 || got > 300 {
		t.Errorf("identity at 200 requests/s measured %v/s", got)
	}

	// HTTP/REST: the same counts, and the server's statistics read over
	// HTTP (queue and compute columns).
	o = base
	o.Protocol, o.URL = "http", s.http
	o.Model, o.Shapes, o.ConcurrencyRange = "identity_int32", []string{"INPUT0:16"}, "2"
	table, rows = runPerf(t, &o)
	if len(rows) != 2 || !strings.Contains(table, "http") {
		t.Fatalf("identity over HTTP: %d CSV rows\n%s", len(rows), table)
	}
	if r := rows[1]; num(t, r[3]) == 0 || r[5] != "0" || r[3] != r[4] || num(t, r[16])+num(t, r[17]) == 0 {
		t.Errorf("identity over HTTP: %s requests, %s responses, %s errors, server queue %s us, compute %s us", r[3], r[4], r[5], r[16], r[17])
	}
	o = base
	o.Protocol, o.URL, o.Model, o.Inputs = "http", "http://"+s.http, "square_int32", []string{"IN:INT32:1:7"}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := o.Run(context.Background(), &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "--protocol grpc") {
		t.Errorf("a decoupled model over HTTP: %v", err)
	}

	o = base
	o.Model = "identity_int32"
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	err := o.Run(context.Background(), &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "--shape INPUT0") {
		t.Errorf("a variable-dims input without --shape: %v", err)
	}
}
