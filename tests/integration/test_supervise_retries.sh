#!/usr/bin/env bash
# Retries: a job that fails twice with --retries 2 runs three times, each
# attempt a run of its own, with the coordinator's backoff between them
# (base 300 ms, doubling); one that always fails ends failed after three.
set -u
BIN=${BERTH_BIN:-$(cd "$(dirname "$0")/../../build/bin" && pwd)}
tmp=$(mktemp -d /tmp/berth-sup-retries.XXXXXX)
export BERTH_HOME=$tmp/home
unset BERTH_TIMEOUT BERTH_FAILPOINTS BERTH_FAILPOINTS_SHIM
mkdir -p "$BERTH_HOME"
coord= sup= extra=

# Start time (field 22 of /proc/PID/stat) of a live process, or nothing.
start_time() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	set -- $s
	echo "${20}"
}
# The job groups this test's runs left behind, killed only while their
# recorded leader (the shim) is still the same process.
kill_jobs() {
	local pgid st
	[ -f "$BERTH_HOME/berth.db" ] || return 0
	sqlite3 "file:$BERTH_HOME/berth.db?mode=ro" \
		"SELECT pgid, start_time FROM runs WHERE pgid IS NOT NULL" 2>/dev/null |
		while IFS='|' read -r pgid st; do
			[ "$(start_time "$pgid")" = "$st" ] && kill -KILL -- "-$pgid" 2>/dev/null
		done
}
# 0 while PID is a live process (not a zombie).
alive() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	[ "${s:0:1}" != Z ]
}
# Stops everything this test started, the supervisor first. An actor that
# does not stop within 15 s of SIGTERM fails the test (a graceful stop must
# never hang), and so does a sanitizer build's report in any actor's log
# (written as it exits).
cleanup() {
	local rc=$? p i
	kill_jobs
	for p in $sup $extra $coord; do
		kill "$p" 2>/dev/null || continue
		for i in $(seq 1 300); do
			alive "$p" || break
			sleep 0.05
		done
		if alive "$p"; then
			echo "FAIL: $p ($(tr '\0' ' ' < "/proc/$p/cmdline")) did not stop on SIGTERM;" \
				"wchan $(cat "/proc/$p/wchan" 2>/dev/null)" >&2
			kill -KILL "$p"
			rc=1
		fi
		wait "$p" 2>/dev/null
	done
	if grep -q -e 'ERROR: [A-Za-z]*Sanitizer' -e 'runtime error:' "$tmp"/*.log 2>/dev/null; then
		echo "FAIL: sanitizer report:" >&2
		grep -h -A20 -e 'ERROR: [A-Za-z]*Sanitizer' -e 'runtime error:' "$tmp"/*.log >&2
		rc=1
	fi
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*" >&2
	for f in "$tmp"/*.log; do
		echo "--- $f" >&2
		tail -n 40 "$f" >&2
	done
	exit 1
}
B() { "$BIN/berth" "$@"; }
# wait_until SECONDS COMMAND...: polls until COMMAND succeeds.
wait_until() {
	local limit=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$limit" ] || return 1
		sleep 0.05
	done
}
# A jq expression over `show ID --json` must print the expected value.
expect() {
	local id=$1 expr=$2 want=$3 got
	got=$(B show "$id" --json | jq -c "$expr") || fail "show $id --json"
	[ "$got" = "$want" ] || fail "show $id: $expr = $got, want $want"
}
jqshow() { B show "$1" --json | jq -r "$2"; }
start_coord() {
	"$BIN/berth-coordinator" --home "$BERTH_HOME" "$@" 2>>"$tmp/coordinator.log" &
	coord=$!
	wait_until 30 B list >/dev/null 2>&1 || fail "coordinator did not come up"
}
start_sup() {
	"$BIN/berth-supervisor" --home "$BERTH_HOME" "$@" 2>>"$tmp/supervisor.log" &
	sup=$!
}
# berth wait with a generous deadline; the status is returned.
bwait() { B wait "$@" --timeout 120s >/dev/null; }

start_coord --backoff-ms 300
start_sup --tick-ms 200

# Fails on its first two runs, succeeds on the third.
t1=$(B add --retries 2 -- sh -c '
	echo run >> "$1"
	[ "$(wc -l < "$1")" -ge 3 ]' sh "$tmp/count1") || fail "add"
t2=$(B add --retries 2 -- sh -c 'echo run >> "$1"; exit 1' sh "$tmp/count2") || fail "add"
bwait "$t1" || fail "$t1 should succeed on its third run"
bwait "$t2"
[ $? -eq 1 ] || fail "$t2 should fail for good"

[ "$(wc -l < "$tmp/count1")" -eq 3 ] || fail "$t1 ran $(wc -l < "$tmp/count1") times"
[ "$(wc -l < "$tmp/count2")" -eq 3 ] || fail "$t2 ran $(wc -l < "$tmp/count2") times"
expect "$t1" .state '"succeeded"'
expect "$t1" .attempts 3
expect "$t1" '[.runs[] | .state]' '["failed","failed","succeeded"]'
expect "$t1" '[.runs[] | .exit_code]' '[1,1,0]'
expect "$t1" '[.runs[] | .attempt]' '[1,2,3]'
expect "$t2" .state '"failed"'
expect "$t2" '[.runs[] | .state]' '["failed","failed","failed"]'

# The backoff: attempt n+1 is claimed no sooner than base * 2^(n-1) after
# attempt n settled.
for t in "$t1" "$t2"; do
	gaps=$(jqshow "$t" '[range(1; .runs | length) as $i |
		.runs[$i].claimed_ms - .runs[$i - 1].settled_ms] | map(tostring) | join(" ")')
	set -- $gaps
	[ "$#" -eq 2 ] || fail "$t: gaps '$gaps'"
	[ "$1" -ge 300 ] || fail "$t: second attempt after $1 ms, backoff is 300"
	[ "$2" -ge 600 ] || fail "$t: third attempt after $2 ms, backoff is 600"
done
echo PASS
