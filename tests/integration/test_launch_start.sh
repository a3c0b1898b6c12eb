#!/usr/bin/env bash
# berth-launch start/status/stop: start is idempotent (also when two starts
# race), status lists every actor and its exit status says whether the
# group is up, stop ends every actor, and a stopped group starts again.
set -u
source "$(dirname "$0")/lib.sh"
berth_test_init launch_start

"$BERTH_BIN/berth-launch" status --home "$BERTH_HOME" >/dev/null
assert_eq 3 $? "status before start"

berth_launch
berth status >/dev/null || fail "the coordinator does not answer after start returned"
mon=$(cat "$BERTH_HOME/launch/launcher.pid")
coord=$(actor_pid coordinator)
alive "$mon" || fail "monitor $mon is not running"
actor_up coordinator || fail "no coordinator after start"
[[ $(stat -c %a "$BERTH_HOME") == 700 ]] || fail "home mode $(stat -c %a "$BERTH_HOME")"

# The rest of the group comes up without help.
for a in supervisor recovery reaper; do
	wait_for 30 actor_up "$a"
done
out=$("$BERTH_BIN/berth-launch" status --home "$BERTH_HOME")
assert_eq 0 $? "status exit with every actor up"
for a in coordinator supervisor recovery reaper; do
	grep -Eq "^$a +$(actor_pid "$a") +up +0\$" <<<"$out" || fail "status line of $a: $out"
done
pass "start brings up the group; status lists it"

# Idempotent: a second start changes nothing.
out=$("$BERTH_BIN/berth-launch" start --home "$BERTH_HOME" 2>&1)
assert_eq 0 $? "second start exit"
assert_match "already running" "$out" "second start output"
assert_eq "$mon" "$(cat "$BERTH_HOME/launch/launcher.pid")" "monitor pid after second start"
assert_eq "$coord" "$(actor_pid coordinator)" "coordinator pid after second start"
for a in coordinator supervisor recovery reaper; do
	assert_eq 1 "$(actor_count "$a")" "$a processes after second start"
done
pass "a second start leaves the running group alone"

# stop: every actor ends, status says not running, pid files are gone.
berth_stop
for a in coordinator supervisor recovery reaper; do
	assert_eq 0 "$(actor_count "$a")" "$a processes after stop"
	[[ ! -e $BERTH_HOME/launch/$a.pid ]] || fail "launch/$a.pid left after stop"
done
gone "$mon" || fail "monitor $mon still running after stop"
"$BERTH_BIN/berth-launch" status --home "$BERTH_HOME" >/dev/null
assert_eq 3 $? "status after stop"
out=$("$BERTH_BIN/berth-launch" stop --home "$BERTH_HOME")
assert_eq 0 $? "stop of a stopped group"
assert_match "not running" "$out" "stop of a stopped group"
grep -q "coordinator pid $coord ended: exit status 0" "$BERTH_HOME/launch/launcher.log" ||
	fail "the coordinator did not end cleanly: $(tail -5 "$BERTH_HOME/launch/launcher.log")"
pass "stop ends every actor"

# Two starts at once: one monitor, one of each actor.
"$BERTH_BIN/berth-launch" start --home "$BERTH_HOME" --tick-ms 100 >"$BERTH_TEST_DIR/a.out" 2>&1 &
p1=$!
"$BERTH_BIN/berth-launch" start --home "$BERTH_HOME" --tick-ms 100 >"$BERTH_TEST_DIR/b.out" 2>&1 &
p2=$!
wait "$p1" || fail "racing start 1: $(cat "$BERTH_TEST_DIR/a.out")"
wait "$p2" || fail "racing start 2: $(cat "$BERTH_TEST_DIR/b.out")"
for a in supervisor recovery reaper; do
	wait_for 30 actor_up "$a"
done
assert_eq 1 "$(count_procs "berth-launch __monitor --home $BERTH_HOME")" "monitors after racing starts"
for a in coordinator supervisor recovery reaper; do
	assert_eq 1 "$(actor_count "$a")" "$a processes after racing starts"
done
t=$(berth add -- true) || fail "add"
wait_for 30 ticket_is "$t" succeeded
check_invariants
pass "racing starts make one group, and it runs jobs"
