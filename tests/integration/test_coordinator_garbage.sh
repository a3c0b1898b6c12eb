#!/usr/bin/env bash
# Garbage on the coordinator's socket (DESIGN §5): bytes that are not a
# request, an empty message, an oversized one, a protocol version mismatch
# and an envelope without a sender are each answered with their error, and
# the coordinator keeps serving real requests afterwards. So it does after
# clients that hang up before the SP handshake, which stop nng 1.5.2's
# listener for good (nanomsg/nng#1518): the coordinator listens again.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/coordinator_lib.bash"
coord_test_init coordinator_garbage

coord_start

expect() { # what pattern output
	[[ $3 == $2 ]] || fail "$1: expected '$2', got '$3'"
	alive "$coord" || fail "the coordinator died after $1"
}

expect garbage 'req_id=0 error 1: *' "$(sendraw hex deadbeefffffffff0f)"
expect empty 'req_id=0 error 1: *' "$(sendraw hex '')"
expect oversized 'req_id=0 error 7: *limit*' "$(sendraw zeros 5000000)"
expect version 'req_id=77 error 2: *version 99*version 1*' "$(sendraw version 99)"
expect noactor 'req_id=77 error 1: *actor*' "$(sendraw noactor)"

# Still serving: a real client adds and lists.
id=$(berth add -- true) || fail "berth add failed after the garbage"
assert_eq T1 "$id" "berth add"
berth list | grep -q T1 || fail "berth list does not show T1"
expect list 'req_id=77 granted' "$(sendraw version 1)"

# Clients gone before the handshake: the coordinator keeps answering. A
# hang-up stops nng 1.5.2's listener when it comes before the listener's
# half of the handshake was written (EPIPE); whether one of them does is up
# to the scheduler, so there are many, and the coordinator must answer
# either way (it says so in its log when it had to listen again).
for i in 1 2 3 4 5; do
	sendraw hangup 10 || fail "hangup $i: could not connect"
	sleep 0.05
done
id=$(berth add -- true) || fail "berth add failed after clients hung up mid-handshake"
assert_eq T2 "$id" "berth add after the hang-ups"
alive "$coord" || fail "the coordinator died after the hang-ups"
grep -c "listening on .* again" "$BERTH_TEST_DIR/coord.log" | sed 's/^/times it listened again: /'

# Each refusal is traced as an error; the sender of garbage is unknown.
trace=$BERTH_HOME/trace/trace.jsonl
n=$(grep -c '"decision":"error"' "$trace") || true
assert_eq 5 "$n" "error lines in the trace"
grep -q '"from":"","instance":"","req_id":0,"verb":"none".*"reason":"malformed"' "$trace" ||
	fail "no malformed line for the garbage"
grep -q '"reason":"too_large"' "$trace" || fail "no too_large line"
grep -q '"from":"test".*"req_id":77.*"reason":"version"' "$trace" || fail "no version line"

coord_stop TERM
pass "garbage is answered with errors and the coordinator keeps serving"
