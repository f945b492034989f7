package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/loadgen"
)

// perfRow is one measured level: its stable windows together.
type perfRow struct {
	level          float64
	windows        int // measured in all, the stable ones last
	res            loadgen.Result
	queue, compute time.Duration // the server's, per request (0: unknown)
}

// serverTimes returns the server's mean queue and compute-infer time per
// successful request between two statistics snapshots of one model.
func serverTimes(before, after *pb.ModelStatisticsResponse) (queue, compute time.Duration) {
	sum := func(r *pb.ModelStatisticsResponse) (n, q, c uint64) {
		for _, m := range r.GetModelStats() {
			s := m.GetInferenceStats()
			n += s.GetSuccess().GetCount()
			q += s.GetQueue().GetNs()
			c += s.GetComputeInfer().GetNs()
		}
		return
	}
	n0, q0, c0 := sum(before)
	n1, q1, c1 := sum(after)
	if before == nil || after == nil || n1 <= n0 {
		return 0, 0
	}
	n := n1 - n0
	return time.Duration((q1 - q0) / n), time.Duration((c1 - c0) / n)
}

func us(d time.Duration) string { return strconv.FormatInt(d.Microseconds(), 10) }

// serverUs writes a server time per request in microseconds with the given
// decimals: the server's queue and compute times are often a few
// microseconds or less, which whole microseconds would round to nothing.
func serverUs(d time.Duration, decimals int) string {
	return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', decimals, 64)
}

func levelName(byRate bool) string {
	if byRate {
		return "Rate (req/s)"
	}
	return "Concurrency"
}

// writeTable prints the rows, latencies in microseconds.
func writeTable(w io.Writer, rows []perfRow, byRate, stream bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := levelName(byRate) + "\tInfer/s\t"
	if stream {
		header += "Responses/s\tp50 first (us)\t"
	}
	header += "p50 (us)\tp90 (us)\tp95 (us)\tp99 (us)\tAvg (us)\tServer queue (us)\tServer compute (us)\tErrors\tWindows\t"
	if byRate {
		header += "Delayed\t"
	}
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		l := r.res.Latency
		line := fmt.Sprintf("%g\t%.1f\t", r.level, r.res.Throughput())
		if stream {
			line += fmt.Sprintf("%.1f\t%s\t", r.res.ResponseRate(), us(r.res.FirstResponse.P50))
		}
		line += fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t", us(l.P50), us(l.P90), us(l.P95), us(l.P99), us(l.Mean), serverUs(r.queue, 1), serverUs(r.compute, 1), r.res.Errors, r.windows)
		if byRate {
			line += fmt.Sprintf("%d\t", r.res.Delayed)
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
}

// writeCSV writes the rows with every figure, latencies in microseconds
// (the server's to the nanosecond).
func writeCSV(w io.Writer, rows []perfRow, byRate bool) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{levelName(byRate), "Inferences/Second", "Responses/Second", "Requests", "Responses", "Errors", "Delayed",
		"p50 latency", "p90 latency", "p95 latency", "p99 latency", "Avg latency", "Min latency", "Max latency",
		"p50 first response", "p99 first response", "Server Queue", "Server Compute Infer", "Windows"})
	for _, r := range rows {
		res, l, f := r.res, r.res.Latency, r.res.FirstResponse
		_ = cw.Write([]string{strconv.FormatFloat(r.level, 'g', -1, 64),
			strconv.FormatFloat(res.Throughput(), 'f', 1, 64), strconv.FormatFloat(res.ResponseRate(), 'f', 1, 64),
			strconv.FormatInt(res.Requests, 10), strconv.FormatInt(res.Responses, 10), strconv.FormatInt(res.Errors, 10), strconv.FormatInt(res.Delayed, 10),
			us(l.P50), us(l.P90), us(l.P95), us(l.P99), us(l.Mean), us(l.Min), us(l.Max), us(f.P50), us(f.P99), serverUs(r.queue, 3), serverUs(r.compute, 3),
			strconv.Itoa(r.windows)})
	}
	cw.Flush()
	return cw.Error()
}
