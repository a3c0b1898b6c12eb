#!/usr/bin/env bash
# Nothing is cut without a word (DESIGN §12). A bare coordinator (nothing
# runs). `berth add --batch` of 20 000 lines queues 20 000 tickets, in
# chunks, printing each id; `berth list --json` returns all 20 000 and
# `berth list` shows them all, newest first; `--limit N` shows the newest N
# and says on stderr how many it left out. Every limit (argument, batch
# line, environment, name) is a clear error before anything is sent.
set -u
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/coordinator_lib.bash"
coord_test_init exhaust_batch_list
coord_start

ms() { echo $((${EPOCHREALTIME/./} / 1000)); }
seq 1 20000 | sed 's/^/echo job /' >"$BERTH_TEST_DIR/batch"
t0=$(ms)
B add --batch "$BERTH_TEST_DIR/batch" >"$BERTH_TEST_DIR/ids" || fail "add --batch of 20000 lines"
t1=$(ms)
assert_eq 20000 "$(wc -l <"$BERTH_TEST_DIR/ids")" "ids printed"
assert_eq 20000 "$(sort -u "$BERTH_TEST_DIR/ids" | wc -l)" "distinct ids"
assert_eq 20000 "$(db_query "SELECT count(*) FROM tickets")" "tickets queued"

B list --json >"$BERTH_TEST_DIR/list.json" 2>"$BERTH_TEST_DIR/list.err" || fail "list --json"
t2=$(ms)
assert_eq 20000 "$(jq length "$BERTH_TEST_DIR/list.json")" "list --json"
assert_eq 20000 "$(jq -r '.[].id' "$BERTH_TEST_DIR/list.json" | sort -u | wc -l)" "distinct ids listed"
assert_eq '"T20000"' "$(jq -c '.[0].id' "$BERTH_TEST_DIR/list.json")" "newest first"
[[ ! -s $BERTH_TEST_DIR/list.err ]] || fail "list --json said: $(cat "$BERTH_TEST_DIR/list.err")"
assert_eq 20001 "$(B list | wc -l)" "list rows (and its header)"
B list --limit 10 >"$BERTH_TEST_DIR/l10" 2>"$BERTH_TEST_DIR/l10.err" || fail "list --limit 10"
assert_eq 11 "$(wc -l <"$BERTH_TEST_DIR/l10")" "list --limit 10 rows"
grep -q "10 tickets shown, the newest; 19990 older not shown" "$BERTH_TEST_DIR/l10.err" ||
	fail "list --limit says nothing of what it left out: $(cat "$BERTH_TEST_DIR/l10.err")"
assert_eq 20000 "$(B list --limit 10 --all --json | jq length)" "--all after --limit"

# Limits: refused before anything is sent, naming the limit.
no_more() { assert_eq 20000 "$(db_query "SELECT count(*) FROM tickets")" "tickets after $1"; }
big=$(head -c 131072 /dev/zero | tr '\0' x)
{ echo "echo fine"; echo "echo $big"; } >"$BERTH_TEST_DIR/toolong"
out=$(B add --batch "$BERTH_TEST_DIR/toolong" 2>&1) && fail "a batch line over the limit was taken"
[[ $out == *"line 2 is"*"at most 131071"* ]] || fail "batch line limit: $out"
no_more "a batch line over the limit"
# (One argument over 131071 bytes never reaches berth: the kernel refuses
# to exec it with one. The batch line above is the same limit.)
half=$(head -c 131000 /dev/zero | tr '\0' y)
args=()
for i in $(seq 1 9); do args+=("$half"); done
out=$(B add -- echo "${args[@]}" 2>&1) && fail "a command over the limit was taken"
[[ $out == *"together at most 1048576"* ]] || fail "command limit: $out"
out=$(B add --name "$(head -c 256 /dev/zero | tr '\0' n)" -- true 2>&1) && fail "a long name was taken"
[[ $out == *"--name is 256 bytes; at most 255"* ]] || fail "name limit: $out"
envs=()
for i in $(seq 1 9); do envs+=(--env "V$i=$half"); done
out=$(B add "${envs[@]}" -- true 2>&1) && fail "an environment over the limit was taken"
[[ $out == *"together at most 1048576"* ]] || fail "environment limit: $out"
no_more "the limits"
pass "20000-line batch queued in $((t1 - t0)) ms and listed whole in $((t2 - t1)) ms; --limit says what it left; limits refused before sending"
