# Sourced by the scripts of internal/bench that serve examples/models with
# $bin: start_examples starts the server, announced waits for an address.

# start_examples LOG ARGS...: starts "$bin serve" on examples/models with
# ARGS, its output in LOG, and sets server to its process id.
start_examples() {
	local log=$1
	shift
	"$bin" serve --model-repository examples/models --backend-directory backends "$@" >"$log" 2>&1 &
	server=$!
}

# announced LOG WHAT: prints the address the server announced in LOG for
# WHAT (a service, "diagnostics (pprof)"), waiting up to 30 s; fails, with
# the log, if the server exits or says nothing by then.
announced() {
	local log=$1 what=$2 addr
	for _ in $(seq 300); do
		addr=$(sed -n "s/.*Started $what at \([^ ]*\).*/\1/p" "$log" | head -n 1)
		if [[ -n $addr ]]; then
			echo "$addr"
			return
		fi
		kill -0 "$server" 2>/dev/null || break
		sleep 0.1
	done
	echo "tritonhost did not announce $what" >&2
	cat "$log" >&2
	return 1
}
