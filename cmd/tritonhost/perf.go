package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	pb "tritonhost/frontend/inferencepb"
	"tritonhost/loadgen"
)

// perfOptions are the perf command's flags; the names follow Triton's
// perf_analyzer where it has the same option.
type perfOptions struct {
	URL              string
	Protocol         string
	Model            string
	Version          int64
	Inputs           []string
	Shapes           []string
	Params           []string
	Mode             string
	ConcurrencyRange string
	RateRange        string
	MaxOutstanding   int
	IntervalMs       int
	WarmupMs         int
	CSV              string
	NoProgress       bool

	request *pb.ModelInferRequest
	levels  []float64
	byRate  bool
	stream  bool
}

func newPerfCommand() *cobra.Command {
	o := &perfOptions{}
	cmd := &cobra.Command{
		Use:   "perf MODEL [flags]",
		Short: "Measure a model's throughput and latency under load",
		Long: `Send one request to a model over and over, at each concurrency (requests
kept in flight) or request rate of a range, and report throughput, latency
percentiles and the server's queue and compute time per request; for
decoupled models (measured over a stream) also the time to the first
response and the responses per second.

Inputs come from --input (NAME:DATATYPE:SHAPE:VALUES, as for infer); any
input not given is made from the model's metadata, filled with zeros,
with --shape NAME:D1,D2 for dimensions the model leaves variable and a
batch of 1 for batching models.`,
		Example: `  tritonhost perf identity_int32 --shape INPUT0:16 --concurrency-range 1:16:2
  tritonhost perf square_int32 -i IN:INT32:1:100 --concurrency-range 1:4 -f square.csv
  tritonhost perf identity_fp32 --shape INPUT0:1,64 --request-rate-range 1000:5000:1000`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Model = args[0]
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.URL, "url", "u", "", "server address (default localhost:8001 for grpc, localhost:8000 for http)")
	f.StringVar(&o.Protocol, "protocol", "grpc", "grpc or http (Triton's HTTP/REST infer with binary tensors; not for decoupled models)")
	f.Int64Var(&o.Version, "model-version", 0, "model version (0: the newest)")
	f.StringArrayVarP(&o.Inputs, "input", "i", nil, "input tensor NAME:DATATYPE:SHAPE:VALUES (repeatable)")
	f.StringArrayVar(&o.Shapes, "shape", nil, "shape NAME:D1,D2,... of a generated input whose dims are variable (repeatable)")
	f.StringArrayVarP(&o.Params, "param", "p", nil, "request parameter KEY=VALUE (repeatable)")
	f.StringVar(&o.Mode, "mode", "auto", "over grpc: auto (stream for decoupled models), stream or unary")
	f.StringVar(&o.ConcurrencyRange, "concurrency-range", "1", "START[:END[:STEP]] requests kept in flight")
	f.StringVar(&o.RateRange, "request-rate-range", "", "START[:END[:STEP]] requests started per second, instead of a concurrency")
	f.IntVar(&o.MaxOutstanding, "max-outstanding", loadgen.DefaultMaxOutstanding, "requests in flight at most in request-rate mode")
	f.IntVar(&o.IntervalMs, "measurement-interval", 5000, "ms measured at each level")
	f.IntVar(&o.WarmupMs, "warmup", 1000, "ms of load before each measurement, not counted")
	f.StringVarP(&o.CSV, "filename", "f", "", "also write the results to this CSV file")
	f.BoolVar(&o.NoProgress, "no-progress", false, "do not print a progress line while measuring")
	return cmd
}

