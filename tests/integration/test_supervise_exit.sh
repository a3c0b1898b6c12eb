#!/usr/bin/env bash
# Exit facts are recorded exactly and decide the ticket: exit 3 -> failed
# with exit_code 3, true -> succeeded with 0, kill -9 -> failed with signal 9
# and no exit code. Output is captured and the exit checkpoint is the
# supervisor's (record_exit then settle, both granted, in the trace).
set -u
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/supervise_lib.bash"
supervise_init exit

start_coord
start_sup --tick-ms 200

t1=$(B add -- sh -c 'echo to-out; echo to-err >&2; exit 3') || fail "add"
t2=$(B add -- true) || fail "add"
t3=$(B add -- sh -c 'kill -9 $$') || fail "add"

bwait "$t2" || fail "wait $t2: a succeeded ticket must give 0"
bwait "$t1" "$t2" "$t3"
rc=$?
[ "$rc" -eq 1 ] || fail "wait on two failed tickets exited $rc, want 1"

expect "$t1" .state '"failed"'
expect "$t1" .attempts 1
expect "$t1" '.runs | length' 1
expect "$t1" '.runs[0].state' '"failed"'
expect "$t1" '.runs[0].exit_code' 3
expect "$t1" '.runs[0].signal' null
expect "$t1" '.runs[0].capture_complete' true

expect "$t2" .state '"succeeded"'
expect "$t2" '.runs[0].state' '"succeeded"'
expect "$t2" '.runs[0].exit_code' 0
expect "$t2" '.runs[0].signal' null

expect "$t3" .state '"failed"'
expect "$t3" '.runs[0].state' '"failed"'
expect "$t3" '.runs[0].exit_code' null
expect "$t3" '.runs[0].signal' 9

# stdout and stderr both land in the run's output, in order.
out=$(B logs "$t1-r1") || fail "logs $t1-r1"
[ "$out" = "$(printf 'to-out\nto-err')" ] || fail "logs $t1-r1: '$out'"
expect "$t1" '.runs[0].output_bytes' 14

# The shim's exit record is the source of those facts.
run1=$(jqshow "$t1" '.runs[0].id')
grep -qx 'exit_code 3' "$BERTH_HOME/runs/$run1/exit" || fail "exit record: $(cat "$BERTH_HOME/runs/$run1/exit")"
[ -e "$BERTH_HOME/runs/$run1/started" ] || fail "no started marker"

# Every run was checkpointed and settled by the supervisor, once.
for t in "$t1" "$t2" "$t3"; do
	r=$(jqshow "$t" '.runs[0].id')
	n=$(jq -c --arg r "$r" 'select(.run == $r and .from == "supervisor" and
		(.verb == "record_exit" or .verb == "settle" or .verb == "start") and
		.decision == "granted") | .verb' "$BERTH_HOME/trace/trace.jsonl" | sort | tr '\n' ' ')
	[ "$n" = '"record_exit" "settle" "start" ' ] || fail "trace for $r: $n"
done

kill -0 "$sup" || fail "supervisor died"
echo PASS
