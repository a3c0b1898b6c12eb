#!/usr/bin/env bash
# berth seat from the command line against a real coordinator (and a
# supervisor for the last part): outcomes and exit statuses, conflicts
# naming the holder with the right advice, owner-only release, stop and
# should-stop --seat, activity, list/show JSON, the owner process (none by
# default, --pid names one), and a ticket kept waiting by an outside seat.
source "$(dirname "$0")/lib.sh"
set -u
BIN=${BERTH_BIN:-$(cd "$(dirname "$0")/../../build/bin" && pwd)}
berth_test_init cli_seat
tmp=$BERTH_TEST_DIR
pids=()
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
run() {
	"$BIN/berth" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
}

mkdir -p "$BERTH_HOME" "$tmp/tree1" "$tmp/tree2"
"$BIN/berth-coordinator" --home "$BERTH_HOME" 2>"$tmp/coord.log" &
pids+=($!)
wait_until 20 B list >/dev/null 2>&1 || fail "coordinator did not come up"

# --- acquire, again (already_held), default owner user@host
run seat acquire alpha --workdir "$tmp/tree1"
[ "$rc" = 0 ] && [ "$out" = acquired ] && [ -z "$err" ] || fail "acquire: rc=$rc out=$out err=$err"
run seat acquire alpha --workdir "$tmp/tree1"
[ "$rc" = 0 ] && [ "$out" = already_held ] || fail "again: rc=$rc out=$out"
me="$(id -un)@$(hostname)"
[ "$(B seat show alpha --json | jq -r .owner)" = "$me" ] || fail "owner is not $me"
[ "$(B seat show alpha --json | jq -r .workdir)" = "$(realpath "$tmp/tree1")" ] || fail "workdir"
# The default owner names no process: it lives by its heartbeat.
[ "$(B seat show alpha --json | jq .owner_pid)" = null ] || fail "owner_pid of the default owner"

# --- key conflict: exit 1, holder named, advice to wait or ask for a stop
BERTH_OWNER=bob run seat acquire beta
[ "$rc" = 1 ] && [ -z "$out" ] || fail "key conflict: rc=$rc out=$out"
echo "$err" | grep -q "conflict: held by $me (seat alpha" || fail "key conflict stderr: $err"
echo "$err" | grep -q "berth seat stop alpha" || fail "key conflict advice: $err"
# --- equal keys coexist, but never on one tree: tree advice
BERTH_OWNER=bob run seat acquire gamma --key shared --workdir "$tmp/tree2"
[ "$rc" = 1 ] || fail "different key must conflict with alpha"
run seat force-release alpha
[ "$rc" = 0 ] || fail "force-release: $err"
run seat acquire a1 --key shared --workdir "$tmp/tree1" --owner alice
[ "$rc" = 0 ] || fail "a1: $err"
run seat acquire a2 --key shared --workdir "$tmp/tree2" --owner bob
[ "$rc" = 0 ] && [ "$out" = acquired ] || fail "equal keys, other tree: rc=$rc $err"
run seat acquire a3 --key shared --workdir "$tmp/tree1" --owner carol
[ "$rc" = 1 ] || fail "equal keys, same tree: rc=$rc"
echo "$err" | grep -q "tree_conflict" && echo "$err" | grep -q "another working tree" ||
	fail "tree conflict stderr: $err"
echo "$err" | grep -q "alice" || fail "tree conflict does not name alice: $err"

# --- release is owner-only
run seat release a1 --owner mallory
[ "$rc" = 1 ] && [ -z "$out" ] || fail "release by non-owner: rc=$rc"
echo "$err" | grep -q "alice" || fail "non-owner release does not name the holder: $err"
run seat release a1 --owner alice
[ "$rc" = 0 ] || fail "release by owner: $err"
run seat show a1
[ "$rc" -ne 0 ] && [ -z "$out" ] || fail "a1 still there after release"

# --- heartbeat, activity, stop, should-stop --seat
run seat heartbeat a2 --owner bob
[ "$rc" = 0 ] || fail "heartbeat: $err"
run seat activity a2 2/5 testing --owner bob
[ "$rc" = 0 ] || fail "activity: $err"
[ "$(B seat show a2 --json | jq -c '.activity | [.index, .total, .label]')" = '[2,5,"testing"]' ] ||
	fail "activity not shown: $(B seat show a2 --json)"
