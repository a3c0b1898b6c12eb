#!/usr/bin/env bash
# The exit status reaches the supervisor from the shim itself, so it is kept
# when the exit record cannot be written at all: here the shim's failpoints
# refuse both the reservation at the go and the write at the end, as a disk
# already full at the go would (test_exhaust_disk_full.sh fills a real one).
# The supervisor checkpoints the real exit from the shim's status message;
# nothing is orphaned or run twice; the shim, which stayed to retry, writes
# the record once it can and exits.
set -u
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/supervise_lib.bash"
supervise_init exhaust_status

export BERTH_FAILPOINTS_SHIM='shim.reserve_exit=error;shim.before_exit_record=error'
start_coord
start_sup --tick-ms 200
unset BERTH_FAILPOINTS_SHIM

mkdir -p "$tmp/w4" "$tmp/w0"
t4=$(B add --retries 2 --workdir "$tmp/w4" -- sh -c 'echo ran >>ran; exit 4') || fail "add"
t0=$(B add --retries 2 --workdir "$tmp/w0" -- sh -c 'echo ran >>ran; exit 0') || fail "add"
bwait "$t0" || fail "the job that exits 0 did not succeed: $(B show "$t0" --json)"
wait_for 60 ticket_is "$t4" failed

expect "$t0" '.attempts' 1
expect "$t0" '.runs[0] | {state, exit_code, disk_full, capture_complete}' \
	'{"state":"succeeded","exit_code":0,"disk_full":true,"capture_complete":false}'
[[ $(wc -l <"$tmp/w0/ran") == 1 ]] || fail "exit 0 ran $(wc -l <"$tmp/w0/ran") times"
expect "$t4" '[.runs[] | {state, exit_code}] | unique' '[{"state":"failed","exit_code":4}]'
[[ $(wc -l <"$tmp/w4/ran") == $(B show "$t4" --json | jq '.runs | length') ]] ||
	fail "exit 4: executions and runs differ"
grep -q "could not write the exit record (disk full?): the exit is checkpointed from its status" \
	"$tmp/supervisor.log" || fail "the supervisor did not checkpoint from the status"
# The shims stayed to write their records, and did.
rec() { grep -q "^exit_code $2" "$BERTH_HOME/runs/$(B show "$1" --json | jq -r '.runs[0].id')/exit" 2>/dev/null; }
wait_for 30 rec "$t0" 0
wait_for 30 rec "$t4" 4
pass "with no exit record written, exit 0 and exit 4 checkpointed from the shim's status, once each"
