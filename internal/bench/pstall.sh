#!/usr/bin/env bash
# How long the Go processors that square's response threads take with
# them stay unused (internal/bench/pstall): serves examples/models, loads
# square_int32 with STREAMS concurrent streams of K responses each (default
# 16 and 2500, as BenchmarkConcurrentStreams), records a Go execution trace
# of SECONDS_TRACED (default 2) from the server's pprof address, and prints pstall's
# report. Usage: internal/bench/pstall.sh [BIN] (default bin/tritonhost, which
# `make build` makes); needs curl.
set -euo pipefail
bin=${1:-bin/tritonhost}
streams=${STREAMS:-16}
k=${K:-2500}
secs=${SECONDS_TRACED:-2}
out=build/bench
mkdir -p "$out"
log="$out/pstall-serve.log"

# shellcheck source=internal/bench/serve.sh
source "$(dirname "$0")/serve.sh"
start_examples "$log" --grpc-address 127.0.0.1 --grpc-port 0 --allow-http=false --allow-metrics=false \
	--debug-address 127.0.0.1:0
load=
trap 'kill $load "$server" 2>/dev/null; wait "$server" 2>/dev/null || true' EXIT
grpc=$(announced "$log" GRPCInferenceService)
debug=$(announced "$log" "diagnostics (pprof)")

"$bin" perf square_int32 -u "$grpc" -i "IN:INT32:1:$k" --concurrency-range "$streams" \
	--no-progress --measurement-interval 10000 >"$out/pstall-load.txt" 2>&1 &
load=$!
sleep 3 # past the load's start
curl -fsS -o "$out/pstall.trace" "http://$debug/debug/pprof/trace?seconds=$secs"
"${GO:-go}" tool trace -d=parsed "$out/pstall.trace" | "${GO:-go}" run ./internal/bench/pstall
