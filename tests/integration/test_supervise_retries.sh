#!/usr/bin/env bash
# Retries: a job that fails twice with --retries 2 runs three times, each
# attempt a run of its own, with the coordinator's backoff between them
# (base 300 ms, doubling); one that always fails ends failed after three.
set -u
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/supervise_lib.bash"
supervise_init retries

start_coord --backoff-ms 300
start_sup --tick-ms 200

# Fails on its first two runs, succeeds on the third.
t1=$(B add --retries 2 -- sh -c '
	echo run >> "$1"
	[ "$(wc -l < "$1")" -ge 3 ]' sh "$tmp/count1") || fail "add"
t2=$(B add --retries 2 -- sh -c 'echo run >> "$1"; exit 1' sh "$tmp/count2") || fail "add"
bwait "$t1" || fail "$t1 should succeed on its third run"
bwait "$t2"
[ $? -eq 1 ] || fail "$t2 should fail for good"

[ "$(wc -l < "$tmp/count1")" -eq 3 ] || fail "$t1 ran $(wc -l < "$tmp/count1") times"
[ "$(wc -l < "$tmp/count2")" -eq 3 ] || fail "$t2 ran $(wc -l < "$tmp/count2") times"
expect "$t1" .state '"succeeded"'
expect "$t1" .attempts 3
expect "$t1" '[.runs[] | .state]' '["failed","failed","succeeded"]'
expect "$t1" '[.runs[] | .exit_code]' '[1,1,0]'
expect "$t1" '[.runs[] | .attempt]' '[1,2,3]'
expect "$t2" .state '"failed"'
expect "$t2" '[.runs[] | .state]' '["failed","failed","failed"]'

# The backoff: attempt n+1 is claimed no sooner than base * 2^(n-1) after
# attempt n settled.
for t in "$t1" "$t2"; do
	gaps=$(jqshow "$t" '[range(1; .runs | length) as $i |
		.runs[$i].claimed_ms - .runs[$i - 1].settled_ms] | map(tostring) | join(" ")')
	set -- $gaps
	[ "$#" -eq 2 ] || fail "$t: gaps '$gaps'"
	[ "$1" -ge 300 ] || fail "$t: second attempt after $1 ms, backoff is 300"
	[ "$2" -ge 600 ] || fail "$t: third attempt after $2 ms, backoff is 600"
done
echo PASS
