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

"$bin" serve --model-repository examples/models --backend-directory backends \
	--grpc-address 127.0.0.1 --grpc-port 0 --allow-http=false --allow-metrics=false \
	--debug-address 127.0.0.1:0 >"$log" 2>&1 &
server=$!
load=
trap 'kill $load "$server" 2>/dev/null; wait "$server" 2>/dev/null || true' EXIT

for _ in $(seq 300); do
	grpc=$(sed -n 's/.*Started GRPCInferenceService at \([^ ]*\).*/\1/p' "$log" | head -n 1)
	debug=$(sed -n 's/.*Started diagnostics (pprof) at \([^ ]*\).*/\1/p' "$log" | head -n 1)
	[[ -n $grpc && -n $debug ]] && break
	kill -0 "$server" 2>/dev/null || { cat "$log" >&2; exit 1; }
	sleep 0.1
done
[[ -n $grpc && -n $debug ]] || { echo "tritonhost did not start" >&2; cat "$log" >&2; exit 1; }

"$bin" perf square_int32 -u "$grpc" -i "IN:INT32:1:$k" --concurrency-range "$streams" \
	--no-progress --measurement-interval 10000 >"$out/pstall-load.txt" 2>&1 &
load=$!
sleep 3 # past the load's start
curl -fsS -o "$out/pstall.trace" "http://$debug/debug/pprof/trace?seconds=$secs"
"${GO:-go}" tool trace -d=parsed "$out/pstall.trace" | "${GO:-go}" run ./internal/bench/pstall
