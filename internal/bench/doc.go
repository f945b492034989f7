// Package bench measures tritonhost over its gRPC protocol against the
// ceiling of the same stack: a plain grpc-go server (echoserver) on the
// same machine; BenchmarkHTTPRequests (http_test.go) measures its
// HTTP/REST protocol against echoserver's plain net/http echo
// (-http-address). Both servers run as child processes; one client, which
// counts frames without decoding them, drives both in the same run, so the
// ratio is the cost of everything tritonhost does between the wire and the
// backend. The isolation benchmarks (isolation_test.go) compare instead a
// backend in a worker process with the same backend in the server's
// process, in one server, and time a worker's crash to its model serving
// again. Run with `make bench` or `go test -run '^$' -bench . ./internal/bench/`.
package bench
