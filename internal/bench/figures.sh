#!/usr/bin/env bash
# The run internal/bench/results.txt keeps and docs/performance.md and the
# README quote: the end-to-end benchmarks against plain grpc-go and
# net/http (3 runs each; a run of the stream benchmarks is 20 rounds of
# each server, of the unary and HTTP ones 3 windows of 2 seconds of each
# server), the in-process abi benchmarks, the isolation
# benchmarks, where the servers' CPU goes on the two stream benchmarks
# (profile.sh, when perf is installed) and `tritonhost perf` (perf.sh),
# printed as they go and written to OUT. Run it on an otherwise idle
# machine: every figure is a ratio of two servers measured in the same run,
# but a busy machine still widens the spread.
# The benchmarks of profile.sh must outlast its recording (perf keeps
# the server binary for its symbols only while it exists), hence the
# rounds given. Usage: internal/bench/figures.sh [OUT] (default
# build/bench/figures.txt).
set -euo pipefail
out=${1:-build/bench/figures.txt}
go=${GO:-go}
mkdir -p "$(dirname "$out")"
run() {
	echo
	echo "$*"
	"$@"
}
{
	echo "# internal/bench/figures.sh, commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u +%F), on $(nproc) cores (load average $(cut -d' ' -f1-3 /proc/loadavg) at the start)"
	run "$go" test -run '^$' -bench 'StreamResponses|ConcurrentStreams' -benchtime 20x -count 3 -benchmem -timeout 60m ./internal/bench/
	run "$go" test -run '^$' -bench 'UnaryRequests|HTTPRequests' -benchtime 3x -count 3 -benchmem -timeout 60m ./internal/bench/
	run "$go" test -run '^$' -bench UnaryTensors -benchtime 1x -count 3 -benchmem -timeout 60m ./internal/bench/
	run "$go" test -run '^$' -bench 'Isolation' -count 3 -timeout 60m ./internal/bench/
	run "$go" test -run '^$' -bench 'SquareResponse|IdentityRequest$' -count 3 -benchmem ./abi/
	if command -v perf >/dev/null; then
		run internal/bench/profile.sh StreamResponses
		run internal/bench/profile.sh ConcurrentStreams 80
	fi
	run internal/bench/perf.sh
} 2>&1 | tee "$out"
