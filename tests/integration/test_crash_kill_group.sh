#!/usr/bin/env bash
# kill -9 of the whole group (launcher monitor and every actor) while jobs
# run, then a fresh start: the jobs kept running under their shims, the new
# group adopts the live ones and settles every run with its real exit code;
# jobs that ended while nothing of berth was alive settle from their exit
# records.
source "$(dirname "$0")/test_crash_common.bash"

crash_setup kill-group
crash_start --slots 6 --lease-ms 1000 --tick-ms 200

tickets=()
secs=(1.5 1.5 4 4 5 5)
for i in $(seq 0 5); do
	tickets+=("$(crash_add "j$i" $((i + 1)) "${secs[$i]}")")
done
running() { (($(sqlite3 "$H/berth.db" "SELECT count(*) FROM runs WHERE state = 'running'") >= 6)); }
crash_wait 30 running || crash_fail "the jobs did not all start"

# The monitor first, or it would restart what we kill.
pids=$(cat "$H/launch/launcher.pid" "$H"/launch/{coordinator,supervisor,recovery,reaper}.pid)
kill -KILL $pids
gone() { local p; for p in $pids; do crash_alive "$p" && return 1; done; return 0; }
crash_wait 10 gone || crash_fail "the group did not die"
# Jobs run on without any of berth; the short ones end meanwhile.
sleep 2
live=$(sqlite3 "$H/berth.db" "SELECT count(*) FROM runs WHERE settled_ms IS NULL")
[[ $live == 6 ]] || crash_fail "runs settled while berth was dead: $live unsettled"

crash_start --slots 6 --lease-ms 1000 --tick-ms 200
crash_wait_settled 60 "${tickets[@]}"
for i in $(seq 0 5); do
	crash_check_job "${tickets[$i]}" "j$i" $((i + 1))
done
n=$(jq -r 'select(.verb == "readopt" and .decision == "granted") | .run' "$H/trace/trace.jsonl" | sort -u | wc -l)
((n >= 2)) || crash_fail "only $n live runs were readopted"
n=$(jq -r 'select(.verb == "record_exit" and .decision == "granted" and .from == "recovery") | .run' \
	"$H/trace/trace.jsonl" | sort -u | wc -l)
((n >= 2)) || crash_fail "only $n ended runs were checkpointed by recovery"
crash_invariants
echo ok
