#!/usr/bin/env bash
# A failed or cancelled dependency ends its dependents dependency_failed
# (DESIGN §4) instead of blocking them forever, and wait on a dependent
# returns (it waited forever before); --after-any runs anyway; retry of the
# dependency re-arms them, and they run once it succeeds.
set -u
source "$(dirname "$0")/lib.sh"
berth_test_init cli_deps
berth_launch --slots 2
flag=$BERTH_TEST_DIR/ok

a=$(B add --name build -- sh -c "test -e '$flag'") || fail "add"
b=$(B add --after "$a" --name deploy -- echo deployed) || fail "add"
c=$(B add --after "${b#T}" --name announce -- echo announced) || fail "add"
d=$(B add --after-any "$a" --name cleanup -- echo cleaned) || fail "add"
B wait "$a" --timeout 60s >/dev/null
# The dependents end, and wait on them returns, with exit 1.
B wait "$b" "$c" --timeout 30s >"$BERTH_TEST_DIR/out"
assert_eq 1 $? "wait on dependency_failed tickets"
printf '%s\n' "$b dependency_failed" "$c dependency_failed" | diff - "$BERTH_TEST_DIR/out" >&2 ||
	fail "wait's states"
expect "$b" .dependency "\"$a\""
expect "$c" .dependency "\"$b\""
expect "$b" .runs '[]'
B show "$b" | grep -q "waiting:   dependency $a failed" || fail "show: $(B show "$b")"
B list --state dependency_failed --json | jq -e 'length == 2' >/dev/null || fail "list --state"
# --after-any: T_d ran although its dependency failed.
B wait "$d" --timeout 60s >/dev/null || fail "the --after-any ticket did not succeed"
expect "$d" .after_any true
# A dependency that already failed: the new ticket ends at once.
e=$(B add --after "$a" -- true) || fail "add"
expect "$e" .state '"dependency_failed"'
# Its own retry is refused, naming the dependency to retry.
B retry "$b" 2>"$BERTH_TEST_DIR/err" && fail "retry of a dependency_failed ticket succeeded"
grep -q "$b never ran: its dependency $a did not succeed; retry $a" "$BERTH_TEST_DIR/err" ||
	fail "retry's refusal: $(cat "$BERTH_TEST_DIR/err")"
# Retrying the dependency re-arms them all; now it succeeds and they run.
touch "$flag"
B retry "$a" >/dev/null || fail "retry $a"
B wait "$a" "$b" "$c" "$e" --timeout 60s >/dev/null || fail "after the retry: $(B list)"
[[ $(B logs "$c") == announced ]] || fail "the chain did not run"
# A cancelled dependency does the same.
f=$(B add --hold -- true) || fail "add"
g=$(B add --after "$f" -- true) || fail "add"
B cancel "$f" >/dev/null || fail "cancel"
B wait "$g" --timeout 30s >/dev/null
assert_eq 1 $? "wait on the dependent of a cancelled ticket"
expect "$g" .state '"dependency_failed"'
B show "$g" | grep -q "dependency $f cancelled" || fail "show: $(B show "$g")"
check_invariants
pass "a failed dependency ends its dependents; retry re-arms them"
