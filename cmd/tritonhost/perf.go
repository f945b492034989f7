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

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/loadgen"
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
	Stability        float64 // --stability-percentage
	MaxTrials        int
	Percentile       int // -1: stabilize on the mean latency
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

As Triton's perf_analyzer does, each level is measured in consecutive
windows of --measurement-interval, with the load running throughout, until
the last 3 agree: their throughputs, and their latencies (the mean, or the
--percentile), within --stability-percentage of each other. The figures
reported are those 3 windows' together, and the server's queue and compute
times over the same span. A level that does not settle within --max-trials
windows is not reported: the sweep stops there, and perf fails if no level
settled.

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
	f.IntVar(&o.IntervalMs, "measurement-interval", 5000, "ms of each measurement window")
	f.IntVar(&o.WarmupMs, "warmup", 1000, "ms of load before the first window of each level, not counted")
	f.Float64VarP(&o.Stability, "stability-percentage", "s", loadgen.DefaultStabilityPercentage,
		"how far apart, in percent, the last 3 windows' throughput and latency may be for a level to count as stable")
	f.IntVarP(&o.MaxTrials, "max-trials", "r", loadgen.DefaultMaxTrials, "windows measured at most at each level before giving up on stability")
	f.IntVar(&o.Percentile, "percentile", -1, "latency percentile (1-99) that stability compares; -1: the mean latency")
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
	if o.Percentile != -1 && (o.Percentile < 1 || o.Percentile > 99) {
		return fmt.Errorf("--percentile %d: want 1 to 99, or -1 for the mean latency", o.Percentile)
	}
	if err := o.stability().Validate(); err != nil {
		return fmt.Errorf("--stability-percentage %g, --max-trials %d: %w", o.Stability, o.MaxTrials, err)
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

// stability is the rule the flags set.
func (o *perfOptions) stability() loadgen.Stability {
	st := loadgen.Stability{Windows: loadgen.DefaultStableWindows, Percentage: o.Stability, MaxTrials: o.MaxTrials}
	if o.Percentile > 0 {
		st.Percentile = float64(o.Percentile)
	}
	return st
}

// Run measures every level and prints the table (and the CSV file).
func (o *perfOptions) Run(ctx context.Context, out, progress io.Writer) error {
	conns := o.MaxOutstanding
	if !o.byRate {
		conns = int(slices.Max(o.levels))
	}
	srv, err := dialPerfServer(o.Protocol, o.URL, conns)
	if err != nil {
		return fmt.Errorf("--url: %w", err)
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
	st := o.stability()
	latency := "mean latency"
	if st.Percentile > 0 {
		latency = fmt.Sprintf("p%g latency", st.Percentile)
	}
	fmt.Fprintf(out, "model %s, %s: windows of %d ms after %d ms of warm-up, until %d in a row are within %g%% in throughput and %s (at most %d)\n",
		o.Model, mode, o.IntervalMs, o.WarmupMs, st.Windows, st.Percentage, latency, st.MaxTrials)
	var rows []perfRow
	for _, level := range o.levels {
		row, err := o.measure(ctx, srv, mode, level, progress)
		if errors.Is(err, loadgen.ErrUnstable) {
			// As perf_analyzer: the sweep ends at the first level that does
			// not settle, and fails if none did.
			fmt.Fprintf(progress, "%s\n", err)
			if len(rows) == 0 {
				return fmt.Errorf("%s: no stable measurement", o.levelName(level))
			}
			fmt.Fprintf(progress, "stopping at %s; the levels before it are reported\n", o.levelName(level))
			break
		}
		if err != nil {
			return err
		}
		rows = append(rows, row)
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

func (o *perfOptions) levelName(level float64) string {
	if o.byRate {
		return fmt.Sprintf("rate %g/s", level)
	}
	return fmt.Sprintf("concurrency %g", level)
}

// measure runs the load of one level and measures it window after window
// until the last ones are stable (st.Settle). An unstable level's error
// wraps loadgen.ErrUnstable and tells what its last windows measured.
func (o *perfOptions) measure(ctx context.Context, srv *perfServer, mode loadgen.Mode, level float64, progress io.Writer) (perfRow, error) {
	name := o.levelName(level)
	cfg := loadgen.Config{Request: o.request, Mode: mode, MaxOutstanding: o.MaxOutstanding}
	srv.target(&cfg)
	if o.byRate {
		cfg.Rate = level
	} else {
		cfg.Concurrency = int(level)
	}
	if !o.NoProgress {
		cfg.Progress = func(p loadgen.Progress) {
			phase := "warm-up"
			if n := p.Windows; o.WarmupMs == 0 || n > 0 {
				if o.WarmupMs > 0 {
					n-- // the warm-up was the first
				}
				phase = fmt.Sprintf("window %d", n+1)
			}
			fmt.Fprintf(progress, "\r[%s] %s, %4.1fs: %d requests, %d responses, %d errors ",
				name, phase, p.Elapsed.Seconds(), p.Requests, p.Responses, p.Errors)
		}
	}
	load, err := loadgen.Start(ctx, cfg)
	if err != nil {
		return perfRow{}, fmt.Errorf("%s: %w", name, err)
	}
	windows, snaps, err := o.settle(ctx, srv, load)
	// The load's own failure (a broken stream, say) says more than
	// instability.
	if stopErr := load.Stop(); stopErr != nil && (err == nil || errors.Is(err, loadgen.ErrUnstable)) {
		err = stopErr
	}
	if !o.NoProgress {
		fmt.Fprint(progress, "\r\033[K")
	}
	st := o.stability()
	switch {
	case errors.Is(err, loadgen.ErrUnstable):
		return perfRow{}, fmt.Errorf("%s: %w after %d windows of %d ms (the last %d: %s); try a longer --measurement-interval or a larger --stability-percentage",
			name, err, len(windows), o.IntervalMs, st.Windows, describeWindows(st, windows[len(windows)-st.Windows:]))
	case err != nil:
		return perfRow{}, fmt.Errorf("%s: %w", name, err)
	}
	n := len(windows)
	row := perfRow{level: level, windows: n, res: loadgen.Merge(windows[n-st.Windows:])}
	row.queue, row.compute = serverTimes(snaps[n-st.Windows], snaps[n])
	if row.res.Errors > 0 {
		fmt.Fprintf(progress, "%s: %d requests failed; the first: %s\n", name, row.res.Errors, row.res.FirstError)
	}
	return row, nil
}

// settle warms load up, then measures it until its windows are stable.
// snaps[i] is the model's statistics at the start of window i, snaps[i+1]
// at its end (nil where the server did not answer).
func (o *perfOptions) settle(ctx context.Context, srv *perfServer, load *loadgen.Load) ([]loadgen.Result, []*pb.ModelStatisticsResponse, error) {
	if o.WarmupMs > 0 {
		if _, err := load.Measure(time.Duration(o.WarmupMs) * time.Millisecond); err != nil {
			return nil, nil, err
		}
	}
	snap := func() *pb.ModelStatisticsResponse {
		s, err := srv.statistics(ctx, o.Model)
		if err != nil {
			return nil
		}
		return s
	}
	snaps := []*pb.ModelStatisticsResponse{snap()}
	windows, err := o.stability().Settle(func() (loadgen.Result, error) {
		w, err := load.Measure(time.Duration(o.IntervalMs) * time.Millisecond)
		if err == nil {
			snaps = append(snaps, snap())
		}
		return w, err
	})
	return windows, snaps, err
}

// describeWindows says what windows measured, for a level that did not
// settle: "1234.5, 1400.1, 1101.0 infer/s; 812, 790, 1020 us mean latency".
func describeWindows(st loadgen.Stability, windows []loadgen.Result) string {
	var tp, lat []string
	for _, w := range windows {
		tp = append(tp, strconv.FormatFloat(w.Throughput(), 'f', 1, 64))
		lat = append(lat, us(st.Latency(w)))
	}
	what := "mean"
	if st.Percentile > 0 {
		what = fmt.Sprintf("p%g", st.Percentile)
	}
	return fmt.Sprintf("%s infer/s; %s us %s latency", strings.Join(tp, ", "), strings.Join(lat, ", "), what)
}
