// Package reliability holds no code, only a suite of tests that run the
// real `tritonhost serve` binary, with the real backends, the way a hostile
// or careless client and a careless operator would, and check that every
// bound holds:
//
//   - many streams at once: every response arrives exactly once, in order;
//   - a client that stops reading, or reads slowly, or pipelines tens of
//     thousands of requests, holds neither a model nor backend threads
//     beyond the stream limits, and a bystander client keeps being served;
//   - streams dropped mid-request leave no goroutine, thread or memory
//     behind, round after round;
//   - hostile inputs (shapes whose sizes overflow, typed contents that
//     inflate, model configurations that ask for terabytes, files outside
//     the model directory, log files over the API) are refused alone;
//   - decoupled statistics stay bounded whatever a request's response count;
//   - shutdown ends within --exit-timeout-secs, with exit status 1 when work
//     was abandoned and a final error for every call still in flight, and a
//     hung backend blocks neither start-up signals nor other models' loads;
//   - idle connections and too many streams per connection are refused;
//     request bodies that never arrive, and headers that never end, are
//     cut off, and bystanders keep being served meanwhile; one client's
//     connections past its share of a port are closed, and another client
//     is served at once;
//   - a body or a message naming millions of parameters, tensors or
//     dimensions is refused at the cost of its bytes; the trace file stops
//     at its bound;
//   - files sent with a load request are never run as code and stay within
//     their disk budget; shared memory shrunk under a request fails that
//     request alone.
//
// Each test logs the figures it measured (latency, threads, RSS, exit
// time). `make test` runs them at a small scale; `make soak` (go test
// ./reliability -soak) runs them at full scale: 1000 streams of 100
// requests, 35,000 pipelined requests, 250 MiB requests, 20 rounds of
// dropped streams, a square request of 8,000,000 responses.
package reliability
