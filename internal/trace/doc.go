// Package trace traces requests as Triton does: the server's trace setting
// and each model's (level, rate, count, log frequency, file, mode), read
// and changed through Triton's trace extension; the sampling of requests;
// and the writing of finished traces, to Triton's JSON trace file (mode
// triton) or to an Exporter (mode opentelemetry; package trace/otlp sends
// OpenTelemetry spans to an OTLP collector). A Manager is the server's
// core.Tracer. Nothing here blocks a request: traces finish into a bounded
// queue written by one goroutine, and those that find it full are dropped
// and counted.
package trace
