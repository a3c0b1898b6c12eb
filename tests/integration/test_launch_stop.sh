#!/usr/bin/env bash
# berth-launch stop leaves running jobs running; the next start adopts them
# and they settle once, with their real exit status. stop --kill-jobs ends
# every job's process group as well.
set -u
source "$(dirname "$0")/lib.sh"
berth_test_init launch_stop

berth_launch
w1=$BERTH_TEST_DIR/w1 w2=$BERTH_TEST_DIR/w2
mkdir -p "$w1" "$w2"
# Each job records its execution, then runs until its workdir holds "go".
job='echo ran >>ran; while [ ! -e go ]; do sleep 0.1; done; exit 7'

t1=$(berth add --workdir "$w1" -- sh -c "$job") || fail "add"
wait_for 30 run_is "$t1" 0 running
pg1=$(run_field "$t1" 0 pgid)
assert_match '^[0-9]+$' "$pg1" "pgid of the run"

berth_stop
for a in coordinator supervisor recovery reaper; do
	assert_eq 0 "$(actor_count "$a")" "$a processes after stop"
done
! group_gone "$pg1" || fail "stop ended the job's group $pg1"
pass "stop leaves the running job alive"

# The next start adopts it; it ends when told and settles once.
berth_launch
touch "$w1/go"
wait_for 60 ticket_is "$t1" failed
assert_eq 1 "$(wc -l <"$w1/ran")" "executions of $t1"
assert_eq 1 "$(berth show "$t1" --json | jq '.runs | length')" "runs of $t1"
assert_eq 7 "$(run_field "$t1" 0 exit_code)" "exit code of $t1"
wait_for 30 group_gone "$pg1"
pass "the next start adopts the job and records its real exit"

# --kill-jobs: the group is stopped and the job's process group ended.
t2=$(berth add --workdir "$w2" -- sh -c "$job") || fail "add"
wait_for 30 run_is "$t2" 0 running
pg2=$(run_field "$t2" 0 pgid)
berth_stop --kill-jobs
wait_for 30 group_gone "$pg2"
[[ ! -e $w2/go ]] || fail "the job was told to finish"
for a in coordinator supervisor recovery reaper; do
	assert_eq 0 "$(actor_count "$a")" "$a processes after stop --kill-jobs"
done
pass "stop --kill-jobs ends the job's process group"

# The killed job's run is settled at the next start, once, as a failure.
berth_launch
wait_for 60 ticket_is "$t2" failed
assert_eq 1 "$(wc -l <"$w2/ran")" "executions of $t2"
assert_eq 1 "$(berth show "$t2" --json | jq '.runs | length')" "runs of $t2"
check_invariants
pass "a killed job is settled once at the next start"

# A monitor that does not stop (here SIGSTOPped; in life a TERM whose trap
# bash lost) is SIGKILLed by stop, and the actors it would have stopped are
# ended by stop itself: "stopped" means no actor is left.
berth_launch
mpid=$(cat "$BERTH_HOME/launch/launcher.pid")
kill -STOP "$mpid"
BERTH_LAUNCH_STOP_MS=100 berth_stop
grep -q "did not stop; SIGKILL" "$BERTH_TEST_DIR/stop.out" || fail "stop: $(cat "$BERTH_TEST_DIR/stop.out")"
for a in coordinator supervisor recovery reaper; do
	assert_eq 0 "$(actor_count "$a")" "$a processes after the monitor was SIGKILLed"
done
pass "a monitor that does not stop is killed, and its actors are ended"
