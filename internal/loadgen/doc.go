// Package loadgen drives a server that speaks Triton's gRPC or HTTP/REST
// protocol with one inference request over and over, at a fixed
// concurrency or a fixed request rate, and measures what comes back:
// throughput, latency percentiles and, for decoupled models on a stream,
// the time to the first response and the responses per second. It is the
// engine of `tritonhost perf`, in the spirit of Triton's perf_analyzer.
//
// The request goes over gRPC, unary (ModelInfer) or on a ModelStreamInfer
// stream per worker, or over HTTP/REST (Config.HTTP): a POST to the
// model's infer endpoint with the inputs in Triton's binary tensor
// extension, encoded once, and every output asked for as binary data; a
// response counts when its whole body has been read.
//
// A load runs from Start to Stop; Measure takes consecutive windows of it,
// and a request counts in the window it completes in. Stability says, as
// perf_analyzer does, when the last few windows agree well enough to be
// reported (Settle measures until they do), and Merge makes those windows
// one measurement. Run is the short form: a warm-up, then one window.
// Latencies go into a histogram of bounded size (see Histogram), so a long
// run at a high rate holds constant memory. In rate mode the requests in
// flight are bounded (Config.MaxOutstanding): when the server falls behind,
// requests start late and the result says how many did.
//
// API on the client's side, like package client, which it sends through:
// it imports no server package, so a Go program can load a server the way
// `tritonhost perf` does.
package loadgen
