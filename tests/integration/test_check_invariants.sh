#!/usr/bin/env bash
# check_invariants.sh itself: clean on a home where jobs ran, and each kind
# of damage it is meant to catch is reported (a checker that cannot fail
# proves nothing).
set -u
source "$(dirname "$0")/lib.sh"
berth_test_init check_invariants

C=$BERTH_SRC/tests/integration/check_invariants.sh
w=$BERTH_TEST_DIR/w
mkdir -p "$w"
berth_launch
t1=$(berth add --workdir "$w" -- sh -c 'echo ran >>ran') || fail "add"
t2=$(berth add --workdir "$w" -- sh -c 'echo ran >>ran; exit 3') || fail "add"
wait_for 60 ticket_is "$t1" succeeded
wait_for 60 ticket_is "$t2" failed
berth_stop
out=$(bash "$C" "$BERTH_HOME" 2>&1) || fail "violations on a clean home: $out"
pass "a clean home passes"

r1=$(db_query "SELECT id FROM runs WHERE ticket = ${t1#T}")
[[ $r1 =~ ^[0-9a-f]{32}$ ]] || fail "run of $t1: '$r1'"
cp "$BERTH_HOME/berth.db" "$BERTH_TEST_DIR/clean.db"
cp "$BERTH_HOME/trace/trace.jsonl" "$BERTH_TEST_DIR/clean.jsonl"
restore() {
	cp "$BERTH_TEST_DIR/clean.db" "$BERTH_HOME/berth.db"
	rm -f "$BERTH_HOME"/berth.db-wal "$BERTH_HOME"/berth.db-shm
	cp "$BERTH_TEST_DIR/clean.jsonl" "$BERTH_HOME/trace/trace.jsonl"
}
# expect_violation PATTERN: the checker fails and names the damage.
expect_violation() {
	local out
	out=$(BERTH_CHECK_GROUP_WAIT=0 bash "$C" "$BERTH_HOME" 2>&1) && fail "no violation found for: $1"
	grep -q "INVARIANT: .*$1" <<<"$out" || fail "want /$1/, got: $out"
	restore
}

# 1. A lease held by a settled run.
db_query "INSERT INTO leases (ticket_id, run_id, owner, acquired_ms, renewed_ms, expires_ms)
	VALUES (${t1#T}, '$r1', 'x', 1, 1, 2)" || fail "insert lease"
expect_violation "still holds a lease"

# 2. Two unsettled runs of one ticket (settled_ms is also checked below).
db_query "INSERT INTO runs (id, ticket, attempt, state, token_hash, claimed_ms)
	VALUES ('a1', ${t1#T}, 91, 'claimed', 'h', 1), ('a2', ${t1#T}, 92, 'running', 'h', 1)" ||
	fail "insert runs"
expect_violation "has 2 unsettled runs"

# 4. A second granted record_exit for a run.
grep '"verb":"record_exit"' "$BERTH_HOME/trace/trace.jsonl" | grep "\"run\":\"$r1\"" |
	sed 's/"seq":[0-9]*/"seq":999999/' >>"$BERTH_HOME/trace/trace.jsonl"
expect_violation "run $r1 .* has 2 granted record_exit"

# 4. A run that reached running and settled without its exit checkpoint.
grep -v "\"run\":\"$r1\".*\"verb\":\"record_exit\"\|\"verb\":\"record_exit\".*\"run\":\"$r1\"" \
	"$BERTH_TEST_DIR/clean.jsonl" >"$BERTH_HOME/trace/trace.jsonl"
expect_violation "reached running and is succeeded, but has 0 granted record_exit"

# 5. A live process in the group of a settled run.
BERTH_RUN_ID=$r1 setsid sleep 60 &
sl=$!
wait_for 10 test -e "/proc/$sl"
db_query "UPDATE runs SET pgid = $sl WHERE id = '$r1'" || fail "update pgid"
expect_violation "settled run $r1: group $sl still has processes"
kill "$sl"

# 6. One execution more than the runs that started.
echo ran >>"$w/ran"
expect_violation "records 3 executions for 2 runs that may have executed"
sed -i '$d' "$w/ran"

out=$(bash "$C" "$BERTH_HOME" 2>&1) || fail "restored home: $out"
pass "every kind of damage is reported"
