#!/usr/bin/env bash
# Kills keep the facts, and nothing the job started outlives its run:
# - a --timeout job that ignores SIGTERM is SIGKILLed after the grace and its
#   run records signal 9 (the shim outlives the kill of the job's group);
# - descendants that left the job's session (setsid, env -i setsid: no
#   berth variable left to find them by) are ended when the run settles,
#   at its timeout, and by `berth-launch stop --kill-jobs`; `show` says how
#   many stragglers were ended.
set -u
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/exhaust_lib.bash"

berth_test_init exhaust_kill_facts
trap exhaust_cleanup EXIT
W=$BERTH_TEST_DIR/w
berth_launch --slots 4 --grace-ms 700

# Two descendants leave the session (one with no environment at all), one
# stays in the job's group; their pids go to the job's workdir.
leave='setsid sh -c "echo \$\$ >ss1; exec sleep 300" & env -i setsid sh -c "echo \$\$ >ss2; exec sleep 301" &
	sleep 302 & echo $! >bg
	while [ ! -s ss1 ] || [ ! -s ss2 ]; do sleep 0.02; done; echo ran >>ran'
mkdir -p "$W/timeout" "$W/done" "$W/kill"
tt=$(B add --workdir "$W/timeout" --timeout 1s -- sh -c "trap '' TERM; $leave; sleep 300") || fail "add"
td=$(B add --workdir "$W/done" -- sh -c "$leave; exit 0") || fail "add"
tk=$(B add --workdir "$W/kill" -- sh -c "$leave; sleep 300") || fail "add"

pids_of() { cat "$W/$1/ss1" "$W/$1/ss2" "$W/$1/bg" 2>/dev/null; }
started() { [[ -s $W/$1/ran ]]; }
for j in timeout done kill; do
	wait_for 60 started "$j"
	exhaust_track $(pids_of "$j")
done
gone() {
	local p
	for p in $(pids_of "$1"); do
		alive "$p" && return 1
	done
	return 0
}

wait_for 60 ticket_is "$tt" failed
expect "$tt" '.runs[0] | {state, exit_code, signal}' '{"state":"timed_out","exit_code":null,"signal":9}'
gone timeout || fail "descendants of a timed-out run survived: $(pids_of timeout)"
n=$(B show "$tt" --json | jq '.runs[0].stragglers')
((n >= 2)) || fail "timed out: $n stragglers recorded, want the two that left the session"
grep -q "run $tt-r1: grace period over: SIGKILL" "$BERTH_HOME/launch/reaper.log" ||
	fail "no SIGKILL after the grace"

wait_for 60 ticket_is "$td" succeeded
gone done || fail "descendants of a settled run survived: $(pids_of done)"
expect "$td" '.runs[0] | {exit_code, stragglers}' '{"exit_code":0,"stragglers":3}'
B show "$td" | grep -q 'stragglers: 3 processes the job left behind, ended' ||
	fail "show does not report the stragglers: $(B show "$td")"

berth_stop --kill-jobs
gone kill || fail "descendants survived --kill-jobs: $(pids_of kill)"
for p in $(pids_of kill); do
	alive "$p" && fail "pid $p survived --kill-jobs"
done
pass "timeout after the grace records signal 9; setsid and env -i setsid descendants ended at settle (3 stragglers), timeout ($n) and --kill-jobs"
