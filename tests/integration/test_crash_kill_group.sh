#!/usr/bin/env bash
# kill -9 of the whole group (launcher monitor and every actor) while jobs
# run, then a fresh start: the jobs kept running under their shims, the new
# group adopts the live ones and settles every run with its real exit code;
# jobs that ended while nothing of berth was alive settle from their exit
# records. Jobs end when the test opens their gate, not on a timer.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/crash_lib.bash"

crash_setup kill-group
crash_start --slots 6 --lease-ms 1000 --tick-ms 200

tickets=()
for i in $(seq 0 5); do
	# j0, j1 end while berth is dead; j2..j5 outlive the restart.
	tickets+=("$(crash_add "j$i" $((i + 1)) "gate:$((i < 2 ? 1 : 2))")")
done
running() { (($(db_query "SELECT count(*) FROM runs WHERE state = 'running'") >= 6)); }
wait_until 30 running || fail "the jobs did not all start"

r0=$(crash_run_id "${tickets[0]}" 0)
r1=$(crash_run_id "${tickets[1]}" 0)

# The monitor first, or it would restart what we kill.
pids=$(cat "$H/launch/launcher.pid" "$H"/launch/{coordinator,supervisor,recovery,reaper}.pid)
kill -KILL $pids
gone() { local p; for p in $pids; do alive "$p" && return 1; done; return 0; }
wait_until 10 gone || fail "the group did not die"

# Two jobs end without any of berth alive: only their shims see it.
crash_open 1
recorded() { [[ -f $H/runs/$r0/exit && -f $H/runs/$r1/exit ]]; }
wait_until 30 recorded || fail "the shims wrote no exit records"
live=$(db_query "SELECT count(*) FROM runs WHERE settled_ms IS NULL")
[[ $live == 6 ]] || fail "runs settled while berth was dead: $live unsettled"

crash_start --slots 6 --lease-ms 1000 --tick-ms 200
adopted() { (($(crash_readopted) >= 4)); }
wait_until 60 adopted || fail "only $(crash_readopted) live runs were readopted"
crash_wait_settled 60 "${tickets[0]}" "${tickets[1]}"
crash_open 2
crash_wait_settled 60 "${tickets[@]}"
for i in $(seq 0 5); do
	crash_check_job "${tickets[$i]}" "j$i" $((i + 1))
done
for i in 0 1; do
	run=$(crash_run_id "${tickets[$i]}" 0)
	[[ $(crash_trace "$run" record_exit) == recovery:granted ]] ||
		fail "j$i: $(crash_trace "$run" record_exit)"
done
for i in 2 3 4 5; do
	run=$(crash_run_id "${tickets[$i]}" 0)
	[[ $(crash_trace "$run" record_exit) == supervisor:granted ]] ||
		fail "j$i (readopted): $(crash_trace "$run" record_exit)"
done
crash_invariants
echo ok
