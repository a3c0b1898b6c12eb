#!/usr/bin/env bash
# A coordinator killed after committing an `add` and before replying
# (coordinator.after_commit=1*crash) is restarted; the client's retry, with
# the same request id, gets the original answer (replayed) and there is
# exactly one ticket (DESIGN §5, §10). Then the same for a reply that is
# dropped (after_commit=1*drop) by a coordinator that lives on.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/coordinator_lib.bash"
coord_test_init coordinator_crash_replay
trace=$BERTH_HOME/trace/trace.jsonl
out=$BERTH_TEST_DIR/client.out

BERTH_FAILPOINTS='coordinator.after_commit=1*crash' coord_start

# The client retries the same request id for up to a minute.
BERTH_TIMEOUT=60s berth add --name once -- true >"$out" 2>"$BERTH_TEST_DIR/client.err" &
client=$!

wait_for 30 gone "$coord"
rc=0
wait "$coord" 2>/dev/null || rc=$?
coord=
assert_eq 137 "$rc" "the coordinator's exit status (SIGKILL)"
grep -q '"verb":"add".*"decision":"granted"' "$trace" ||
	fail "the add was not decided before the crash"
alive "$client" || fail "the client gave up while the coordinator was down"

coord_start
rc=0
wait "$client" || rc=$?
assert_eq 0 "$rc" "berth add's exit status"
assert_eq T1 "$(cat "$out")" "berth add's output"
assert_eq 1 "$(db_query 'SELECT count(*) FROM tickets')" "tickets"

# The trace: the add granted once, then the retry answered from the
# stored reply, with the same sender and request id.
granted=$(grep '"verb":"add"' "$trace" | grep -c '"decision":"granted"') || true
assert_eq 1 "$granted" "granted adds in the trace"
first=$(grep '"verb":"add"' "$trace" | grep '"decision":"granted"' |
	grep -o '"instance":"[0-9a-f]*","req_id":[0-9]*')
grep '"decision":"replayed"' "$trace" | grep -qF "$first" || fail "no replayed line for $first"
coord_stop TERM

# A reply lost on the way (coordinator.after_commit=1*drop): the client's
# resend, a second later, gets the stored reply; still one ticket more.
BERTH_FAILPOINTS='coordinator.after_commit=1*drop' coord_start
id=$(BERTH_TIMEOUT=60s berth add --name dropped -- true) ||
	fail "berth add failed after a dropped reply"
assert_eq T2 "$id" "berth add's output"
assert_eq 2 "$(db_query 'SELECT count(*) FROM tickets')" "tickets"
grep '"verb":"add"' "$trace" | grep '"ticket":"T2"' | grep -q '"decision":"replayed"' ||
	fail "no replayed add of T2 in the trace"
alive "$coord" || fail "the drop failpoint killed the coordinator"
coord_stop TERM
pass "a decision survives a crash and a lost reply, and is made once"
