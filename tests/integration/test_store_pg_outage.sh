#!/usr/bin/env bash
# A home on PostgreSQL (DESIGN §13) loses its database server while jobs
# run, as a crash would take it (pg_ctl stop -m immediate), and gets it
# back: requests meanwhile get a clear storage error, jobs that end while
# it is down have their real exit status recorded once it is back, no job
# runs twice, and the group decides again without a restart.
source "$(dirname "$0")/lib.sh"
berth_test_init store_pg_outage

# This test brings its own server (it crashes it); a suite-wide one
# (BERTH_TEST_PG) is not this home's store.
berth_pg_server outage
pgdir=$pg_dir url=$pg_url

berth_launch --slots 4 --store "$url"
assert_eq "$url" "$(cat "$BERTH_HOME/store")" "the home's store"

w=$BERTH_TEST_DIR/w
mkdir -p "$w"
# Each job marks its start, waits for the test to let it end, and exits
# with its own status.
ts=()
for code in 0 3 0 5; do
	t=$(B add -- sh -c "echo \$BERTH_RUN_ID >>$w/ran.$code.\$\$; until [ -e $w/go ]; do sleep 0.05; done; exit $code") ||
		fail "add"
	ts+=("$t")
done
running() {
	local t
	for t in "${ts[@]}"; do
		[[ $(run_field "$t" -1 state 2>/dev/null) == running ]] || return 1
	done
}
wait_for 60 running

"$BERTH_SRC/tests/pg-server" down "$pgdir" || fail "cannot stop the server"
# While it is down: a clear error on stderr, a non-zero exit, no crash.
out=$(B add -- true 2>&1) && fail "add succeeded with the store down: $out"
assert_match "storage|database|connect" "$out" "add with the store down"
# The jobs end while the store is down; their ends wait in the supervisor.
touch "$w/go"
ended() { (($(ls "$w" | grep -c '^ran\.') == 4)) && ! pgrep -f "until \[ -e $w/go \]" >/dev/null; }
wait_for 30 ended
"$BERTH_SRC/tests/pg-server" up "$pgdir" || fail "cannot start the server again"

want=(succeeded failed succeeded failed)
codes=(0 3 0 5)
for i in 0 1 2 3; do
	wait_for 120 ticket_is "${ts[$i]}" "${want[$i]}"
	assert_eq "${codes[$i]}" "$(run_field "${ts[$i]}" -1 exit_code)" "exit code of ${ts[$i]}"
done
# Each ran once: one start mark per job, one run per ticket.
for code in 0 3 5; do
	n=$(cat "$w"/ran."$code".* | wc -l)
	want_n=1
	[[ $code == 0 ]] && want_n=2
	assert_eq "$want_n" "$n" "starts of the jobs exiting $code"
done
for t in "${ts[@]}"; do
	assert_eq 1 "$(B show "$t" --json | jq '.runs | length')" "runs of $t"
done
# And the group decides again without a restart.
t=$(B add -- true) || fail "add after the outage"
wait_for 60 ticket_is "$t" succeeded
check_invariants
pass "the store's server went down and came back: 4 jobs each ran once, real exit codes kept"
