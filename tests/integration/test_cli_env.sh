#!/usr/bin/env bash
# The job's environment is the caller's at add time (DESIGN §12), stored
# with the ticket, never the environment of whoever started the group: a
# secret in the shell that ran berth-launch must not reach a job (it did:
# the supervisor passed its own environ), and FOO=bar berth add must pass
# FOO (it did not: only PATH and HOME were captured). show lists names,
# never values; --clean-env keeps PATH, HOME and --env only; berth's own
# variables are the shim's, never the caller's.
set -u
source "$(dirname "$0")/lib.sh"
berth_test_init cli_env
GROUP_SECRET=only-in-the-launching-shell berth_launch
out=$BERTH_TEST_DIR/out
dump='printf "%s\n" "FOO=${FOO-unset}" "SECRET=${GROUP_SECRET-unset}" "CALLER=${CALLER_ONLY-unset}" \
	"PATH=$PATH" "TOKEN=${BERTH_TOKEN:+set}" "RUN=$BERTH_RUN_ID" "NEST=${BERTH_NESTED-unset}"'

# A shell of the caller's with its own variables, and a job's identity of
# its own (as in a job that queues another): the job gets the caller's
# variables, not the caller's BERTH_TOKEN/RUN_ID.
t=$(FOO=bar CALLER_ONLY=yes BERTH_TOKEN=forged BERTH_RUN_ID=forged BERTH_NESTED=kept \
	B add -- sh -c "$dump") || fail "add"
B wait "$t" --timeout 60s >/dev/null || fail "wait $t: $(B show "$t")"
B logs "$t" >"$out" || fail "logs"
grep -qx 'FOO=bar' "$out" || fail "FOO did not reach the job: $(cat "$out")"
grep -qx 'CALLER=yes' "$out" || fail "the caller's variable did not reach the job"
grep -qx 'SECRET=unset' "$out" || fail "the launching shell's secret reached the job: $(cat "$out")"
grep -qx 'NEST=kept' "$out" || fail "a caller's BERTH_ variable of its own was dropped"
grep -qx 'TOKEN=set' "$out" || fail "the job has no BERTH_TOKEN"
run=$(B show "$t" --json | jq -r '.runs[0].id')
grep -qx "RUN=$run" "$out" || fail "BERTH_RUN_ID is not the job's own run: $(cat "$out")"
grep -qx "PATH=$PATH" "$out" || fail "PATH is not the caller's"

# show: names, never values.
B show "$t" --json | jq -e '.env | index("FOO") != null and index("CALLER_ONLY") != null
	and all(.[]; test("=") | not)' >/dev/null || fail "show --json env: $(B show "$t" --json | jq -c .env)"
B show "$t" | grep -q 'env: .* FOO' || fail "show lists no names"
! B show "$t" | grep -q 'bar' || fail "show prints a value"
! B show "$t" --json | grep -q 'forged' || fail "a forged token is shown"
[[ $(db_query "SELECT env FROM tickets WHERE n = ${t#T}") != *forged* ]] ||
	fail "a caller's BERTH_TOKEN was stored with the ticket"

# --clean-env: PATH and HOME of the caller and every --env.
t=$(FOO=bar B add --clean-env --env ONLY=this -- env) || fail "add --clean-env"
B wait "$t" --timeout 60s >/dev/null || fail "wait $t"
B logs "$t" >"$out"
grep -qx 'ONLY=this' "$out" || fail "--env missing under --clean-env"
grep -q '^FOO=' "$out" && fail "--clean-env passed FOO"
names=$(sed 's/=.*//' "$out" | grep -v '^BERTH_' | sort | tr '\n' ' ')
assert_eq "HOME ONLY PATH " "$names" "--clean-env's variables besides berth's"
check_invariants
pass "the job gets the caller's environment, never the group's; show names it"
