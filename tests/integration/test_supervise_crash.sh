#!/usr/bin/env bash
# A supervisor that dies between spawning the shim and telling it to go
# leaves no job behind (DESIGN §6): the shim, still waiting for its go byte,
# dies with it, and the job never executes -- whether the crash comes before
# `start` (run still claimed) or after it was granted (run recorded
# running). Recovery then abandons the run (no attempt spent on the retry
# budget) and a new supervisor runs the job exactly once.
set -u
BIN=${BERTH_BIN:-$(cd "$(dirname "$0")/../../build/bin" && pwd)}
tmp=$(mktemp -d /tmp/berth-sup-crash.XXXXXX)
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

start_coord

# scenario POINT STATE: crash the supervisor at POINT; the run is left STATE.
scenario() {
	local point=$1 state=$2 t run rc
	echo "== $point"
	BERTH_FAILPOINTS="$point=crash" start_sup --tick-ms 200
	t=$(B add --retries 0 -- sh -c 'echo ran >> "$1"' sh "$tmp/ran-$point") || fail "add"
	{ wait "$sup"; } 2>/dev/null
	rc=$?
	sup=
	[ "$rc" -eq 137 ] || fail "$point: the supervisor should have crashed (SIGKILL), exited $rc"

	run=$(jqshow "$t" '.runs[0].id')
	expect "$t" '.runs[0].state' "\"$state\""
	# The shim it spawned is gone (PR_SET_PDEATHSIG, or end of file on
	# its go pipe) and never marked the job started.
	shim_gone() {
		! ps -eo args= | grep -v grep | grep -q "berth-shim $BERTH_HOME $run"
	}
	wait_until 30 shim_gone || fail "$point: the shim outlived the crashed supervisor"
	[ ! -e "$BERTH_HOME/runs/$run/started" ] || fail "$point: the job was marked started"
	sleep 0.5
	[ ! -e "$tmp/ran-$point" ] || fail "$point: the job ran without its go"

	"$BIN/berth-recovery" --home "$BERTH_HOME" --tick-ms 200 2>>"$tmp/recovery.log" &
	extra=$!
	start_sup --tick-ms 200
	bwait "$t" || fail "$point: the ticket did not succeed after recovery"
	[ "$(cat "$tmp/ran-$point")" = ran ] ||
		fail "$point: the job ran $(wc -l < "$tmp/ran-$point") times, want once"
	expect "$t" '[.runs[] | .state]' '["aborted","succeeded"]'
	kill "$sup" "$extra"
	wait "$sup" "$extra"
	sup= extra=
}

scenario supervisor.after_spawn claimed
scenario supervisor.before_start claimed
scenario supervisor.after_start running
echo PASS
