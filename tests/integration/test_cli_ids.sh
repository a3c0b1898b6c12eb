#!/usr/bin/env bash
# Ids as people type them, and refusals as sentences: several ids at once;
# 3 means T3; "last" (and no id for show, logs, wait) the newest ticket;
# the 8 hex digits of a run that trace prints work in show, logs and
# cancel; a malformed id is a usage error (exit 2) and an unknown one a
# plain "no such" (exit 1) that names the command the user ran; a denial
# is a sentence, its code kept in --json.
set -u
source "$(dirname "$0")/lib.sh"
berth_test_init cli_ids
berth_launch --slots 2
err=$BERTH_TEST_DIR/err

a=$(B add --hold -- echo a) || fail "add"
b=$(B add --hold -- echo b) || fail "add"
c=$(B add --hold -- echo c) || fail "add"
# Several at once, a bare number among them.
out=$(B release "$a" "${b#T}")
assert_eq "$a ready"$'\n'"$b ready" "$out" "release of two"
B wait "$a" "${b#T}" --timeout 60s >/dev/null || fail "wait of two"
# last, and no id at all: the newest ticket.
assert_eq "$c" "$(B show last --json | jq -r .id)" "show last"
assert_eq "$c" "$(B show --json | jq -r .id)" "show with no id"
B release last >/dev/null || fail "release last"
B wait --timeout 60s >/dev/null || fail "wait with no id"
assert_eq c "$(B logs)" "logs with no id"
# A run's first 8 hex digits, as trace prints them.
run=$(B show "$a" --json | jq -r '.runs[0].id')
assert_eq "$a" "$(B show "${run:0:8}" --json | jq -r .id)" "show of a run prefix"
assert_eq a "$(B logs "${run:0:8}")" "logs of a run prefix"
B trace --run "${run:0:8}" --json | jq -e -s 'length > 0' >/dev/null || fail "trace --run prefix"

# Refusals as sentences; several ids: each on its own, exit 1 if any.
B cancel "$a" "$b" 2>"$err"
assert_eq 1 $? "cancel of two finished tickets"
grep -qx "berth: $a has already finished (succeeded); nothing to cancel" "$err" ||
	fail "cancel's refusal: $(cat "$err")"
[[ $(grep -c 'nothing to cancel' "$err") == 2 ]] || fail "want a refusal per id: $(cat "$err")"
d=$(B add --hold -- sleep 30) || fail "add"
B release "$d" >/dev/null
wait_until 30 ticket_is "$d" claimed || fail "$d never ran"
B hold "$d" 2>"$err" && fail "hold of a running ticket succeeded"
grep -q "$d is running; only a queued ticket can be held" "$err" || fail "hold: $(cat "$err")"
B release "$a" 2>"$err" && fail "release of a finished ticket succeeded"
grep -q "$a has already finished (succeeded); nothing to release" "$err" || fail "release: $(cat "$err")"
# --json keeps the machine's code; stdout stays empty when nothing worked.
B cancel --json "$a" >"$BERTH_TEST_DIR/out" 2>"$err" && fail "cancel --json of a finished ticket"
[[ ! -s $BERTH_TEST_DIR/out ]] || fail "stdout on a refusal: $(cat "$BERTH_TEST_DIR/out")"
jq -e --arg id "$a" '.id == $id and .reason == "not_ready" and .facts.state == "succeeded"
	and (.message | test("nothing to cancel"))' "$err" >/dev/null || fail "cancel --json: $(cat "$err")"
# The trace keeps the code.
B trace --verb cancel --json | jq -e -s 'any(.[]; .reason == "not_ready")' >/dev/null ||
	fail "the trace lost the denial's code"
out=$(B cancel "$d")
assert_eq "$d claimed, stop requested" "$out" "cancel of a running ticket"

# Malformed: exit 2, nothing asked. Unknown: exit 1, the user's command.
B show T1-x 2>"$err"
assert_eq 2 $? "a malformed id"
grep -q "bad ID 'T1-x'" "$err" || fail "malformed: $(cat "$err")"
B logs T999 2>"$err"
assert_eq 1 $? "an unknown ticket"
grep -qx "berth: logs T999: no ticket or run 'T999'" "$err" || fail "logs T999: $(cat "$err")"
B trace --ticket bogus 2>/dev/null
assert_eq 2 $? "trace --ticket bogus"
B trace --ticket T999 2>"$err"
assert_eq 1 $? "trace --ticket of a ticket with no records"
grep -q 'no records of ticket T999' "$err" || fail "trace --ticket T999: $(cat "$err")"
B wait "$d" --timeout 60s >/dev/null
check_invariants
pass "ids as typed, several at once, refusals as sentences"
