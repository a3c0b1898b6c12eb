#!/usr/bin/env bash
# The CLI rides out coordinator restarts (issue 4): a command started while
# the coordinator is down waits, says so on stderr after a second, and
# succeeds once it is back; `berth wait` keeps waiting across a kill -9 and
# a restart, and still reports the right exit status.
source "$(dirname "$0")/lib.sh"
set -u
BIN=${BERTH_BIN:-$(cd "$(dirname "$0")/../../build/bin" && pwd)}
berth_test_init cli_restart
tmp=$BERTH_TEST_DIR
unset BERTH_TIMEOUT BERTH_FAILPOINTS
coord=
bg=
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
start_coord() {
	"$BIN/berth-coordinator" --home "$BERTH_HOME" 2>>"$tmp/coord.log" &
	coord=$!
}
kill_coord() {
	kill -KILL "$coord"
	wait "$coord" 2>/dev/null
	coord=
}

mkdir -p "$BERTH_HOME"
start_coord
wait_until 20 B list >/dev/null 2>&1 || fail "coordinator did not come up"
t1=$(B add --hold -- true) || fail "add"

# --- wait keeps waiting while the coordinator is killed and restarted.
B wait "$t1" --timeout 60s >"$tmp/wait.out" 2>"$tmp/wait.err" &
bg=$!
sleep 0.5
kill_coord
sleep 2.5 # long enough for the wait's next call to notice
kill -0 "$bg" 2>/dev/null || fail "wait gave up while the coordinator was down: $(cat "$tmp/wait.err")"
start_coord
wait_until 20 B list >/dev/null 2>&1 || fail "coordinator did not come back"
B cancel "$t1" >/dev/null || fail "cancel $t1"
wait "$bg"
rc=$?
bg=
[ "$rc" = 1 ] || fail "wait exited $rc after the restart, want 1 (cancelled): $(cat "$tmp/wait.err")"
[ "$(cat "$tmp/wait.out")" = "$t1 cancelled" ] || fail "wait printed '$(cat "$tmp/wait.out")'"
grep -qF "waiting for the coordinator at $BERTH_HOME/coordinator.sock" "$tmp/wait.err" ||
	fail "wait did not say what it was waiting for: $(cat "$tmp/wait.err")"

# --- a command started while the coordinator is down succeeds once it is back.
kill_coord
start=$(date +%s%N)
B add --name late -- true >"$tmp/add.out" 2>"$tmp/add.err" &
bg=$!
sleep 2
kill -0 "$bg" 2>/dev/null || fail "add gave up at once: $(cat "$tmp/add.err")"
start_coord
wait "$bg"
rc=$?
bg=
el=$((($(date +%s%N) - start) / 1000000))
[ "$rc" = 0 ] || fail "add during a restart exited $rc: $(cat "$tmp/add.err")"
t2=$(cat "$tmp/add.out")
[[ $t2 =~ ^T[0-9]+$ ]] || fail "add printed '$t2'"
grep -qF "berth: waiting for the coordinator at $BERTH_HOME/coordinator.sock..." "$tmp/add.err" ||
	fail "no waiting notice: $(cat "$tmp/add.err")"
grep -qF "answered" "$tmp/add.err" || fail "no notice that it answered: $(cat "$tmp/add.err")"
[ "$el" -ge 2000 ] || fail "add returned after ${el}ms, before the coordinator was back"
# Exactly one ticket named late: the retries reused one request id.
[ "$(B list --json | jq '[.[] | select(.name == "late")] | length')" = 1 ] ||
	fail "not exactly one 'late' ticket: $(B list --json)"

# --- a wait --timeout still ends on time while the coordinator is down.
kill_coord
start=$(date +%s%N)
B wait "$t2" --timeout 2s >/dev/null 2>"$tmp/wait2.err"
rc=$?
el=$((($(date +%s%N) - start) / 1000000))
[ "$rc" = 124 ] || fail "wait --timeout 2s with the coordinator down exited $rc, want 124"
[ "$el" -ge 1900 ] && [ "$el" -lt 6000 ] || fail "wait --timeout 2s took ${el}ms"
grep -q "timed out" "$tmp/wait2.err" || fail "wait timeout message: $(cat "$tmp/wait2.err")"

echo "PASS test_cli_restart"
