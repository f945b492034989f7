#!/usr/bin/env bash
# make bench's run: every Go benchmark COUNT times, then internal/bench/perf.sh,
# printed as they go and written to OUT, the format of internal/bench/results.txt
# (benchstat reads the benchmark lines and skips the rest).
# Usage: internal/bench/run.sh OUT COUNT [BIN] (BIN: default bin/tritonhost).
set -euo pipefail
out=$1
count=$2
bin=${3:-bin/tritonhost}
mkdir -p "$(dirname "$out")"
{
	echo "# make bench, one run (BENCH_COUNT=$count) of commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u +%F), on $(nproc) cores"
	echo
	echo "go test -run '^\$' -bench . -benchmem -count $count ./..."
	"${GO:-go}" test -run '^$' -bench . -benchmem -count "$count" -timeout 60m ./...
	echo "internal/bench/perf.sh $bin"
	internal/bench/perf.sh "$bin"
} 2>&1 | tee "$out"
