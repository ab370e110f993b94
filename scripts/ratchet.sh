# Starting the demo server, shared by scripts/demo.sh and
# scripts/demo-patch.sh (sourced, with B set): ratchet_start LOG starts
# $B/ratchet on a free loopback port with its output in LOG and sets
# ratchet_pid and port, or exits 1 with LOG shown; ratchet_stop stops it.

ratchet_pid=""
port=""

ratchet_start() {
	# Port 0: the kernel picks a free port, and ratchet says which. The
	# log exists before ratchet starts, so reading it cannot race its
	# creation.
	: >"$1"
	"$B/ratchet" 0 2 >>"$1" 2>&1 &
	ratchet_pid=$!
	tries=0
	while [ -z "$port" ]; do
		port=$(sed -n 's/^ratchet: listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$1")
		if [ -z "$port" ]; then
			if ! kill -0 "$ratchet_pid" 2>/dev/null || [ "$tries" -ge 50 ]; then
				echo "demo: ratchet did not start:" >&2
				cat "$1" >&2
				exit 1
			fi
			tries=$((tries + 1))
			sleep 0.1
		fi
	done
}

ratchet_stop() {
	if [ -n "$ratchet_pid" ]; then
		kill "$ratchet_pid" 2>/dev/null || true
		wait "$ratchet_pid" 2>/dev/null || true
	fi
}
