#!/usr/bin/env bash
# End-to-end figures with `tritonhost perf`, as a user measures a server:
# serve examples/models on loopback ports chosen by the system, then load
# it over gRPC (unary and streaming) and HTTP. Called by `make bench` after
# the Go benchmarks; the CSV files go to $PERF_OUT (default build/perf).
# Usage: internal/bench/perf.sh [BIN] (default bin/tritonhost). PERF_INTERVAL_MS
# sets the length of each measurement window (default 3000); perf measures
# each level until 3 windows in a row agree within 10%.
set -euo pipefail
bin=${1:-bin/tritonhost}
out=${PERF_OUT:-build/perf}
interval=${PERF_INTERVAL_MS:-3000}
mkdir -p "$out"
log="$out/serve.log"

# shellcheck source=internal/bench/serve.sh
source "$(dirname "$0")/serve.sh"
start_examples "$log" --grpc-address 127.0.0.1 --grpc-port 0 --http-address 127.0.0.1 --http-port 0 \
	--allow-metrics=false
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true' EXIT
grpc=$(announced "$log" GRPCInferenceService)
http=$(announced "$log" HTTPService)

perf() { "$bin" perf --no-progress --measurement-interval "$interval" --warmup 1000 "$@"; echo; }
perf identity_int32 -u "$grpc" --shape INPUT0:16 --concurrency-range 1:16:15 -f "$out/identity_grpc.csv"
perf identity_int32 -u "$http" --protocol http --shape INPUT0:16 --concurrency-range 1:16:15 -f "$out/identity_http.csv"
perf identity_int32 -u "$grpc" --shape INPUT0:262144 --concurrency-range 16 -f "$out/identity_1mib_grpc.csv"
perf square_int32 -u "$grpc" -i IN:INT32:1:100 --concurrency-range 1:16:15 -f "$out/square_stream.csv"
