#!/usr/bin/env bash
# A supervisor that dies between spawning the shim and telling it to go (or
# handing a shim spawned ahead its run) leaves no job behind (DESIGN §6): the shim, still waiting for its go byte,
# dies with it, and the job never executes -- whether the crash comes before
# `start` (run still claimed) or after it was granted (run recorded
# running). Recovery then abandons the run (no attempt spent on the retry
# budget) and a new supervisor runs the job exactly once.
set -u
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/supervise_lib.bash"
supervise_init crash

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
	# its go pipe) and never marked the job started; so is every shim it
	# had spawned ahead.
	shim_gone() {
		! ps -eo args= | grep -v grep | grep -q -- "berth-shim .*-- $BERTH_HOME\( \|$\)"
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

# The unfused path's windows (a supervisor with one of their points armed
# takes that path: docs/RECOVERY.md) ...
scenario supervisor.after_spawn claimed
scenario supervisor.before_start claimed
scenario supervisor.after_start running
# ... and the fused path's one: the claim recorded the run running with a
# shim spawned ahead, which has not had its hand-off.
scenario supervisor.before_handoff running
echo PASS
