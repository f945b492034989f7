#!/usr/bin/env bash
# Where the servers' CPU time goes under one of the stream or unary
# benchmarks: runs BENCH (default StreamResponses) from ./bench for ROUNDS
# rounds, records every CPU with perf for SECONDS once both servers run,
# and prints, for tritonhost and for the plain grpc-go server, the share
# of their samples in each part (internal/bench/perfgroup). The plain server serves
# all of the benchmark's ceilings (the echo, the fanout and the hand-off
# methods), so its shares are of those together.
# Usage: internal/bench/profile.sh [BENCH [ROUNDS [SECONDS]]]; needs perf.
set -euo pipefail
bench=${1:-StreamResponses}
rounds=${2:-200}
secs=${3:-10}
out=build/bench
mkdir -p "$out"
"${GO:-go}" test -c -o "$out/bench.test" ./internal/bench
"${GO:-go}" build -o "$out/perfgroup" ./internal/bench/perfgroup
(cd internal/bench && "../../$out/bench.test" -test.run '^$' -test.bench "^Benchmark${bench}\$" -test.benchtime "${rounds}x" >"../../$out/profile-bench.txt" 2>&1) &
run=$!
for _ in $(seq 600); do # the servers are built and started by the benchmark
	pgrep -x tritonhost >/dev/null && pgrep -x echoserver >/dev/null && break
	sleep 0.1
done
sleep 3 # past the warm-up rounds
perf record -a -g -F 999 -o "$out/perf.data" -- sleep "$secs" 2>/dev/null
# Symbols are read while the benchmark still runs: it builds the servers
# into a temporary folder that goes when it ends.
perf script -i "$out/perf.data" -F comm,pid,ip,sym,dso 2>/dev/null >"$out/perf.script"
wait "$run" || { cat "$out/profile-bench.txt"; exit 1; }
grep -v '^Benchmark\|^goos\|^goarch\|^pkg\|^cpu\|^PASS\|^ok' "$out/profile-bench.txt" || true
"$out/perfgroup" tritonhost echoserver <"$out/perf.script"
