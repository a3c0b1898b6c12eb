#!/usr/bin/env bash
# The launcher restarts an actor that dies: kill -9 of the coordinator and
# of the supervisor each give a new process, a restart count in status and
# launch/<actor>.restarts, a line with the exit status in launcher.log, and
# a group that still runs jobs. Quick deaths back off (100 ms, 200 ms, ...).
set -u
source "$(dirname "$0")/lib.sh"
berth_test_init launch_restart

berth_launch
for a in supervisor recovery reaper; do
	wait_for 30 actor_up "$a"
done

new_pid() { # actor old-pid: a different live pid is recorded
	local p
	p=$(actor_pid "$1") && [[ -n $p && $p != "$2" ]] && actor_up "$1"
}

# --- the coordinator
old=$(actor_pid coordinator)
kill -9 "$old"
wait_for 30 new_pid coordinator "$old"
wait_for 30 berth status
assert_eq 1 "$(actor_restarts coordinator)" "coordinator restarts"
grep -q "coordinator pid $old died after [0-9]* ms: killed by signal 9 (SIGKILL); restart #1" \
	"$BERTH_HOME/launch/launcher.log" || fail "no restart line: $(tail -5 "$BERTH_HOME/launch/launcher.log")"
out=$("$BERTH_BIN/berth-launch" status --home "$BERTH_HOME") || fail "status after restart: $out"
grep -Eq "^coordinator +$(actor_pid coordinator) +up +1\$" <<<"$out" || fail "status: $out"
assert_eq 1 "$(actor_count coordinator)" "coordinators"
pass "a killed coordinator is restarted and counted"

# --- the supervisor, with a job before and after
mkdir -p "$BERTH_TEST_DIR/w"
t1=$(berth add --workdir "$BERTH_TEST_DIR/w" -- sh -c 'echo ran >>ran') || fail "add"
wait_for 30 ticket_is "$t1" succeeded
old=$(actor_pid supervisor)
kill -9 "$old"
wait_for 30 new_pid supervisor "$old"
assert_eq 1 "$(actor_restarts supervisor)" "supervisor restarts"
grep -q "supervisor pid $old died after [0-9]* ms: killed by signal 9 (SIGKILL); restart #1" \
	"$BERTH_HOME/launch/launcher.log" || fail "no supervisor restart line"
t2=$(berth add --workdir "$BERTH_TEST_DIR/w" -- sh -c 'echo ran >>ran') || fail "add"
wait_for 30 ticket_is "$t2" succeeded
assert_eq 2 "$(wc -l <"$BERTH_TEST_DIR/w/ran")" "executions"
pass "a killed supervisor is restarted and jobs run again"

# --- quick deaths back off: the delay doubles for each death within 10 s.
for n in 2 3; do
	old=$(actor_pid supervisor)
	kill -9 "$old"
	wait_for 30 new_pid supervisor "$old"
done
assert_eq 3 "$(actor_restarts supervisor)" "supervisor restarts"
# #2 follows an incarnation that may have lived 10 s on a slow machine (its
# delay starts over), #3 one that lived milliseconds: twice the delay.
d2=$(sed -n 's/.*supervisor pid .* restart #2 in \([0-9]*\) ms/\1/p' "$BERTH_HOME/launch/launcher.log")
d3=$(sed -n 's/.*supervisor pid .* restart #3 in \([0-9]*\) ms/\1/p' "$BERTH_HOME/launch/launcher.log")
[[ -n $d2 && -n $d3 ]] || fail "no restart delays: $(grep supervisor "$BERTH_HOME/launch/launcher.log")"
assert_eq $((d2 * 2)) "$d3" "delay of restart #3 (#2 waited $d2 ms)"
pass "repeated deaths back off"

# --- an actor that exits by itself is restarted too; the status is logged.
old=$(actor_pid reaper)
kill -TERM "$old"
wait_for 30 new_pid reaper "$old"
grep -Eq "reaper pid $old died after [0-9]+ ms: (exit status 0|killed by signal 15)" \
	"$BERTH_HOME/launch/launcher.log" || fail "no reaper line: $(grep reaper "$BERTH_HOME/launch/launcher.log")"
assert_eq 1 "$(actor_restarts reaper)" "reaper restarts"

check_invariants
pass "every death is logged with its status"
