#!/usr/bin/env bash
# Runtime control of a running group: berth slots changes the running
# supervisor's slots (more jobs at once, at once), berth pause / resume stop
# and restart claiming while running jobs go on, both survive a SIGKILL of
# the supervisor and are forgotten by the next launch; berth up on a
# running group with other options says so and exits 1 (it said "already
# running" and exited 0); edit changes a queued ticket; remove and clean
# delete finished tickets with their runs/<run>/ data.
set -u
source "$(dirname "$0")/lib.sh"
berth_test_init cli_control
berth_launch --slots 1
w=$BERTH_TEST_DIR/go

# berth up with other options on the running group: refused, exit 1.
B up --slots 4 >"$BERTH_TEST_DIR/out" 2>"$BERTH_TEST_DIR/err"
assert_eq 1 $? "berth up --slots 4 on a running group"
grep -q -- '--slots 4 (it runs with 1)' "$BERTH_TEST_DIR/err" || fail "up: $(cat "$BERTH_TEST_DIR/err")"
grep -q 'berth slots 4' "$BERTH_TEST_DIR/err" || fail "up does not point at berth slots"
B up --slots 1 >/dev/null || fail "berth up with the options it runs with"
B up >/dev/null || fail "berth up without options"

# Two long jobs, one slot: one runs. berth slots 2: both run, at once.
j1=$(B add -- sh -c "while [ ! -e '$w' ]; do sleep 0.05; done") || fail "add"
j2=$(B add -- sh -c "while [ ! -e '$w' ]; do sleep 0.05; done") || fail "add"
wait_until 30 ticket_is "$j1" claimed || fail "$j1 never ran"
never_within 1 ticket_is "$j2" claimed || fail "the second job ran with one slot"
assert_eq ready "$(ticket_state "$j2")" "the second job with one slot"
assert_eq "slots: 2 (set by berth slots; the supervisor was started with 1)" "$(B slots 2)" "berth slots 2"
wait_until 30 ticket_is "$j2" claimed || fail "berth slots 2 did not start the second job"
B slots --json | jq -e '.slots == 2 and .supervisor_slots == 1 and .paused == false' >/dev/null ||
	fail "slots --json: $(B slots --json)"
B status | grep -q '^slots: 2/2 in use (set by berth slots)' || fail "status: $(B status)"

# pause: nothing new starts; the running jobs go on.
B pause >/dev/null || fail "pause"
j3=$(B add -- echo third) || fail "add"
touch "$w"
B wait "$j1" "$j2" --timeout 60s >/dev/null || fail "running jobs did not finish while paused"
never_within 1 ticket_is "$j3" claimed || fail "a ticket was started while paused"
assert_eq ready "$(ticket_state "$j3")" "a ticket while paused"
B status | grep -q "^paused: no job is started until 'berth resume'" || fail "status: $(B status)"
# Kept across a SIGKILL of the supervisor (the launcher restarts it).
sup=$(cat "$BERTH_HOME/launch/supervisor.pid")
kill -9 "$sup"
wait_until 30 grep -q "supervisor pid $sup died" "$BERTH_HOME/launch/launcher.log" || fail "no restart"
wait_until 30 actor_up supervisor || fail "the supervisor did not come back"
never_within 1 ticket_is "$j3" claimed || fail "a ticket was started while paused, after a supervisor restart"
assert_eq ready "$(ticket_state "$j3")" "a ticket while paused, after a supervisor restart"
B resume >/dev/null || fail "resume"
B wait "$j3" --timeout 60s >/dev/null || fail "resume did not start $j3"

# edit: a queued ticket's command, environment and priority.
e=$(B add --hold --env A=1 -- echo old) || fail "add"
B edit "$e" --priority 5 --env B=2 --unset-env A -- sh -c 'echo "new ${A-unset} $B"' >/dev/null ||
	fail "edit"
expect "$e" .priority 5
B release "$e" >/dev/null
B wait "$e" --timeout 60s >/dev/null || fail "the edited ticket failed"
assert_eq "new unset 2" "$(B logs "$e")" "the edited command and environment"
B edit "$e" --priority 1 2>"$BERTH_TEST_DIR/err" && fail "edit of a finished ticket succeeded"
grep -q "$e has already finished (succeeded); nothing to edit" "$BERTH_TEST_DIR/err" ||
	fail "edit's refusal: $(cat "$BERTH_TEST_DIR/err")"

# remove: the rows and the run's directory; clean the rest.
run=$(B show "$j1" --json | jq -r '.runs[0].id')
[[ -d $BERTH_HOME/runs/$run ]] || fail "no run directory to remove"
assert_eq "$j1 removed (1 run)" "$(B remove "$j1")" "remove"
[[ ! -e $BERTH_HOME/runs/$run ]] || fail "runs/$run survived remove"
B show "$j1" 2>/dev/null && fail "a removed ticket is still shown"
q=$(B add --hold -- true) || fail "add"
B remove "$q" 2>"$BERTH_TEST_DIR/err" && fail "remove of a queued ticket succeeded"
grep -q "$q has not finished (it is held)" "$BERTH_TEST_DIR/err" || fail "remove: $(cat "$BERTH_TEST_DIR/err")"
out=$(B clean --older 1h)
assert_eq "removed 0 tickets (0 runs)" "$out" "clean --older 1h"
out=$(B clean --state succeeded --json)
jq -e '(.removed | length) == 3 and .runs == 3' <<<"$out" >/dev/null || fail "clean: $out"
[[ $(ls "$BERTH_HOME/runs" | wc -l) == 0 ]] || fail "run directories left: $(ls "$BERTH_HOME/runs")"
assert_eq 1 "$(db_query 'SELECT count(*) FROM tickets')" "tickets left"
# A removed number is never given again.
n=$(B add -- true) || fail "add"
assert_eq "T$((${q#T} + 1))" "$n" "the next ticket's id"

# A new launch forgets berth slots and pause.
B pause >/dev/null
B slots 3 >/dev/null
berth_stop
berth_launch --slots 1
B slots --json | jq -e '.slots == 1 and .paused == false' >/dev/null ||
	fail "a new launch kept the last one's settings: $(B slots --json)"
check_invariants
pass "slots, pause and resume change the running group; edit, remove, clean"
