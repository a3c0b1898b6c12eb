#!/usr/bin/env bash
# kill -9 of the supervisor, twice, while 12 jobs run: the launcher restarts
# it, recovery hands the live jobs to each new instance, and every job ran
# exactly once (its side-effect file) and settles with its real exit code.
# Jobs end when the test opens their gate, so they are certainly alive
# across both kills.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/crash_lib.bash"

crash_setup kill-supervisor
crash_start --slots 12 --lease-ms 1000 --tick-ms 200

tickets=()
for i in $(seq 0 11); do
	tickets+=("$(crash_add "j$i" $((i % 4)) gate:end)")
done
running() { (($(db_query "SELECT count(*) FROM runs WHERE state = 'running'") >= 12)); }
wait_until 30 running || fail "the 12 jobs did not all start"

restarted() { local p; p=$(crash_actor_pid supervisor); [[ -n $p && $p != "$1" ]] && alive "$p"; }
# Every run owned by the instance $1 (its actor row) is now owned by another.
moved_from() {
	local inst
	inst=$(db_query "SELECT instance FROM actors WHERE actor = 'supervisor' AND pid = $1")
	[[ -n $inst ]] || return 1
	(($(db_query "SELECT count(*) FROM runs WHERE owner = '$inst' AND settled_ms IS NULL") == 0))
}
for kill in 1 2; do
	pid=$(crash_actor_pid supervisor)
	kill -KILL "$pid"
	wait_until 30 restarted "$pid" || fail "the supervisor was not restarted (kill $kill)"
	wait_until 60 moved_from "$pid" || fail "runs of the killed supervisor not readopted (kill $kill)"
done
(($(crash_readopted) == 12)) || fail "$(crash_readopted) of 12 runs readopted"

crash_open end
crash_wait_settled 60 "${tickets[@]}"
for i in $(seq 0 11); do
	crash_check_job "${tickets[$i]}" "j$i" $((i % 4))
done
crash_invariants
echo ok
