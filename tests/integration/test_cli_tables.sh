#!/usr/bin/env bash
# list and status fit the terminal: at 80 columns no row is wider and none
# wraps (every row used to, from %-40s padding), rows carry no trailing
# blanks, the name and the command are both shown (the command is cut, not
# the id), list --state ready leaves out blocked tickets, and a ticket
# waiting for a running job's working tree names the run by its alias.
set -u
source "$(dirname "$0")/lib.sh"
berth_test_init cli_tables
berth_launch --slots 2
mkdir -p "$BERTH_TEST_DIR/src"
go=$BERTH_TEST_DIR/go

long="for i in \$(seq 1 100); do echo a fairly long command line that will not fit; done"
t1=$(B add --name build --workdir "$BERTH_TEST_DIR/src" -- sh -c "while [ ! -e '$go' ]; do sleep 0.05; done; $long") ||
	fail "add"
wait_until 30 ticket_is "$t1" claimed || fail "$t1 never ran"
t2=$(B add --workdir "$BERTH_TEST_DIR/src" -- sh -c "$long") || fail "add"
t3=$(B add --after "$t1" --name deploy -- echo deployed) || fail "add"
t4=$(B add --at 23:59 -- make nightly) || fail "add"

fits() { # WHAT WIDTH TEXT
	local line
	while IFS= read -r line; do
		((${#line} <= $2)) || fail "$1: a row of ${#line} columns: '$line'"
		[[ $line != *' ' ]] || fail "$1: trailing blanks: '$line'"
	done <<<"$3"
}
out=$(COLUMNS=80 B list) || fail "list"
fits "list at 80" 80 "$out"
[[ $(wc -l <<<"$out") == 5 ]] || fail "list: one row per ticket: $out"
grep -q '^ID  *STATE  *ATTEMPTS  *NEXT  *NAME  *COMMAND  *WAITING$' <<<"$out" || fail "list heads: $out"
grep -q "^$t1  *claimed .* build  *sh -c .*\.\.\." <<<"$out" || fail "list: name and a cut command: $out"
# The waiting reason names the run holding the tree by its alias.
wide=$(B list)
grep -q "waiting: working tree $BERTH_TEST_DIR/src is used by $t1-r1 (running)" <<<"$wide" ||
	fail "list: the tree's holder not named by alias: $wide"
# Into a pipe with no COLUMNS: whole rows.
grep -q "will not fit; done" <<<"$wide" || fail "list into a pipe cut a row"
out=$(COLUMNS=60 B status) || fail "status"
# Its tables (the lines above them name the socket's path, as they are).
fits "status at 60" 60 "$(sed -n '/^running:/,/^tickets:/p' <<<"$out")"
grep -q "^  $t1-r1  *running .*build" <<<"$out" || fail "status: the run by alias with its name: $out"
grep -q '^queue (next first):' <<<"$out" || fail "status: no queue: $out"
grep -q "^  $t3  *blocked  *deploy" <<<"$out" || fail "status: the queue's head: $out"

# --state ready: ready to run, not blocked.
B list --state ready --json | jq -e --arg b "$t3" 'all(.[]; .id != $b and .state == "ready")' \
	>/dev/null || fail "list --state ready includes a blocked ticket: $(B list --state ready)"
B list --state blocked --json | jq -e --arg b "$t3" 'map(.id) == [$b]' >/dev/null ||
	fail "list --state blocked"
touch "$go"
B wait "$t1" "$t2" "$t3" --timeout 60s >/dev/null || fail "wait"
B cancel "$t4" >/dev/null
check_invariants
pass "list and status fit the terminal and never wrap"
