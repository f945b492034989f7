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

"$bin" serve --model-repository examples/models --backend-directory backends \
	--grpc-address 127.0.0.1 --grpc-port 0 --http-address 127.0.0.1 --http-port 0 \
	--allow-metrics=false >"$log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true' EXIT

address() { # the address the server announced for service $1
	sed -n "s/.*Started $1 at \([^ ]*\).*/\1/p" "$log" | head -n 1
}
for _ in $(seq 300); do
	grpc=$(address GRPCInferenceService)
	http=$(address HTTPService)
	[[ -n $grpc && -n $http ]] && break
	kill -0 "$server" 2>/dev/null || { cat "$log" >&2; exit 1; }
	sleep 0.1
done
[[ -n $grpc && -n $http ]] || { echo "tritonhost did not start" >&2; cat "$log" >&2; exit 1; }

perf() { "$bin" perf --no-progress --measurement-interval "$interval" --warmup 1000 "$@"; echo; }
perf identity_int32 -u "$grpc" --shape INPUT0:16 --concurrency-range 1:16:15 -f "$out/identity_grpc.csv"
perf identity_int32 -u "$http" --protocol http --shape INPUT0:16 --concurrency-range 1:16:15 -f "$out/identity_http.csv"
perf identity_int32 -u "$grpc" --shape INPUT0:262144 --concurrency-range 16 -f "$out/identity_1mib_grpc.csv"
perf square_int32 -u "$grpc" -i IN:INT32:1:100 --concurrency-range 1:16:15 -f "$out/square_stream.csv"
