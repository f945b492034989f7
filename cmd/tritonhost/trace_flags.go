package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/trace"
	"github.com/tritonhost/tritonhost/internal/trace/otlp"
)

// traceFlags are Triton's tracing flags: --trace-config [<mode>,]<key>=<value>
// (repeatable), the older --trace-file, --trace-level, --trace-rate,
// --trace-count and --trace-log-frequency, and the bounds of the queue of
// finished traces and of the trace files.
type traceFlags struct {
	Config       []string
	File         string
	Levels       []string
	Rate         string
	Count        string
	LogFrequency string
	QueueSize    int
	FileMaxSize  int64

	config trace.Config // Complete
	set    func(name string) bool
}

func (p *traceFlags) bind(f *pflag.FlagSet) {
	f.StringArrayVar(&p.Config, "trace-config", nil,
		`trace setting [<mode>,]<setting>=<value> (repeatable): level=OFF|TIMESTAMPS|TENSORS, rate=N, count=N, mode=triton|opentelemetry; `+
			`triton,file=PATH, triton,log-frequency=N; opentelemetry,url=URL, opentelemetry,resource=KEY=VALUE, opentelemetry,bsp_max_queue_size=N, ...`)
	f.StringVar(&p.File, "trace-file", "", "deprecated: --trace-config triton,file=PATH")
	f.StringArrayVar(&p.Levels, "trace-level", nil, "deprecated: --trace-config level=LEVEL")
	f.StringVar(&p.Rate, "trace-rate", "", "deprecated: --trace-config rate=N")
	f.StringVar(&p.Count, "trace-count", "", "deprecated: --trace-config count=N")
	f.StringVar(&p.LogFrequency, "trace-log-frequency", "", "deprecated: --trace-config triton,log-frequency=N")
	f.IntVar(&p.QueueSize, "trace-queue-size", trace.DefaultQueueSize,
		"finished traces that may wait to be written or exported; past it they are dropped and counted (tritonhost_traces_dropped_total)")
	f.Int64Var(&p.FileMaxSize, "trace-file-max-size", trace.DefaultMaxFileBytes,
		"bytes of trace files the server writes, every file together; past it traces are dropped and counted (tritonhost_traces_dropped_total)")
	p.set = func(name string) bool { return f.Changed(name) }
}

// complete parses the flags as Triton's command line does.
func (p *traceFlags) complete() error {
	flags := trace.Flags{Config: p.Config, Levels: p.Levels}
	if p.set("trace-file") {
		flags.File = &p.File
	}
	if p.set("trace-rate") {
		flags.Rate = &p.Rate
	}
	if p.set("trace-count") {
		flags.Count = &p.Count
	}
	if p.set("trace-log-frequency") {
		flags.LogFrequency = &p.LogFrequency
	}
	c, err := flags.Parse()
	if err != nil {
		return err
	}
	if p.QueueSize <= 0 {
		return fmt.Errorf("--trace-queue-size must be positive, not %d", p.QueueSize)
	}
	if p.FileMaxSize <= 0 {
		return fmt.Errorf("--trace-file-max-size must be positive, not %d", p.FileMaxSize)
	}
	p.config = c
	return nil
}

// manager makes the server's tracer; in mode opentelemetry with its OTLP
// exporter.
func (p *traceFlags) manager(log *serverlog.Logger) (*trace.Manager, error) {
	c := p.config
	for _, w := range c.Warnings {
		log.Warnf("%s", w)
	}
	opts := trace.Options{Setting: c.Setting, ModeOptions: c.Options, QueueSize: p.QueueSize, MaxFileBytes: p.FileMaxSize, Logger: log}
	if c.Setting.Mode == trace.ModeOpenTelemetry {
		exp, err := otlp.New(otlp.Options{URL: c.URL, Resource: c.Resource, MaxQueueSize: int(c.BSPMaxQueueSize),
			ScheduleDelay: time.Duration(c.BSPScheduleDelayMs) * time.Millisecond, MaxExportBatchSize: int(c.BSPMaxExportBatchSize)})
		if err != nil {
			return nil, err
		}
		opts.Exporter = exp
	}
	return trace.New(opts)
}

// closeTracer writes what the tracer holds, within the deadline.
func closeTracer(log *serverlog.Logger, m *trace.Manager, deadline context.Context) {
	if err := m.Close(deadline); err != nil {
		log.Errorf("tracing: %v", err)
	}
}