// Validate checks the flags and parses the ranges.
func (o *perfOptions) Validate() error {
	switch o.Mode {
	case "auto", "stream", "unary":
	default:
		return fmt.Errorf("--mode %q: want auto, stream or unary", o.Mode)
	}
	switch o.Protocol {
	case "grpc":
		if o.URL == "" {
			o.URL = "localhost:8001"
		}
	case "http":
		if o.Mode == "stream" {
			return errors.New("--mode stream needs --protocol grpc: HTTP has no inference stream")
		}
		if o.URL == "" {
			o.URL = "localhost:8000"
		}
	default:
		return fmt.Errorf("--protocol %q: want grpc or http", o.Protocol)
	}
	if o.IntervalMs <= 0 || o.WarmupMs < 0 || o.MaxOutstanding <= 0 {
		return errors.New("--measurement-interval and --max-outstanding must be positive, --warmup not negative")
	}
	spec, flag := o.ConcurrencyRange, "--concurrency-range"
	if o.RateRange != "" {
		spec, flag, o.byRate = o.RateRange, "--request-rate-range", true
	}
	levels, err := parseRange(spec)
	if err != nil {
		return fmt.Errorf("%s %q: %w", flag, spec, err)
	}
	o.levels = levels
	return nil
}

// parseRange reads START[:END[:STEP]] (positive numbers; STEP defaults to
// 1) into the levels it names; at most 1000 of them.
func parseRange(spec string) ([]float64, error) {
	parts := strings.Split(spec, ":")
	if len(parts) > 3 {
		return nil, errors.New("want START[:END[:STEP]]")
	}
	nums := []float64{0, 0, 1}
	for i, p := range parts {
		n, err := strconv.ParseFloat(p, 64)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive number", p)
		}
		nums[i] = n
	}
	if len(parts) == 1 {
		nums[1] = nums[0]
	}
	if nums[1] < nums[0] {
		return nil, errors.New("END is below START")
	}
	var levels []float64
	for v := nums[0]; v <= nums[1]+1e-9; v += nums[2] {
		if len(levels) == 1000 {
			return nil, errors.New("more than 1000 levels")
		}
		levels = append(levels, v)
	}
	return levels, nil
}

// Run measures every level and prints the table (and the CSV file).
func (o *perfOptions) Run(ctx context.Context, out, progress io.Writer) error {
	conns := o.MaxOutstanding
	if !o.byRate {
		conns = int(slices.Max(o.levels))
	}
	srv, err := dialPerfServer(o.Protocol, o.URL, conns)
	if err != nil {
		return err
	}
	defer srv.close()
	if err := o.prepare(ctx, srv); err != nil {
		return err
	}
	mode := loadgen.Unary
	switch {
	case o.Protocol == "http":
		mode = loadgen.HTTP
	case o.stream:
		mode = loadgen.Stream
	}
	fmt.Fprintf(out, "model %s, %s, %d ms per level after %d ms of warm-up\n", o.Model, mode, o.IntervalMs, o.WarmupMs)
	var rows []perfRow
	for _, level := range o.levels {
		cfg := loadgen.Config{Request: o.request, Mode: mode, MaxOutstanding: o.MaxOutstanding,
			Warmup: time.Duration(o.WarmupMs) * time.Millisecond, Window: time.Duration(o.IntervalMs) * time.Millisecond}
		srv.target(&cfg)
		name := fmt.Sprintf("concurrency %g", level)
		if o.byRate {
			cfg.Rate, name = level, fmt.Sprintf("rate %g/s", level)
		} else {
			cfg.Concurrency = int(level)
		}
		if !o.NoProgress {
			cfg.Progress = func(p loadgen.Progress) {
				fmt.Fprintf(progress, "\r[%s] %4.1fs: %d requests, %d responses, %d errors ", name, p.Elapsed.Seconds(), p.Requests, p.Responses, p.Errors)
			}
		}
		before, _ := srv.statistics(ctx, o.Model)
		res, err := loadgen.Run(ctx, cfg)
		if !o.NoProgress {
			fmt.Fprint(progress, "\r\033[K")
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		after, _ := srv.statistics(ctx, o.Model)
		row := perfRow{level: level, res: res}
		row.queue, row.compute = serverTimes(before, after)
		rows = append(rows, row)
		if res.Errors > 0 {
			fmt.Fprintf(progress, "%s: %d requests failed; the first: %s\n", name, res.Errors, res.FirstError)
		}
	}
	writeTable(out, rows, o.byRate, o.stream)
	if o.CSV != "" {
		f, err := os.Create(o.CSV)
		if err != nil {
			return err
		}
		if err := writeCSV(f, rows, o.byRate); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", o.CSV, err)
		}
		return f.Close()
	}
	return nil
}
