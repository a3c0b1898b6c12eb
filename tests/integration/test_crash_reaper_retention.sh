#!/usr/bin/env bash
# Run data past retention: runs/<run>/ (output, exit record, started
# marker) is removed once the run has been settled longer than --retention;
# the database rows stay, and unsettled runs' data is never touched.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/crash_lib.bash"

crash_setup retention
crash_start --slots 2 --lease-ms 1000 --tick-ms 200 --retention 2s

t1=$(crash_add j1 0 0.1)
crash_wait_settled 30 "$t1"
r1=$(crash_run_id "$t1" 0)
[[ -f $H/runs/$r1/exit ]] || fail "no exit record for $r1"
t2=$(crash_add j2 0 30)
running() { [[ $(db_query "SELECT state FROM runs WHERE ticket = ${t2#T}") == running ]]; }
wait_until 30 running || fail "j2 did not start"
r2=$(crash_run_id "$t2" 0)

removed() { [[ ! -e $H/runs/$r1 ]]; }
wait_until 30 removed || fail "run data of $r1 kept past retention"
[[ $(db_query "SELECT state FROM runs WHERE id = '$r1'") == succeeded ]] ||
	fail "the run row of $r1 is gone"
crash_check_job "$t1" j1 0
sleep 2.5 # j2 is older than the retention period now, but unsettled
[[ -f $H/runs/$r2/started ]] || fail "data of the unsettled run $r2 removed"
grep -q "data removed" "$H/launch/reaper.log" || fail "reaper did not say so"
B cancel "$t2" >/dev/null
crash_wait_settled 30 "$t2"
crash_invariants
echo ok
