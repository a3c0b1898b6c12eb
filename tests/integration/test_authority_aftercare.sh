#!/usr/bin/env bash
# Whoever is granted the exit checkpoint owns the run's aftercare, and only
# its death (by process identity) hands it on: never a lease that lapsed
# (DESIGN §4 settle, §7; issue 10). The supervisor is held at
# supervisor.before_settle (pause), right after its record_exit was
# granted, far past its 1 s lease: recovery must leave the run in
# aftercare. Then the supervisor is killed: recovery finishes the aftercare
# and settles the run, with the job's real exit code.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/crash_lib.bash"

crash_setup aftercare
crash_arm_once supervisor 'supervisor.before_settle=1*pause'
crash_start --slots 1 --lease-ms 1000 --tick-ms 200

t=$(crash_add j1 5 0.1)
reached=$H/failpoints/supervisor.before_settle.reached
wait_until 30 test -e "$reached" || fail "the supervisor never reached the pause"
sup=$(cat "$T/armed.supervisor") || fail "the armed supervisor left no pid"
run=$(crash_run_id "$t" 0)
[[ $(crash_trace "$run" record_exit) == "supervisor:granted" ]] ||
	fail "record_exit: $(crash_trace "$run" record_exit)"

# Three recovery passes after the lease ran out, the run is still the
# paused supervisor's.
exp=$(db_query "SELECT l.expires_ms FROM leases l WHERE l.run_id = '$run'")
[[ -n $exp ]] || fail "the run in aftercare holds no lease"
wait_until 60 recovery_passes_after "$exp" 3 ||
	fail "recovery made no three passes after the lease ran out"
state=$(db_query "SELECT state FROM runs WHERE id = '$run'")
[[ $state == aftercare ]] || fail "run is $state while its aftercare owner lives: $(B show "$t" --json)"
[[ -z $(crash_trace "$run" settle) ]] || fail "settled behind a live owner: $(crash_trace "$run" settle)"
alive "$sup" || fail "the supervisor died while paused"

# Its owner dead, recovery takes the aftercare over.
kill -KILL "$sup"
crash_wait_settled 30 "$t"
[[ $(crash_trace "$run" settle) == "recovery:granted" ]] ||
	fail "settle decisions: $(crash_trace "$run" settle | tr '\n' ' ')"
crash_check_job "$t" j1 5
crash_invariants
echo ok
