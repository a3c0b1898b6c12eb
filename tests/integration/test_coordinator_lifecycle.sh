#!/usr/bin/env bash
# The coordinator process: one per home (a second is refused, naming the
# pid that holds the lock), a writable home refused, a private socket, startup errors with
# exit status 2 (bad BERTH_FAILPOINTS, a newer database schema), a clean
# exit on SIGTERM and on SIGINT, and a stale socket file does not stop a
# restart after a crash.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/coordinator_lib.bash"
coord_test_init coordinator_lifecycle

# --help and bad arguments.
berth-coordinator --help | grep -q -- --lease-ms || fail "--help does not list --lease-ms"
rc=0
berth-coordinator --sync sometimes 2>/dev/null || rc=$?
assert_eq 2 "$rc" "exit status of a bad --sync"
rc=0
berth-coordinator --lease-ms 9223372036854775807 2>/dev/null || rc=$?
assert_eq 2 "$rc" "exit status of a --lease-ms that overflows now + it"

# A home others may write is refused and left as it was; one they may
# only read is used as it is (DESIGN §2: checked, never chmod'ed).
chmod 0775 "$BERTH_HOME"
rc=0
err=$(berth-coordinator --home "$BERTH_HOME" 2>&1) || rc=$?
assert_eq 1 "$rc" "exit status with a group-writable home"
[[ $err == *"$BERTH_HOME is mode 775 (group- or world-writable); refusing to use it as BERTH_HOME"* ]] ||
	fail "the refusal does not name the home and its mode: $err"
assert_eq 775 "$(stat -c %a "$BERTH_HOME")" "home mode after the refusal"
chmod 0755 "$BERTH_HOME"
coord_start --sync normal
assert_eq 755 "$(stat -c %a "$BERTH_HOME")" "home mode"
assert_eq 600 "$(stat -c %a "$BERTH_HOME/coordinator.sock")" "socket mode"

# A second coordinator for the same home is refused and names the holder.
rc=0
err=$(berth-coordinator --home "$BERTH_HOME" 2>&1 >/dev/null) || rc=$?
assert_eq 1 "$rc" "exit status of a second coordinator"
[[ $err == *"pid $coord"* ]] || fail "the refusal does not name pid $coord: $err"
alive "$coord" || fail "the first coordinator died"
coord_answers || fail "the first coordinator stopped answering"
coord_stop TERM

# SIGINT is a clean stop too; then a crash leaves a stale socket file that
# does not keep the next coordinator from listening.
coord_start
coord_stop INT
coord_start
kill -KILL "$coord"
wait "$coord" 2>/dev/null || true
coord=
[[ -S $BERTH_HOME/coordinator.sock ]] || fail "expected a stale socket after SIGKILL"
coord_start
coord_stop TERM

# Startup errors: exit status 2 with a message naming the problem.
rc=0
err=$(BERTH_FAILPOINTS='coordinator.nonesuch=crash' berth-coordinator --home "$BERTH_HOME" 2>&1) ||
	rc=$?
assert_eq 2 "$rc" "exit status with a bad BERTH_FAILPOINTS"
[[ $err == *coordinator.nonesuch* ]] || fail "the failpoint error does not name the point: $err"

v=$(db_query 'PRAGMA user_version')
db_query 'PRAGMA user_version = 999'
rc=0
err=$(berth-coordinator --home "$BERTH_HOME" 2>&1) || rc=$?
assert_eq 2 "$rc" "exit status with a newer schema"
[[ $err == *999* ]] || fail "the schema error does not name the version: $err"
# Back to this build's schema: the cleanup's conformance check opens the
# store as the coordinator does, and would refuse it too.
db_query "PRAGMA user_version = $v"
pass "one coordinator per home, private files, clean stops, clear startup errors"
