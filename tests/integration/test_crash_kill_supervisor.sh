#!/usr/bin/env bash
# kill -9 of the supervisor, twice, while 12 jobs run: the launcher restarts
# it, recovery hands the live jobs to the new instance, and every job ran
# exactly once (its side-effect file) and settles with its real exit code.
source "$(dirname "$0")/test_crash_common.bash"

crash_setup kill-supervisor
crash_start --slots 12 --lease-ms 1000 --tick-ms 200

tickets=()
for i in $(seq 0 11); do
	tickets+=("$(crash_add "j$i" $((i % 4)) "$((2 + i % 3))")")
done
running() { (($(sqlite3 "$H/berth.db" "SELECT count(*) FROM runs WHERE state = 'running'") >= 12)); }
crash_wait 30 running || crash_fail "the 12 jobs did not all start"

first=$(crash_actor_pid supervisor)
kill -KILL "$first"
restarted() { local p; p=$(crash_actor_pid supervisor); [[ -n $p && $p != "$1" ]] && crash_alive "$p"; }
crash_wait 30 restarted "$first" || crash_fail "the supervisor was not restarted"
sleep 0.5
second=$(crash_actor_pid supervisor)
kill -KILL "$second"
crash_wait 30 restarted "$second" || crash_fail "the supervisor was not restarted again"

crash_wait_settled 60 "${tickets[@]}"
for i in $(seq 0 11); do
	crash_check_job "${tickets[$i]}" "j$i" $((i % 4))
done
# Jobs that outlived both kills were readopted by a later supervisor.
n=$(jq -r 'select(.verb == "readopt" and .decision == "granted") | .run' "$H/trace/trace.jsonl" | sort -u | wc -l)
((n >= 1)) || crash_fail "no run was readopted"
crash_invariants
echo ok
