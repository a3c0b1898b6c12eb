#!/usr/bin/env bash
# A decision's trace line is written after its COMMIT, so a coordinator
# killed in between loses that line from trace/trace.jsonl while the
# decision stands. The database keeps the last committed decision's line in
# the same transaction, and the next coordinator appends it: the trace
# again holds every decision, with the seq it would have had. Shown by
# cutting the last line off (all or half of it, as a crash would) after a
# decision and restarting.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/coordinator_lib.bash"
coord_test_init coordinator_trace_restore
trace=$BERTH_HOME/trace/trace.jsonl
same() { sed 's/"ts_ms":[0-9]*,//; s/,"latency_us":[0-9]*}$/}/' <<<"$1"; }

coord_start
t=$(berth add --name kept -- true) || fail "berth add"
coord_stop TERM
want=$(tail -n 1 "$trace")
[[ $want == *'"verb":"add","ticket":"'"$t"'"'*'"decision":"granted"'* ]] ||
	fail "the last line is not the add: $want"
seq=${want#\{\"seq\":}
seq=${seq%%,*}

# The line was never written.
sed -i '$d' "$trace"
coord_start
got=$(grep "^{\"seq\":$seq," "$trace") || fail "the add's line (seq $seq) was not restored"
# The same line but for ts_ms and latency_us: the kept copy is taken just
# before COMMIT.
[[ $(same "$got") == "$(same "$want")" ]] || fail "restored line differs: $got, want $want"
grep -q "restored the line of decision $seq" "$BERTH_TEST_DIR/coord.log" ||
	fail "the coordinator did not say it restored the line"
# Seq goes on after it, once.
berth list >/dev/null || fail "berth list"
assert_eq 1 "$(grep -c "^{\"seq\":$seq," "$trace")" "lines with seq $seq"
grep -q "^{\"seq\":$((seq + 1)),.*\"verb\":\"list\"" "$trace" || fail "seq did not go on"

# Half of the line was written: the torn half is cut, the line restored.
t2=$(berth add --hold -- true) || fail "second add"
coord_stop TERM
want=$(tail -n 1 "$trace")
[[ $want == *'"verb":"add","ticket":"'"$t2"'"'* ]] || fail "the last line is not the add: $want"
seq=${want#\{\"seq\":}
seq=${seq%%,*}
sed -i '$d' "$trace"
printf '%s' "${want:0:40}" >>"$trace"
coord_start
got=$(grep "^{\"seq\":$seq," "$trace") || fail "the torn line (seq $seq) was not restored"
[[ $(same "$got") == "$(same "$want")" ]] || fail "torn line not replaced: $got, want $want"
grep -qvF "${want:0:40}{" "$trace" || fail "the torn half is still there"
coord_stop TERM
pass "a trace line lost between COMMIT and its write is restored from the database"
