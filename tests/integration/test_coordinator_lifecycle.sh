#!/usr/bin/env bash
# The coordinator process: one per home (a second is refused, naming the
# pid that holds the lock), a private home and socket, startup errors with
# exit status 2 (bad BERTH_FAILPOINTS, a newer database schema), a clean
# exit on SIGTERM and on SIGINT, and a stale socket file does not stop a
# restart after a crash.
set -euo pipefail

BIN=${BERTH_BIN:?set BERTH_BIN to the build bin/ directory}
SENDRAW=$BIN/../tests/berth-sendraw
home=$(mktemp -d /tmp/berth-it-life.XXXXXX)/home
export BERTH_HOME=$home
unset BERTH_FAILPOINTS
url=ipc://$home/coordinator.sock
coord=

cleanup() {
	[[ -n $coord ]] && kill -KILL "$coord" 2>/dev/null
	# The status board and trace ring of this home (common/board.c names
	# them after the SHA-256 of the absolute home).
	local h
	h=$(printf '%s' "$(realpath -m "$home")" | sha256sum | cut -c1-16)
	rm -f "/dev/shm/berth-$h" "/dev/shm/berth-$h-ring"
	rm -rf "${home%/home}"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*" >&2
	[[ -f $home/coord.log ]] && tail -n 30 "$home/coord.log" >&2
	exit 1
}
wait_for() { # seconds command...
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		((SECONDS < deadline)) || return 1
		sleep 0.05
	done
}
answers() { "$SENDRAW" "$url" version 1 >/dev/null 2>&1; }
dead() { ! kill -0 "$1" 2>/dev/null; }
start() {
	mkdir -p "$home"
	"$BIN/berth-coordinator" --home "$home" --sync normal >>"$home/../coord.log" 2>&1 &
	coord=$!
	wait_for 30 answers || fail "the coordinator did not answer"
}
stop() { # signal
	local rc=0
	kill "-$1" "$coord"
	wait "$coord" || rc=$?
	coord=
	[[ $rc == 0 ]] || fail "SIG$1: exit status $rc"
}

# --help and bad arguments.
"$BIN/berth-coordinator" --help | grep -q -- --lease-ms || fail "--help"
rc=0
"$BIN/berth-coordinator" --sync sometimes 2>/dev/null || rc=$?
[[ $rc == 2 ]] || fail "a bad --sync exited $rc, not 2"

start
mode=$(stat -c %a "$home")
[[ $mode == 700 ]] || fail "home is $mode, not 700"
mode=$(stat -c %a "$home/coordinator.sock")
[[ $mode == 600 ]] || fail "the socket is $mode, not 600"

# A second coordinator for the same home is refused and names the holder.
rc=0
err=$("$BIN/berth-coordinator" --home "$home" 2>&1 >/dev/null) || rc=$?
[[ $rc == 1 ]] || fail "a second coordinator exited $rc, not 1"
[[ $err == *"pid $coord"* ]] || fail "the refusal does not name pid $coord: $err"
kill -0 "$coord" || fail "the first coordinator died"
answers || fail "the first coordinator stopped answering"
stop TERM

# SIGINT is a clean stop too; then a crash leaves a stale socket file that
# does not keep the next coordinator from listening.
start
stop INT
start
kill -KILL "$coord"
wait "$coord" 2>/dev/null || true
coord=
[[ -S $home/coordinator.sock ]] || fail "expected a stale socket after SIGKILL"
start
stop TERM

# Startup errors: exit status 2 with a message naming the problem.
rc=0
err=$(BERTH_FAILPOINTS='coordinator.nonesuch=crash' "$BIN/berth-coordinator" --home "$home" 2>&1) || rc=$?
[[ $rc == 2 ]] || fail "a bad BERTH_FAILPOINTS exited $rc, not 2"
[[ $err == *coordinator.nonesuch* ]] || fail "the failpoint error does not name the point: $err"

sqlite3 "$home/berth.db" 'PRAGMA user_version = 999'
rc=0
err=$("$BIN/berth-coordinator" --home "$home" 2>&1) || rc=$?
[[ $rc == 2 ]] || fail "a newer schema exited $rc, not 2"
[[ $err == *999* ]] || fail "the schema error does not name the version: $err"
echo "ok"
