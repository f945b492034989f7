package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"os"
	"os/exec"
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
	// Stability is another test's subject: any 3 windows with requests do.
	base := perfOptions{URL: s.Addr, Protocol: "grpc", Mode: "auto", IntervalMs: 400, WarmupMs: 100, MaxOutstanding: 64, ConcurrencyRange: "1",
		Stability: 1e6, MaxTrials: 5, Percentile: -1}

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
	o.Protocol, o.URL = "http", s.HTTP
	o.Model, o.Shapes, o.ConcurrencyRange = "identity_int32", []string{"INPUT0:16"}, "2"
	table, rows = runPerf(t, &o)
	if len(rows) != 2 || !strings.Contains(table, "http") {
		t.Fatalf("identity over HTTP: %d CSV rows\n%s", len(rows), table)
	}
	if r := rows[1]; num(t, r[3]) == 0 || r[5] != "0" || r[3] != r[4] || num(t, r[16])+num(t, r[17]) == 0 {
		t.Errorf("identity over HTTP: %s requests, %s responses, %s errors, server queue %s us, compute %s us", r[3], r[4], r[5], r[16], r[17])
	}
	o = base
	o.Protocol, o.URL, o.Model, o.Inputs = "http", "http://"+s.HTTP, "square_int32", []string{"IN:INT32:1:7"}
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

// TestPerfReportsServerQueueAndComputeForEveryModel: `tritonhost perf`
// (the binary) drives each example model and its CSV shows the server's
// queue and compute time per request, which come from the statistics the
// model's backend reports, and the windows it measured.
func TestPerfReportsServerQueueAndComputeForEveryModel(t *testing.T) {
	s := startServer(t, "")
	for _, tc := range exampleTraffic {
		t.Run(tc.model, func(t *testing.T) {
			csvPath := filepath.Join(t.TempDir(), "perf.csv")
			args := append([]string{"perf", tc.model, "-u", s.Addr, "--no-progress", "--measurement-interval", "300",
				"--warmup", "100", "--stability-percentage", "1000000", "--max-trials", "5", "-f", csvPath}, tc.perf...)
			out, err := exec.Command(serverBinary, args...).CombinedOutput()
			if err != nil {
				t.Fatalf("tritonhost perf: %v\n%s", err, out)
			}
			f, err := os.Open(csvPath)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rows, err := csv.NewReader(f).ReadAll()
			if err != nil || len(rows) != 2 {
				t.Fatalf("CSV: %v %v\n%s", rows, err, out)
			}
			head, row := rows[0], rows[1]
			if head[16] != "Server Queue" || head[17] != "Server Compute Infer" || head[18] != "Windows" {
				t.Fatalf("CSV columns %v", head)
			}
			if num(t, row[3]) == 0 || row[5] != "0" || num(t, row[16]) <= 0 || num(t, row[17]) <= 0 || num(t, row[18]) < 3 {
				t.Errorf("%s: %s requests, %s errors, server queue %s us, compute %s us, %s windows; want requests without errors, queue and compute time, 3 windows or more\n%s",
					tc.model, row[3], row[5], row[16], row[17], row[18], out)
			}
		})
	}
}

// TestPerfSaysWhenItsWindowsDoNotSettle: windows that must agree exactly
// (--stability-percentage 0) never do; perf measures --max-trials of them,
// says so with what they measured, reports nothing and fails, as
// perf_analyzer does when its first level does not settle.
func TestPerfSaysWhenItsWindowsDoNotSettle(t *testing.T) {
	s := startServer(t, "")
	csvPath := filepath.Join(t.TempDir(), "perf.csv")
	cmd := exec.Command(serverBinary, "perf", "identity_int32", "-u", s.Addr, "--shape", "INPUT0:16", "--no-progress",
		"--measurement-interval", "150", "--warmup", "0", "-s", "0", "-r", "3", "-f", csvPath)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("perf with windows that cannot agree: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	for _, want := range []string{"concurrency 1: the measurements did not stabilize after 3 windows of 150 ms (the last 3: ",
		" infer/s; ", "us mean latency)", "no stable measurement"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
		}
	}
	if !strings.Contains(stdout.String(), "until 3 in a row are within 0% in throughput and mean latency (at most 3)") {
		t.Errorf("stdout does not state the rule:\n%s", stdout.String())
	}
	if _, err := os.Stat(csvPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a CSV file was written for a level that did not settle: %v", err)
	}
}

func TestPerfRefusesAStabilityRuleThatCannotHold(t *testing.T) {
	for _, tc := range []struct {
		o    perfOptions
		want string
	}{
		{perfOptions{Stability: 10, MaxTrials: 2, Percentile: -1}, "at most 2 windows cannot make 3 stable ones"},
		{perfOptions{Stability: -1, MaxTrials: 10, Percentile: -1}, "negative"},
		{perfOptions{Stability: 10, MaxTrials: 10, Percentile: 100}, "--percentile 100"},
		{perfOptions{Stability: 10, MaxTrials: 10, Percentile: 0}, "--percentile 0"},
	} {
		o := tc.o
		o.Protocol, o.Mode, o.IntervalMs, o.MaxOutstanding, o.ConcurrencyRange = "grpc", "auto", 100, 1, "1"
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error with %q", tc.o, err, tc.want)
		}
	}
}
