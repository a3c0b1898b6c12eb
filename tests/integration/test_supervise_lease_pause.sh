#!/usr/bin/env bash
# A run's lease tells the truth after its supervisor was paused (DESIGN §4,
# §6): the supervisor is stopped with SIGSTOP past the lease TTL while its
# job runs, so the lease lapses and nobody may renew it; recovery sees the
# lapsed lease, finds the owner and the job alive, and moves nothing. After
# SIGCONT the supervisor's renewal is denied (renewal is strict), it re-arms
# the lease with readopt of its own run, and lease_expires_ms is in the
# future again, and stays so, for as long as the job lives.
set -u
source "$(dirname "$0")/lib.sh"
berth_test_init supervise_lease_pause
berth_launch --slots 1 --lease-ms 1000 --tick-ms 100

gate=$BERTH_TEST_DIR/gate
t=$(B add -- sh -c "while [ ! -e '$gate' ]; do sleep 0.05; done") || fail "add"
wait_for 30 run_is "$t" 0 running
run=$(run_field "$t" 0 id)
owner=$(run_field "$t" 0 owner)
now_ms() { date +%s%3N; }
lease() { run_field "$t" 0 lease_expires_ms; }
lease_future() {
	local e
	e=$(lease) && [[ $e != null ]] && ((e > $(now_ms)))
}
lease_lapsed() {
	local e
	e=$(lease) && [[ $e != null ]] && ((e <= $(now_ms)))
}
lease_future || fail "a running job's lease is not in the future: $(lease)"

sup=$(actor_pid supervisor)
kill -STOP "$sup" || fail "SIGSTOP"
wait_until 10 lease_lapsed || { kill -CONT "$sup"; fail "the lease did not lapse while paused"; }
# Two recovery passes after the lease lapsed: recovery looks and leaves it.
exp=$(lease)
wait_until 30 recovery_passes_after "$exp" 2 ||
	{ kill -CONT "$sup"; fail "recovery made no two passes after the lease lapsed"; }
assert_eq running "$(run_field "$t" 0 state)" "state while the supervisor is paused"
assert_eq "$owner" "$(run_field "$t" 0 owner)" "owner while the supervisor is paused"
kill -CONT "$sup" || fail "SIGCONT"

wait_until 10 lease_future || fail "the lease was not re-armed after SIGCONT: $(lease), now $(now_ms)"
# It stays true while the job lives: sampled over three TTLs.
for i in $(seq 1 15); do
	lease_future || fail "sample $i: lease_expires_ms $(lease) is not in the future"
	assert_eq running "$(run_field "$t" 0 state)" "sample $i"
	sleep 0.2
done
tr=$(jq -r --arg r "$run" 'select(.run == $r and .verb == "readopt")
	| .from + ":" + .decision' "$BERTH_HOME/trace/trace.jsonl" | sort -u | tr '\n' ' ')
assert_eq "supervisor:granted " "$tr" "readopts of the run"
assert_eq "$owner" "$(run_field "$t" 0 owner)" "owner after the re-arm"
[[ $(actor_pid supervisor) == "$sup" ]] || fail "the supervisor was restarted"

touch "$gate"
wait_for 30 ticket_is "$t" succeeded
assert_eq null "$(run_field "$t" 0 lease_expires_ms)" "a settled run's lease"
check_invariants
pass "a paused supervisor's lease lapsed, moved nothing, and was re-armed while the job lived"
