#!/usr/bin/env bash
# The trace (DESIGN §9): one line per decided request, in execution order,
# every required key on every line, seq strictly increasing and going on
# across a coordinator restart.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/coordinator_lib.bash"
coord_test_init coordinator_trace
trace=$BERTH_HOME/trace/trace.jsonl

lines() { if [[ -f $trace ]]; then wc -l <"$trace"; else echo 0; fi; }

coord_start --sync normal
base=$(lines) # the readiness probes
# Exactly one request each, in this order.
sendraw version 1 >/dev/null
sendraw hex 0badc0de >/dev/null
sendraw version 2 >/dev/null
sendraw version 1 >/dev/null
assert_eq $((base + 4)) "$(lines)" "trace lines after 4 requests"
tail -n 4 "$trace" | sed 's/.*"verb":"\([a-z_]*\)".*"decision":"\([a-z]*\)".*/\1 \2/' \
	>"$BERTH_TEST_DIR/got"
printf '%s\n' "list granted" "none error" "list error" "list granted" >"$BERTH_TEST_DIR/want"
diff "$BERTH_TEST_DIR/want" "$BERTH_TEST_DIR/got" >&2 || fail "the trace's order differs"

# Real clients: each command adds at least one line.
for cmd in "add -- true" "add --hold -- false" "hold T1" "release T1" "show T1 --json" "list"; do
	before=$(lines)
	# shellcheck disable=SC2086
	berth $cmd >/dev/null || fail "berth $cmd"
	(($(lines) > before)) || fail "berth $cmd left no trace line"
done
grep -q '"from":"cli".*"verb":"hold","ticket":"T1","run":"","decision":"granted"' "$trace" ||
	fail "no granted hold of T1 from the cli"

coord_stop TERM
last=$(tail -n 1 "$trace" | sed 's/^{"seq":\([0-9]*\),.*/\1/')
coord_start --sync normal
sendraw version 1 >/dev/null
coord_stop TERM

# Every line: all the keys, in order, and seq = previous + 1 throughout;
# a request the coordinator read also says who it took the sender for.
keys='^\{"seq":[0-9]+,"ts_ms":[0-9]+,"from":"[^"]*","instance":"[^"]*","req_id":[0-9]+,"verb":"[a-z_]+","ticket":"[^"]*","run":"[^"]*","decision":"(granted|denied|error|replayed)","reason":"([^"\\]|\\.)*","latency_us":[0-9]+(,"caller":"[a-z]+")?\}$'
bad=$(grep -cvE "$keys" "$trace") || true
assert_eq 0 "$bad" "trace lines without the required keys"
prev=0
while IFS= read -r line; do
	seq=${line#\{\"seq\":}
	seq=${seq%%,*}
	((seq == prev + 1)) || fail "seq $seq follows $prev"
	prev=$seq
done <"$trace"
grep -q "^{\"seq\":$((last + 1))," "$trace" || fail "seq did not go on after the restart"
pass "one trace line per decided request, in order, across a restart"
