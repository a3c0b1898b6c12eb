#!/usr/bin/env bash
# A run outlives its supervisor and is settled by the next one: the first
# supervisor is stopped (SIGTERM) while its job runs; recovery finds the job
# alive and readopts it for a new supervisor, which watches the shim by
# pidfd (it is not its child) and, when the job ends, settles the run from
# the shim's exit record with the job's real exit code.
set -u
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/supervise_lib.bash"
supervise_init adopt

start_coord
start_sup --tick-ms 200

t=$(B add -- sh -c '
	echo $$ > "$1/job.pid"
	while [ ! -e "$1/release" ]; do sleep 0.05; done
	exit 7' sh "$tmp") || fail "add"
wait_until 60 test -s "$tmp/job.pid" || fail "the job did not start"
job=$(cat "$tmp/job.pid")
first=$(jqshow "$t" '.runs[0].owner')

kill -TERM "$sup"
wait "$sup" || fail "the first supervisor did not exit 0"
sup=
kill -0 "$job" || fail "the job died with its supervisor"

start_sup --tick-ms 200
"$BIN/berth-recovery" --home "$BERTH_HOME" --tick-ms 200 --lease-ms 2000 2>>"$tmp/recovery.log" &
extra=$!
# Readopted for the new supervisor, which then watches it.
wait_until 60 sh -c "[ \"\$('$BIN/berth' show $t --json | jq -r '.runs[0].owner')\" != '$first' ]" ||
	fail "the run was not readopted"
wait_until 30 grep -q "adopted" "$tmp/supervisor.log" || fail "the new supervisor did not adopt the run"
expect "$t" '.runs[0].state' '"running"'

touch "$tmp/release"
bwait "$t"
[ $? -eq 1 ] || fail "exit 7 must fail the ticket"
expect "$t" '.runs | length' 1
expect "$t" '.runs[0].state' '"failed"'
expect "$t" '.runs[0].exit_code' 7
expect "$t" '.runs[0].capture_complete' true
# The new supervisor checkpointed the exit, not recovery.
run=$(jqshow "$t" '.runs[0].id')
owner=$(jqshow "$t" '.runs[0].owner')
from=$(jq -r --arg r "$run" 'select(.run == $r and .verb == "record_exit" and
	.decision == "granted") | "\(.from) \(.instance)"' "$BERTH_HOME/trace/trace.jsonl")
[ "$from" = "supervisor $owner" ] || fail "record_exit granted to '$from', want supervisor $owner"
echo PASS