run should-stop --seat a2
[ "$rc" = 1 ] && [ -z "$out" ] || fail "should-stop before stop: rc=$rc out=$out"
run seat stop a2 --reason "need tree2"
[ "$rc" = 0 ] || fail "stop: $err"
run should-stop --seat a2
[ "$rc" = 0 ] && [ "$out" = "stop requested: need tree2" ] || fail "should-stop after stop: rc=$rc out=$out"
[ "$(B seat show a2 --json | jq -r '.owner + " " + .stop_reason')" = "bob need tree2" ] ||
	fail "stop must annotate, not delete"
run seat list
echo "$out" | grep -q "^a2 .*bob .*stop: need tree2" || fail "seat list: $out"
[ "$(B seat list --json | jq -c 'map(.item)')" = '["a2"]' ] || fail "seat list --json: $(B seat list --json)"

# --- a seat whose owner process (--pid: here the shell that ran berth) is
# gone is stale and can be taken over
sh -c "BERTH_OWNER=ghost '$BIN/berth' seat acquire ghostly --key shared --workdir '$tmp/tree1' --pid \$\$" >/dev/null ||
	fail "ghost acquire"
[ "$(B seat show ghostly --json | jq .stale)" = true ] || fail "seat of an exited owner is not stale"
run seat acquire ghostly --key shared --owner heir --workdir "$tmp/tree1"
[ "$rc" = 0 ] && [ "$out" = "stolen from ghost" ] || fail "steal: rc=$rc out=$out err=$err"
run seat release ghostly --owner heir
[ "$rc" = 0 ] || fail "heir release"
# --pid 0 (as the default): no owner process, only the TTL decides (an
# agent whose commands each run in a fresh shell); --pid PID: that process
# is the owner.
sh -c "'$BIN/berth' seat acquire ttl-only --key shared --owner agent --pid 0" >/dev/null ||
	fail "--pid 0 acquire"
[ "$(B seat show ttl-only --json | jq -c '[.stale, .owner_pid]')" = '[false,null]' ] ||
	fail "--pid 0 seat: $(B seat show ttl-only --json)"
sleep 300 &
sleeper=$!
pids+=($sleeper)
run seat acquire by-pid --key shared --owner agent2 --pid "$sleeper"
[ "$rc" = 0 ] || fail "--pid acquire: $err"
[ "$(B seat show by-pid --json | jq -c '[.stale, .owner_pid]')" = "[false,$sleeper]" ] ||
	fail "--pid seat: $(B seat show by-pid --json)"
kill "$sleeper"
wait "$sleeper" 2>/dev/null
[ "$(B seat show by-pid --json | jq .stale)" = true ] || fail "seat of a killed --pid owner is not stale"
B seat force-release ttl-only >/dev/null && B seat force-release by-pid >/dev/null || fail "force-release"

# --- an outside seat on a working tree keeps a ticket there waiting
"$BIN/berth-supervisor" --home "$BERTH_HOME" --slots 1 --tick-ms 200 2>"$tmp/sup.log" &
pids+=($!)
run seat acquire outside --key shared --workdir "$tmp/tree1" --owner alice
[ "$rc" = 0 ] || fail "outside acquire: $err"
t=$(B add --workdir "$tmp/tree1" -- true) || fail "add"
waiting() { B show "$t" --json | jq -r .waiting | grep -q "outside"; }
wait_until 20 waiting || fail "show does not say why $t waits: $(B show "$t" --json)"
B show "$t" | grep -q "waiting: .*$(realpath "$tmp/tree1")" || fail "human show: $(B show "$t")"
[ "$(B show "$t" --json | jq '.runs | length')" = 0 ] || fail "$t ran while the tree was held"
B seat release outside --owner alice >/dev/null || fail "release outside"
B wait "$t" --timeout 30s >/dev/null || fail "$t did not run after the release"

echo "PASS test_cli_seat"
