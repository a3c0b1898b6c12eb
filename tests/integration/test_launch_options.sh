#!/usr/bin/env bash
# What the launcher hands each actor: its timings on the command line and
# BERTH_FAILPOINTS_<ACTOR> as BERTH_FAILPOINTS (to that actor only); actors
# whose binary is missing are skipped; --foreground runs the monitor in the
# caller; a start after the monitor was SIGKILLed ends the orphaned actors
# so there is still one of each.
set -u
source "$(dirname "$0")/lib.sh"
berth_test_init launch_options

cmdline() { tr '\0' ' ' <"/proc/$(actor_pid "$1")/cmdline"; }
environ() { tr '\0' '\n' <"/proc/$(actor_pid "$1")/environ"; }

export BERTH_FAILPOINTS=coordinator.before_commit=crash # never inherited
export BERTH_FAILPOINTS_SUPERVISOR='supervisor.after_claim=sleep(1)'
berth_launch --slots 3 --lease-ms 1500 --tick-ms 150 --grace-ms 400 --retention 2h --backoff-ms 250
unset BERTH_FAILPOINTS BERTH_FAILPOINTS_SUPERVISOR
for a in supervisor recovery reaper; do
	wait_for 30 actor_up "$a"
done
assert_match "berth-coordinator --home $BERTH_HOME --lease-ms 1500 --backoff-ms 250 $" \
	"$(cmdline coordinator)" "coordinator command line"
assert_match "berth-supervisor --home $BERTH_HOME --slots 3 --lease-ms 1500 --tick-ms 150 $" \
	"$(cmdline supervisor)" "supervisor command line"
assert_match "berth-recovery --home $BERTH_HOME --lease-ms 1500 --tick-ms 150 $" \
	"$(cmdline recovery)" "recovery command line"
assert_match "berth-reaper --home $BERTH_HOME --tick-ms 150 --grace-ms 400 --retention 2h $" \
	"$(cmdline reaper)" "reaper command line"
grep -q "recovery-once pid [0-9]*: .*berth-recovery --home $BERTH_HOME --lease-ms 1500 --tick-ms 150 --once" \
	"$BERTH_HOME/launch/launcher.log" || fail "no first recovery pass in launcher.log"
grep -qx 'BERTH_FAILPOINTS=supervisor.after_claim=sleep(1)' <(environ supervisor) ||
	fail "the supervisor did not get its failpoints"
for a in coordinator recovery reaper; do
	! grep -q '^BERTH_FAILPOINTS=' <(environ "$a") || fail "$a got failpoints"
done
grep -qx "BERTH_HOME=$BERTH_HOME" <(environ coordinator) || fail "BERTH_HOME not exported"
pass "timings and failpoints reach their actors"

# The monitor killed outright: its actors live on, and the next start ends
# them before starting its own.
mon=$(cat "$BERTH_HOME/launch/launcher.pid")
old=$(actor_pid coordinator)
kill -9 "$mon"
wait_for 10 gone "$mon"
alive "$old" || fail "the coordinator died with the monitor"
"$BERTH_BIN/berth-launch" status --home "$BERTH_HOME" >/dev/null
assert_eq 3 $? "status with the monitor gone"
berth_launch
for a in supervisor recovery reaper; do
	wait_for 30 actor_up "$a"
done
gone "$old" || fail "the orphaned coordinator $old still runs"
for a in coordinator supervisor recovery reaper; do
	assert_eq 1 "$(actor_count "$a")" "$a processes after restart over orphans"
done
grep -q "ending leftover coordinator pid $old" "$BERTH_HOME/launch/launcher.log" ||
	fail "leftover not logged"
berth_stop
pass "a start after a killed monitor leaves one of each actor"

# Missing actors: a bin/ with only the coordinator and the CLI.
mkdir -p "$BERTH_TEST_DIR/bin"
cp "$BERTH_BIN/berth-launch" "$BERTH_TEST_DIR/bin/"
ln -s "$BERTH_BIN/berth-coordinator" "$BERTH_BIN/berth" "$BERTH_TEST_DIR/bin/"
L=$BERTH_TEST_DIR/bin/berth-launch
PATH=$BERTH_TEST_DIR/bin:/usr/bin:/bin "$L" start --home "$BERTH_HOME" >"$BERTH_TEST_DIR/out" 2>&1 ||
	fail "start with missing actors: $(cat "$BERTH_TEST_DIR/out")"
out=$(PATH=$BERTH_TEST_DIR/bin:/usr/bin:/bin "$L" status --home "$BERTH_HOME")
assert_eq 0 $? "status with only the coordinator"
for a in supervisor recovery reaper; do
	grep -Eq "^$a +- +absent" <<<"$out" || fail "status of missing $a: $out"
	grep -q "berth-$a not found" "$BERTH_HOME/launch/launcher.log" || fail "no log line for $a"
done
grep -Eq "^coordinator +[0-9]+ +up" <<<"$out" || fail "status: $out"
"$L" stop --home "$BERTH_HOME" >/dev/null || fail "stop"
pass "missing actors are skipped and shown absent"

# --foreground: the monitor is the caller; SIGTERM stops the group.
"$BERTH_BIN/berth-launch" start --foreground --home "$BERTH_HOME" --tick-ms 100 \
	>"$BERTH_TEST_DIR/fg.out" 2>&1 &
fg=$!
wait_for 30 berth status
wait_for 30 actor_up supervisor
assert_eq "$fg" "$(cat "$BERTH_HOME/launch/launcher.pid")" "monitor pid in the foreground"
# The line comes once the reaper and recovery are started too, a moment
# after the supervisor is up.
wait_for 30 grep -q "group running" "$BERTH_TEST_DIR/fg.out"
kill -TERM "$fg"
wait "$fg"
assert_eq 0 $? "foreground exit status"
for a in coordinator supervisor recovery reaper; do
	assert_eq 0 "$(actor_count "$a")" "$a after the foreground monitor stopped"
done
pass "--foreground runs the monitor in the caller"
