#!/usr/bin/env bash
# The long-poll claim is sent once per wait (DESIGN §6, issue 12): the
# supervisor's other calls (renewals, scans, hello) go on a client of their
# own and never abandon the claim the coordinator holds. An idle supervisor
# with --tick-ms 1000 --claim-wait-ms 5000 sends its claim at most twice in
# 6 s (when every reconcile pass abandoned it, it sent 7), and a ticket added
# while the claim is held still starts at once.
source "$(dirname "$0")/lib.sh"

berth_test_init supervise_claim_wait
berth_launch --tick-ms 1000 --lease-ms 30000

# The ring's claim sends of the supervisor, from MS on (ms since the epoch).
claims_since() {
	berth trace --json 2>/dev/null | jq -s --argjson t "$1" --argjson u "$2" \
		'[.[] | select(.source == "ring" and .event == "sent" and .verb == "claim" and
			.from == "supervisor" and .ts_ms >= $t and .ts_ms < $u)] | length'
}
supervisor_claims() {
	(($(claims_since 0 99999999999999) >= 1))
}
wait_for 30 supervisor_claims

# Six idle seconds, measured on the ring's own clock.
t0=$(($(date +%s%N) / 1000000))
sleep 6
t1=$((t0 + 6000))
n=$(claims_since "$t0" "$t1")
decided=$(jq -s --argjson t "$t0" --argjson u "$t1" \
	'[.[] | select(.verb == "claim" and .from == "supervisor" and .ts_ms >= $t and .ts_ms < $u)] | length' \
	"$BERTH_HOME/trace/trace.jsonl")
echo "claims sent in 6 s: $n (decided: $decided)" >&2
((n >= 1 && n <= 2)) || fail "an idle supervisor sent its claim $n times in 6 s (want 1 or 2)"
((decided <= 2)) || fail "$decided claims decided in 6 s (want at most 2)"
# Renewals and scans went on meanwhile, on the other client.
scans=$(jq -s --argjson t "$t0" --argjson u "$t1" \
	'[.[] | select(.verb == "scan" and .from == "supervisor" and .ts_ms >= $t and .ts_ms < $u)] | length' \
	"$BERTH_HOME/trace/trace.jsonl")
((scans >= 3)) || fail "only $scans reconcile scans in 6 s at --tick-ms 1000"

# A ticket added now is granted to the held claim, not at the next resend.
a=$(($(date +%s%N) / 1000000))
t=$(berth add -- true) || fail "add"
wait_for 30 ticket_is "$t" succeeded
granted=$(jq -s --arg t "$t" '[.[] | select(.verb == "claim" and .ticket == $t and .decision == "granted")][0].ts_ms' \
	"$BERTH_HOME/trace/trace.jsonl")
((granted - a < 3000)) || fail "the held claim took $((granted - a)) ms to be granted"
check_invariants
pass "the claim is sent once per wait ($n in 6 s) and granted while held"
