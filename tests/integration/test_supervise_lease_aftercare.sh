#!/usr/bin/env bash
# A run in aftercare keeps a truthful lease and its capture facts:
#  1. settle is refused by a failpoint (supervisor.before_settle=60*error,
#     about three lease TTLs): the run sits in aftercare with its supervisor
#     alive, and the supervisor renews it there too, so lease_expires_ms
#     stays in the future and recovery leaves it alone; the output size and
#     capture_complete are already recorded (they came with record_exit);
#     the supervisor settles it in the end, and nobody else does.
#  2. the supervisor pauses before its settle (supervisor.before_settle=
#     1*pause): the settle has not happened, and the run already shows its
#     capture facts; released, it settles with them.
set -u
source "$(dirname "$0")/lib.sh"
berth_test_init supervise_lease_aftercare
now_ms() { date +%s%3N; }
settles() {
	jq -r --arg r "$1" 'select(.run == $r and .verb == "settle") | .from + ":" + .decision' \
		"$BERTH_HOME/trace/trace.jsonl" | tr '\n' ' '
}

# ------------------------------------------------------------------ 1
export BERTH_FAILPOINTS_SUPERVISOR='supervisor.before_settle=60*error'
berth_launch --slots 1 --lease-ms 2000 --tick-ms 100
unset BERTH_FAILPOINTS_SUPERVISOR
t=$(B add -- sh -c 'echo hello; exit 3') || fail "add"
wait_for 30 run_is "$t" 0 aftercare
run=$(run_field "$t" 0 id)
t0=$(now_ms)
samples=0
while [[ $(run_field "$t" 0 state) == aftercare ]]; do
	e=$(run_field "$t" 0 lease_expires_ms)
	n=$(now_ms)
	# a state read just before the settle may see the lease gone with it
	if [[ $e == null ]]; then
		[[ $(run_field "$t" 0 state) == aftercare ]] && fail "a run in aftercare has no lease"
		break
	fi
	((e > n)) || fail "in aftercare $((n - t0)) ms: lease_expires_ms $e is not in the future ($n)"
	assert_eq 6 "$(run_field "$t" 0 output_bytes)" "output_bytes in aftercare"
	assert_eq true "$(run_field "$t" 0 capture_complete)" "capture_complete in aftercare"
	samples=$((samples + 1))
	sleep 0.1
done
held=$(($(now_ms) - t0))
# sixty refused settles, one a tick: well past the 2 s TTL
((held >= 4500)) || fail "the run left aftercare after only $held ms"
((samples >= 3)) || fail "only $samples samples in aftercare"
wait_for 30 ticket_is "$t" failed
assert_eq "supervisor:granted " "$(settles "$run")" "settles of the run"
assert_eq failed "$(run_field "$t" 0 state)" "outcome"
assert_eq 3 "$(run_field "$t" 0 exit_code)" "exit code"
assert_eq 6 "$(run_field "$t" 0 output_bytes)" "output_bytes after settle"
berth_stop

# ------------------------------------------------------------------ 2
export BERTH_FAILPOINTS_SUPERVISOR='supervisor.before_settle=1*pause'
berth_launch --slots 1 --lease-ms 60000 --tick-ms 100
unset BERTH_FAILPOINTS_SUPERVISOR
reached=$BERTH_HOME/failpoints/supervisor.before_settle.reached
t=$(B add -- sh -c 'printf 0123456789') || fail "add"
wait_for 30 test -e "$reached"
run=$(run_field "$t" 0 id)
assert_eq aftercare "$(run_field "$t" 0 state)" "state at the paused settle"
assert_eq "" "$(settles "$run")" "settles before the pause is released"
assert_eq 10 "$(run_field "$t" 0 output_bytes)" "output_bytes before any settle"
assert_eq true "$(run_field "$t" 0 capture_complete)" "capture_complete before any settle"
touch "$BERTH_HOME/failpoints/supervisor.before_settle.release"
wait_for 30 ticket_is "$t" succeeded
assert_eq "supervisor:granted " "$(settles "$run")" "settles of the run"
assert_eq 10 "$(run_field "$t" 0 output_bytes)" "output_bytes after settle"
check_invariants
pass "aftercare: the lease stayed true, the capture facts came with the exit"
