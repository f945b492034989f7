package server

import (
	"context"
	"fmt"
	"time"

	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/trace"
	"github.com/tritonhost/tritonhost/internal/trace/otlp"
)

// parse reads the trace settings as Triton's command line does.
func (p *TraceConfig) parse() (trace.Config, error) {
	flags := trace.Flags{Config: p.Config, Levels: p.Levels, File: p.File, Rate: p.Rate, Count: p.Count, LogFrequency: p.LogFrequency}
	c, err := flags.Parse()
	if err != nil {
		return c, err
	}
	if p.QueueSize <= 0 {
		return c, fmt.Errorf("--trace-queue-size must be positive, not %d", p.QueueSize)
	}
	if p.FileMaxSize <= 0 {
		return c, fmt.Errorf("--trace-file-max-size must be positive, not %d", p.FileMaxSize)
	}
	return c, nil
}

// manager makes the server's tracer from the settings c; in mode
// opentelemetry with its OTLP exporter.
func (p *TraceConfig) manager(c trace.Config, log *serverlog.Logger) (*trace.Manager, error) {
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
