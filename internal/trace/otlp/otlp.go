// Package otlp exports traces as OpenTelemetry spans to an OTLP/HTTP
// collector, through the OpenTelemetry Go SDK: Triton's trace mode
// opentelemetry. Each traced request is a span named after its model, its
// activities (REQUEST_START, QUEUE_START, COMPUTE_START, ...) events at
// their times, with the attributes Triton sets (triton.model_name,
// triton.model_version, triton.trace_id, triton.trace_parent_id,
// triton.request_id). A step of an ensemble, or a request a backend sends
// to another model, is a child span of its parent's; a client's request
// that carries a W3C trace context (traceparent) continues the client's
// trace.
package otlp

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/trace"
)

// Options configure an Exporter.
type Options struct {
	// URL is the collector's OTLP/HTTP traces endpoint
	// (trace.DefaultURL when empty).
	URL string
	// Resource are the resource attributes of every span.
	Resource map[string]string
	// MaxQueueSize, ScheduleDelay and MaxExportBatchSize bound the batch
	// span processor: the spans waiting to be sent, how long a span may
	// wait, and the most sent at once. Zero values take the SDK's
	// defaults.
	MaxQueueSize       int
	ScheduleDelay      time.Duration
	MaxExportBatchSize int
	// ExportTimeout bounds one export to the collector (default 10s).
	ExportTimeout time.Duration
}

// Exporter is a trace.Exporter that sends spans through the OpenTelemetry
// SDK's batch span processor and OTLP/HTTP exporter.
type Exporter struct {
	provider *sdktrace.TracerProvider
	tracer   oteltrace.Tracer
}

var _ trace.Exporter = (*Exporter)(nil)

// tracerName is the instrumentation scope of the spans.
const tracerName = "triton-server"

// New returns an exporter to the collector opts names. Nothing is sent
// until the first trace finishes.
func New(opts Options) (*Exporter, error) {
	if opts.URL == "" {
		opts.URL = trace.DefaultURL
	}
	if opts.ExportTimeout <= 0 {
		opts.ExportTimeout = 10 * time.Second
	}
	client, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(opts.URL),
		otlptracehttp.WithTimeout(opts.ExportTimeout))
	if err != nil {
		return nil, fmt.Errorf("OTLP exporter to %s: %w", opts.URL, err)
	}
	attrs := make([]attribute.KeyValue, 0, len(opts.Resource))
	for k, v := range opts.Resource {
		attrs = append(attrs, attribute.String(k, v))
	}
	var bsp []sdktrace.BatchSpanProcessorOption
	if opts.MaxQueueSize > 0 {
		bsp = append(bsp, sdktrace.WithMaxQueueSize(opts.MaxQueueSize))
	}
	if opts.ScheduleDelay > 0 {
		bsp = append(bsp, sdktrace.WithBatchTimeout(opts.ScheduleDelay))
	}
	if opts.MaxExportBatchSize > 0 {
		bsp = append(bsp, sdktrace.WithMaxExportBatchSize(opts.MaxExportBatchSize))
	}
	provider := sdktrace.NewTracerProvider(
		// Blocking: a full span queue holds up the trace writer, never a
		// request; the writer's own bounded queue counts what is dropped.
		sdktrace.WithBatcher(client, append(bsp, sdktrace.WithBlocking())...),
		sdktrace.WithResource(resource.NewSchemaless(attrs...)),
		sdktrace.WithSampler(sdktrace.AlwaysSample()), // the manager samples
	)
	return &Exporter{provider: provider, tracer: provider.Tracer(tracerName)}, nil
}

// Start starts the trace's span: a child of parent's span for a step, of
// the client's span when the request brought a trace context, or a root.
func (e *Exporter) Start(t *core.Trace, s core.TraceStart, parent any) any {
	ctx := context.Background()
	if ps, ok := parent.(oteltrace.Span); ok {
		ctx = oteltrace.ContextWithSpan(ctx, ps)
	} else if s.Context.Parent != "" {
		ctx = propagation.TraceContext{}.Extract(ctx, carrier(s.Context))
	}
	_, span := e.tracer.Start(ctx, t.Model, oteltrace.WithSpanKind(oteltrace.SpanKindServer),
		oteltrace.WithTimestamp(wallTime(core.Nanotime())))
	return span
}

// Export ends the span of a finished trace: its activities become events
// at their times, its attributes Triton's, its end the last activity.
func (e *Exporter) Export(t *core.Trace, started any) {
	span, ok := started.(oteltrace.Span)
	if !ok {
		return
	}
	attrs := []attribute.KeyValue{
		attribute.String("triton.model_name", t.Model),
		attribute.Int64("triton.model_version", t.Version),
		attribute.Int64("triton.trace_id", int64(t.ID)),
		attribute.Int64("triton.trace_parent_id", int64(t.ParentID)),
	}
	if t.RequestID != "" {
		attrs = append(attrs, attribute.String("triton.request_id", t.RequestID))
	}
	span.SetAttributes(attrs...)
	end := time.Now()
	for _, a := range t.Activities() {
		at := wallTime(a.Timestamp)
		span.AddEvent(a.Name, oteltrace.WithTimestamp(at))
		end = at
	}
	span.End(oteltrace.WithTimestamp(end))
}

// Close sends the spans still waiting and stops, by the deadline of ctx.
func (e *Exporter) Close(ctx context.Context) error { return e.provider.Shutdown(ctx) }

// wallTime converts a core.Nanotime value to the wall clock.
func wallTime(ns uint64) time.Time {
	now := core.Nanotime()
	return time.Now().Add(-time.Duration(int64(now - ns)))
}

// carrier reads a client's trace context as the W3C propagator asks.
type carrier core.TraceContext

func (c carrier) Get(key string) string {
	switch key {
	case "traceparent":
		return c.Parent
	case "tracestate":
		return c.State
	}
	return ""
}

func (c carrier) Set(string, string) {}

func (c carrier) Keys() []string { return []string{"traceparent", "tracestate"} }
