#!/usr/bin/env bash
# A crashed and restarted actor in the picture: the supervisor crashes at
# supervisor.before_record_exit (after its job exited), the launcher starts
# a new supervisor, recovery checkpoints and settles the run. The diagram
# has two supervisor lifelines, the first ending in a cross, the crash
# marked on it, and recovery's record_exit granted.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/trace_lib.bash"

tr_setup restart
export BERTH_FAILPOINTS_SUPERVISOR="supervisor.before_record_exit=1*crash"
tr_start --slots 1 --lease-ms 1000 --tick-ms 200
unset BERTH_FAILPOINTS_SUPERVISOR
t=$(B add --name restart --workdir "$T/w" -- sh -c 'sleep 0.3; exit 4') || fail "add"
B wait "$t" --timeout 90s >/dev/null
[[ $(B show "$t" --json | jq -r '.runs[0].exit_code') == 4 ]] || fail "exit code: $(B show "$t" --json)"
two_supervisors() {
	B trace --json | jq -e -s '[.[] | select(.source == "coordinator" and .from == "supervisor" and .verb == "hello") | .instance] | unique | length >= 2' >/dev/null
}
wait_until 60 two_supervisors || fail "no hello from a restarted supervisor"

B trace --quiet --svg "$T/restart.svg" 2>/dev/null || fail "--svg"
B trace --quiet >&2
tr_wellformed "$T/restart.svg" || fail "the SVG is not well-formed"
n=$(grep -c '<g class="lifeline" data-actor="supervisor"' "$T/restart.svg")
((n == 2)) || fail "want 2 supervisor lifelines (before and after the crash), got $n"
grep -q '<path class="end"' "$T/restart.svg" || fail "the crashed supervisor's lifeline does not end"
grep -q '<g class="mark failpoint"' "$T/restart.svg" || fail "the crash is not marked"
grep -q 'supervisor.before_record_exit crash' "$T/restart.svg" || fail "the crash is not named"
grep -q '<g class="msg rep granted" data-seq="[0-9]*" data-verb="record_exit"' "$T/restart.svg" ||
	fail "no granted record_exit drawn"
B trace --ticket "$t" --verb record_exit --json |
	jq -e -s 'any(.[]; .source == "coordinator" and .from == "recovery" and .decision == "granted")' >/dev/null ||
	fail "recovery did not checkpoint the run"
echo "ok: a restarted supervisor gets a new lifeline"
