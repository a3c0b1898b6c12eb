#!/usr/bin/env bash
# Exit codes that tell the job's result (DESIGN §12): wait exits 0 / 1 /
# 2 usage / 124 timeout; wait --exit-code exits with the job's own status
# (128+N for signal N), as tsp -w does; logs --follow ends with one line on
# stderr naming the outcome and exits the same way.
set -u
source "$(dirname "$0")/lib.sh"
berth_test_init cli_exit
berth_launch --slots 3
err=$BERTH_TEST_DIR/err

t4=$(B add -- sh -c 'echo four; exit 4') || fail "add"
t0=$(B add -- true) || fail "add"
tk=$(B add -- sh -c 'echo bye; kill -9 $$') || fail "add"
B wait --exit-code "$t4" --timeout 60s >/dev/null
assert_eq 4 $? "wait --exit-code of exit 4"
B wait --exit-code "$t0" --timeout 60s >/dev/null
assert_eq 0 $? "wait --exit-code of success"
B wait --exit-code "$tk" --timeout 60s >/dev/null
assert_eq 137 $? "wait --exit-code of SIGKILL"
# Without --exit-code: 1 when any did not succeed.
B wait "$t0" "$t4" --timeout 60s >/dev/null
assert_eq 1 $? "wait of a failed ticket"
B wait "$t0" --timeout 60s >/dev/null
assert_eq 0 $? "wait of a succeeded one"

# logs --follow: the output, then the outcome on stderr, the job's status.
out=$(B logs --follow "$t4" 2>"$err")
assert_eq 4 $? "logs --follow exit of exit 4"
assert_eq four "$out" "logs --follow output"
assert_eq "berth logs: $t4-r1 failed (exit 4)" "$(cat "$err")" "logs --follow's last line"
out=$(B logs -f "$tk" 2>"$err")
assert_eq 137 $? "logs --follow exit of SIGKILL"
grep -q "^berth logs: $tk-r1 failed (signal 9, " "$err" || fail "logs -f signal line: $(cat "$err")"
B logs -f "$t0" >/dev/null 2>"$err"
assert_eq 0 $? "logs --follow of a success"
assert_eq "berth logs: $t0-r1 succeeded" "$(cat "$err")" "the success line"
# A job still running: followed to its end, then the same.
tl=$(B add -- sh -c 'sleep 1; echo late; exit 3') || fail "add"
out=$(B logs -f "$tl" 2>"$err")
assert_eq 3 $? "logs --follow of a running job"
assert_eq late "$out" "followed output"
# Without --follow: no end line, exit 0.
B logs "$t4" >/dev/null 2>"$err"
assert_eq 0 $? "logs without --follow"
[[ ! -s $err ]] || fail "logs without --follow wrote: $(cat "$err")"

# A timeout is 124, a typo 2: a script can tell them apart.
th=$(B add --hold -- true) || fail "add --hold"
B wait "$th" --timeout 300ms 2>"$err"
assert_eq 124 $? "wait's timeout"
grep -q "timed out after 300ms; $th not settled" "$err" || fail "timeout message: $(cat "$err")"
B wait "$th" --timeout bogus 2>/dev/null
assert_eq 2 $? "wait's usage error"
B wait --exit-code "$th" "$t0" 2>/dev/null
assert_eq 2 $? "--exit-code with two tickets"
# No ID: the newest ticket.
B release "$th" >/dev/null
B wait --timeout 60s >"$BERTH_TEST_DIR/out"
assert_eq 0 $? "wait with no id"
assert_eq "$th succeeded" "$(cat "$BERTH_TEST_DIR/out")" "wait with no id waits for the newest"
check_invariants
pass "wait and logs --follow exit with the job's own status; a timeout is 124"
