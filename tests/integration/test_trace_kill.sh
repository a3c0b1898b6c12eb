#!/usr/bin/env bash
# A SIGKILLed supervisor, drawn as a death: `berth trace --svg` of its
# ticket ends the killed process's lifeline at its death (from
# launch/launcher.log), draws the launcher's restart as a new lifeline for
# the new process, and the text timeline says both; recovery's readopt of
# the orphaned run says whose lease it was.
#
# BERTH_TRACE_SVG_OUT=FILE keeps a copy of the picture.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/trace_lib.bash"

tr_setup kill
tr_start --slots 1 --lease-ms 1000 --tick-ms 200
old=$(cat "$H/launch/supervisor.pid")
t=$(B add --name slow --workdir "$T/w" -- sh -c 'sleep 2; exit 4') || fail "add"
wait_until 30 ticket_is "$t" claimed || fail "never claimed"
running() { [[ $(B show "$t" --json | jq -r '.runs[0].state') == running ]]; }
wait_until 30 running || fail "never running"
kill -9 "$old"
wait_until 30 grep -q "supervisor pid $old died" "$H/launch/launcher.log" || fail "no death logged"
B wait "$t" --timeout 60s >/dev/null
B wait --exit-code "$t" >/dev/null
assert_eq 4 $? "wait --exit-code after the restart"
# The launcher restarts it 100 ms after its death; the job may have been
# settled (by recovery) before that.
restarted() { [[ -n $(actor_pid supervisor) && $(actor_pid supervisor) != "$old" ]]; }
wait_for 30 restarted
new=$(cat "$H/launch/supervisor.pid")
assert_ne "$old" "$new" "the supervisor's pid"

B trace --ticket "$t" --no-reads >"$T/timeline" || fail "trace"
grep -q "supervisor [0-9a-f]\{8\}  *\[died\] killed by signal 9 (SIGKILL)" "$T/timeline" ||
	fail "the timeline does not show the death: $(cat "$T/timeline")"
grep -q "\[restarted\] restarted by the launcher" "$T/timeline" ||
	fail "the timeline does not show the restart: $(cat "$T/timeline")"
B trace --ticket "$t" --json | jq -e -s 'any(.[]; .source == "launcher" and .event == "died")' \
	>/dev/null || fail "--json lacks the death"

B trace --ticket "$t" --no-reads --svg "$T/kill.svg" 2>/dev/null || fail "--svg"
[[ -n ${BERTH_TRACE_SVG_OUT:-} ]] && cp "$T/kill.svg" "$BERTH_TRACE_SVG_OUT"
tr_wellformed "$T/kill.svg" || fail "the SVG is not well-formed"
tr_renders "$T/kill.svg" || fail "rsvg-convert cannot draw the SVG"
# Two supervisor lifelines: the killed one and the restarted one.
[[ $(grep -c '<g class="lifeline" data-actor="supervisor"' "$T/kill.svg") == 2 ]] ||
	fail "want two supervisor lifelines"
[[ $(grep -c '<g class="mark death"' "$T/kill.svg") == 1 ]] || fail "no death drawn"
grep -q 'died: killed by signal 9 (SIGKILL)' "$T/kill.svg" || fail "the death is not named"
[[ $(grep -c '<g class="mark restart"' "$T/kill.svg") == 1 ]] || fail "no restart drawn"
# The killed lifeline ends at its death: no graceful end cross.
! grep -q '<path class="end"' "$T/kill.svg" || fail "a killed lifeline drawn as a graceful end"
# The new supervisor finished the run: its record_exit says the exit.
grep -q 'granted exit 4' "$T/kill.svg" || fail "the exit code is not on record_exit"
check_invariants
pass "a killed supervisor is drawn as a death, its restart as a new lifeline"
