#!/usr/bin/env bash
# The trace (DESIGN §9): one line per decided request, in execution order,
# every required key on every line, seq strictly increasing and going on
# across a coordinator restart.
set -euo pipefail

BIN=${BERTH_BIN:?set BERTH_BIN to the build bin/ directory}
SENDRAW=$BIN/../tests/berth-sendraw
home=$(mktemp -d /tmp/berth-it-trace.XXXXXX)
export BERTH_HOME=$home
unset BERTH_FAILPOINTS
url=ipc://$home/coordinator.sock
trace=$home/trace/trace.jsonl
coord=

cleanup() {
	[[ -n $coord ]] && kill -KILL "$coord" 2>/dev/null
	# The status board and trace ring of this home (common/board.c names
	# them after the SHA-256 of the absolute home).
	local h
	h=$(printf '%s' "$(realpath -m "$home")" | sha256sum | cut -c1-16)
	rm -f "/dev/shm/berth-$h" "/dev/shm/berth-$h-ring"
	rm -rf "$home"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*" >&2
	[[ -f $home/coord.log ]] && tail -n 30 "$home/coord.log" >&2
	[[ -f $trace ]] && cat "$trace" >&2
	exit 1
}
wait_for() { # seconds command...
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		((SECONDS < deadline)) || return 1
		sleep 0.05
	done
}
answers() { "$SENDRAW" "$url" version 1 >/dev/null 2>&1; }
start() {
	"$BIN/berth-coordinator" --home "$home" --sync normal >>"$home/coord.log" 2>&1 &
	coord=$!
	wait_for 30 answers || fail "the coordinator did not answer"
}
stop() {
	local rc=0
	kill -TERM "$coord"
	wait "$coord" || rc=$?
	coord=
	[[ $rc == 0 ]] || fail "SIGTERM: exit status $rc"
}
lines() { if [[ -f $trace ]]; then wc -l <"$trace"; else echo 0; fi; }

start
base=$(lines) # the readiness probes
# Exactly one request each, in this order.
"$SENDRAW" "$url" version 1 >/dev/null
"$SENDRAW" "$url" hex 0badc0de >/dev/null
"$SENDRAW" "$url" version 2 >/dev/null
"$SENDRAW" "$url" version 1 >/dev/null
[[ $(lines) == $((base + 4)) ]] || fail "4 requests, $(($(lines) - base)) lines"
tail -n 4 "$trace" | sed 's/.*"verb":"\([a-z_]*\)".*"decision":"\([a-z]*\)".*/\1 \2/' >"$home/got"
printf '%s\n' "list granted" "none error" "list error" "list granted" >"$home/want"
diff "$home/want" "$home/got" >&2 || fail "trace order differs"

# Real clients: each command adds at least one line.
for cmd in "add -- true" "add --hold -- false" "hold T1" "release T1" "show T1 --json" "list"; do
	before=$(lines)
	# shellcheck disable=SC2086
	"$BIN/berth" $cmd >/dev/null || fail "berth $cmd"
	(($(lines) > before)) || fail "berth $cmd left no trace line"
done
grep -q '"from":"cli".*"verb":"hold","ticket":"T1","run":"","decision":"granted"' "$trace" ||
	fail "no granted hold of T1 from the cli"

stop
last=$(tail -n 1 "$trace" | sed 's/^{"seq":\([0-9]*\),.*/\1/')
start
"$SENDRAW" "$url" version 1 >/dev/null
stop

# Every line: all the keys, in order, and seq = previous + 1 throughout.
keys='^\{"seq":[0-9]+,"ts_ms":[0-9]+,"from":"[^"]*","instance":"[^"]*","req_id":[0-9]+,"verb":"[a-z_]+","ticket":"[^"]*","run":"[^"]*","decision":"(granted|denied|error|replayed)","reason":"([^"\\]|\\.)*","latency_us":[0-9]+\}$'
bad=$(grep -cvE "$keys" "$trace") || true
[[ $bad == 0 ]] || fail "$bad trace line(s) without the required keys"
prev=0
while IFS= read -r line; do
	seq=${line#\{\"seq\":}
	seq=${seq%%,*}
	((seq == prev + 1)) || fail "seq $seq follows $prev"
	prev=$seq
done <"$trace"
grep -q "^{\"seq\":$((last + 1))," "$trace" || fail "seq did not go on after the restart"
echo "ok"
