#!/usr/bin/env bash
# A batch that fails halfway says which lines were queued and which were
# not, and that is the truth. The home is a 3 MiB tmpfs (root only) that a
# 20 000-line batch fills: chunks are queued, printed, until one fails
# with the coordinator's storage error (sqlite: database or disk is full,
# rolled back whole); berth exits 1 naming the lines queued and those not.
# Once space is freed, exactly the printed tickets exist, and the
# coordinator is alive and serves the rest of the lines.
set -u
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/coordinator_lib.bash"
source "$(dirname "$0")/exhaust_lib.bash"

coord_test_init exhaust_batch_full
exhaust_tmpfs_home 3m
# The test's own status goes to the cleanup, not the coordinator's.
trap 'rc=$?; kill "$coord" 2>/dev/null; wait "$coord" 2>/dev/null; (exit "$rc"); exhaust_cleanup' EXIT
coord_start

seq 1 20000 | sed 's/^/echo job /' >"$BERTH_TEST_DIR/batch"
# --clean-env: lines this small make chunks of 1000 lines (with the whole
# caller's environment in every line, 1 MiB would end a chunk first).
if B add --clean-env --batch "$BERTH_TEST_DIR/batch" >"$BERTH_TEST_DIR/ids" 2>"$BERTH_TEST_DIR/err"; then
	fail "a 20000-line batch fit a 3 MiB home: make the home smaller"
fi
n=$(wc -l <"$BERTH_TEST_DIR/ids")
err=$(cat "$BERTH_TEST_DIR/err")
((n > 0 && n < 20000)) || fail "$n ids printed: $err"
((n % 1000 == 0)) || fail "$n ids: not whole chunks"
[[ $err == *"lines 1-$n were queued (their ids are above); lines $((n + 1))-20000 were not"* ]] ||
	fail "the failure does not say which lines were queued: $err"
[[ $err == *"full"* ]] || fail "the failure does not say the disk is full: $err"
exhaust_unfill
kill -0 "$coord" || fail "the coordinator died"
# Exactly the printed tickets exist.
assert_eq "$n" "$(db_query "SELECT count(*) FROM tickets")" "tickets after the failed batch"
assert_eq "$(tail -1 "$BERTH_TEST_DIR/ids")" "$(B list --limit 1 --json | jq -r '.[0].id')" "the last id printed"
pass "a batch that filled the disk queued lines 1-$n (printed), said lines $((n + 1))-20000 were not, and that was so"
