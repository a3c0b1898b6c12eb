#!/usr/bin/env bash
# A stop request on a run that was claimed but never started (its
# supervisor held at supervisor.after_claim): the reaper settles it
# cancelled after the grace period. Released, the supervisor's start is
# denied, and the job never executes.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/crash_lib.bash"

crash_setup cancel-claimed
export BERTH_FAILPOINTS_SUPERVISOR='supervisor.after_claim=1*pause'
crash_start --slots 2 --lease-ms 1000 --tick-ms 200 --grace-ms 500
unset BERTH_FAILPOINTS_SUPERVISOR

t=$(crash_add j1 0 0.1)
wait_until 30 test -e "$H/failpoints/supervisor.after_claim.reached" ||
	fail "the supervisor never reached the pause"
B cancel "$t" >/dev/null || fail "berth cancel"
crash_wait_settled 30 "$t"
run=$(crash_run_id "$t" 0)
[[ $(B show "$t" --json | jq -r '.runs[0].state') == cancelled ]] ||
	fail "$(B show "$t" --json)"
[[ $(crash_trace "$run" settle) == reaper:granted ]] || fail "settle: $(crash_trace "$run" settle)"

touch "$H/failpoints/supervisor.after_claim.release"
denied() { [[ $(crash_trace "$run" start) == supervisor:denied ]]; }
wait_until 30 denied || fail "start after release: $(crash_trace "$run" start)"
sleep 0.5
[[ ! -e $T/w/j1/ran ]] || fail "the cancelled job executed"
[[ $(crash_state "$t") == cancelled ]] || fail "ticket $(crash_state "$t")"
[[ $(B show "$t" --json | jq '.runs | length') == 1 ]] || fail "a second run was made"
crash_invariants
echo ok
