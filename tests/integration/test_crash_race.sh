#!/usr/bin/env bash
# The exit-checkpoint race, explicitly (issue 4): the supervisor is held at
# supervisor.before_record_exit (pause) past its 1 s lease. Recovery finds
# the job gone and the lease run out, checkpoints the exit with the real
# exit code and settles. Released, the supervisor sends its own record_exit
# and is denied. The trace shows both attempts, recovery's granted first.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/crash_lib.bash"

crash_setup race
export BERTH_FAILPOINTS_SUPERVISOR='supervisor.before_record_exit=1*pause'
crash_start --slots 2 --lease-ms 1000 --tick-ms 200
unset BERTH_FAILPOINTS_SUPERVISOR

t=$(crash_add j1 7 0.2)
reached=$H/failpoints/supervisor.before_record_exit.reached
wait_until 30 test -e "$reached" || fail "the supervisor never reached the pause"
sup=$(crash_actor_pid supervisor)

# Recovery wins while the supervisor is held.
crash_wait_settled 30 "$t"
run=$(crash_run_id "$t" 0)
[[ $(crash_trace "$run" record_exit) == "recovery:granted" ]] ||
	fail "record_exit while paused: $(crash_trace "$run" record_exit)"
crash_check_job "$t" j1 7
alive "$sup" || fail "the supervisor died while paused"

# Released, the supervisor loses and does nothing more.
touch "$H/failpoints/supervisor.before_record_exit.release"
lost() { [[ $(crash_trace "$run" record_exit | tr '\n' ' ') == "recovery:granted supervisor:denied " ]]; }
wait_until 30 lost || fail "record_exit decisions: $(crash_trace "$run" record_exit | tr '\n' ' ')"
jq -r --arg run "$run" 'select(.run == $run and .verb == "record_exit" and .from == "supervisor")
	| .reason' "$H/trace/trace.jsonl" | grep -qx already_claimed ||
	fail "the supervisor's denial is not already_claimed"
sleep 0.5 # a settle after the denial would be a bug; give it a moment to show
[[ -z $(crash_trace "$run" settle | grep '^supervisor') ]] ||
	fail "the supervisor settled after its denial"
[[ $(crash_trace "$run" settle) == "recovery:granted" ]] ||
	fail "settle decisions: $(crash_trace "$run" settle | tr '\n' ' ')"
alive "$sup" || fail "the supervisor died after its denial"
crash_check_job "$t" j1 7
crash_invariants
echo ok
