#!/usr/bin/env bash
# The fast path's one request (DESIGN §4): a run's record_exit, carrying its
# settle and, as a part, the next run's claim naming a shim spawned ahead.
# The coordinator is killed right after committing it (before any reply):
# the supervisor's resend (by a later pass, once its call gave up), with the
# same request ids, is answered from the stored replies, so the first run is settled once, the next is claimed
# once (its grant replayed, not made again) and handed to the same waiting
# shim, and each job runs exactly once.
set -u
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/supervise_lib.bash"
supervise_init then_crash

start_coord
BERTH_FAILPOINTS="supervisor.before_record_exit=1*pause" start_sup --slots 1 --tick-ms 200

t1=$(B add -- sh -c 'echo one >> "$1"' sh "$tmp/ran1") || fail "add t1"
wait_for 30 test -e "$BERTH_HOME/failpoints/supervisor.before_record_exit.reached"
# The next job waits for the slot; the supervisor holds its exit unsent.
t2=$(B add -- sh -c 'echo two >> "$1"' sh "$tmp/ran2") || fail "add t2"

# A coordinator that dies after its first commit, before the reply.
kill "$coord"
wait "$coord" 2>/dev/null
BERTH_FAILPOINTS="coordinator.after_commit=1*crash" start_coord
touch "$BERTH_HOME/failpoints/supervisor.before_record_exit.release"
{ wait "$coord"; } 2>/dev/null
rc=$?
[[ $rc == 137 ]] || fail "the coordinator should have crashed after its commit, exited $rc"
coord=
# Down long enough for the supervisor's call to give up: the request is then
# sent again by a later pass, built anew, and must name the same part.
no_answer() { grep -q "record_exit: no answer from the coordinator" "$tmp/supervisor.log"; }
wait_for 60 no_answer
start_coord

bwait "$t1" || fail "t1: $(B show "$t1" --json)"
bwait "$t2" || fail "t2: $(B show "$t2" --json)"
[[ $(cat "$tmp/ran1") == one && $(cat "$tmp/ran2") == two ]] ||
	fail "each job once: ran1=$(wc -l <"$tmp/ran1") ran2=$(wc -l <"$tmp/ran2")"
expect "$t1" '[.runs[].state]' '["succeeded"]'
expect "$t2" '[.runs[].state]' '["succeeded"]'

# What the crash cut: one request with the record_exit, its settle and the
# claim (with its start) was committed; its resend was replayed, part and all.
run1=$(jqshow "$t1" '.runs[0].id')
run2=$(jqshow "$t2" '.runs[0].id')
n=$(trace_count ".verb == \"record_exit\" and .run == \"$run1\" and .decision == \"granted\"")
[[ $n == 1 ]] || fail "record_exit of t1 granted $n times"
n=$(trace_count ".verb == \"record_exit\" and .run == \"$run1\" and .decision == \"replayed\"")
((n >= 1)) || fail "the record_exit of t1 was not replayed"
n=$(trace_count ".verb == \"claim\" and .run == \"$run2\" and .decision == \"granted\"")
[[ $n == 1 ]] || fail "t2 claimed $n times"
rid=$(jq -r "select(.verb == \"claim\" and .run == \"$run2\" and .decision == \"granted\") | .req_id" \
	"$BERTH_HOME/trace/trace.jsonl")
rx=$(jq -r "select(.verb == \"record_exit\" and .run == \"$run1\" and .decision == \"granted\") | .seq" \
	"$BERTH_HOME/trace/trace.jsonl")
cs=$(jq -r "select(.verb == \"claim\" and .run == \"$run2\" and .decision == \"granted\") | .seq" \
	"$BERTH_HOME/trace/trace.jsonl")
((cs > rx)) || fail "t2's claim (seq $cs) before t1's record_exit (seq $rx)"
n=$(trace_count ".verb == \"claim\" and .req_id == $rid and .decision == \"replayed\"")
((n >= 1)) || fail "the claim part (req_id $rid) was not replayed"
n=$(trace_count ".verb == \"start\" and .run == \"$run2\" and .fused == \"claim\" and .decision == \"granted\"")
[[ $n == 1 ]] || fail "t2's fused start granted $n times"
check_invariants
echo PASS
