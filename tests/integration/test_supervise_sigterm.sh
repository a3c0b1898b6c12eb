#!/usr/bin/env bash
# A graceful stop of the supervisor (SIGTERM) leaves its running job
# running: the supervisor exits 0 at once, the job and its shim live on, and
# the run stays recorded running for a later supervisor to adopt. The claim
# it had waiting at the coordinator is withdrawn, not granted to it later.
set -u
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/supervise_lib.bash"
supervise_init sigterm

start_coord
start_sup --tick-ms 200

t=$(B add -- sh -c 'echo $$ > "$1/job.pid"; exec sleep 300' sh "$tmp") || fail "add"
wait_until 60 test -s "$tmp/job.pid" || fail "the job did not start"
job=$(cat "$tmp/job.pid")
wait_until 30 sh -c "[ \"\$('$BIN/berth' show $t --json | jq -r '.runs[0].state')\" = running ]" ||
	fail "the run is not recorded running"
shim=$(jqshow "$t" '.runs[0].pid')

kill -TERM "$sup"
wait "$sup"
rc=$?
sup=
[ "$rc" -eq 0 ] || fail "the supervisor exited $rc on SIGTERM"
sleep 0.5
kill -0 "$job" 2>/dev/null || fail "the job ($job) died with the supervisor"
kill -0 "$shim" 2>/dev/null || fail "the shim ($shim) died with the supervisor"
expect "$t" '.runs[0].state' '"running"'
expect "$t" .state '"claimed"'

# It withdrew the claim the coordinator was holding for it: work added now
# waits for a supervisor instead of being claimed by the one that left.
t2=$(B add -- true) || fail "add"
sleep 1
expect "$t2" .state '"ready"'
expect "$t2" '.runs' '[]'
grep -q "stop: the held claim could not be withdrawn" "$tmp/supervisor.log" &&
	fail "the held claim was not withdrawn"
echo PASS
