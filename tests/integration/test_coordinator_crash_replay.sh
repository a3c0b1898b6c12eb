#!/usr/bin/env bash
# A coordinator killed after committing an `add` and before replying
# (coordinator.after_commit=1*crash) is restarted; the client's retry, with
# the same request id, gets the original answer (replayed) and there is
# exactly one ticket (DESIGN §5, §10). Then the same for a reply that is
# dropped (after_commit=1*drop) by a coordinator that lives on.
set -euo pipefail

BIN=${BERTH_BIN:?set BERTH_BIN to the build bin/ directory}
SENDRAW=$BIN/../tests/berth-sendraw
home=$(mktemp -d /tmp/berth-it-crash.XXXXXX)
export BERTH_HOME=$home
unset BERTH_FAILPOINTS
url=ipc://$home/coordinator.sock
coord=
client=

cleanup() {
	[[ -n $coord ]] && kill -KILL "$coord" 2>/dev/null
	[[ -n $client ]] && kill -KILL "$client" 2>/dev/null
	# The status board and trace ring of this home (common/board.c names
	# them after the SHA-256 of the absolute home).
	local h
	h=$(printf '%s' "$(realpath -m "$home")" | sha256sum | cut -c1-16)
	rm -f "/dev/shm/berth-$h" "/dev/shm/berth-$h-ring"
	rm -rf "$home"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*" >&2
	[[ -f $home/coord.log ]] && tail -n 30 "$home/coord.log" >&2
	[[ -f $home/client.err ]] && cat "$home/client.err" >&2
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

BERTH_FAILPOINTS='coordinator.after_commit=1*crash' \
	"$BIN/berth-coordinator" --home "$home" >>"$home/coord.log" 2>&1 &
coord=$!
wait_for 30 answers || fail "the coordinator did not answer"

# The client retries the same request id for up to a minute.
BERTH_TIMEOUT=60s "$BIN/berth" add --name once -- true >"$home/client.out" 2>"$home/client.err" &
client=$!

wait_for 30 dead "$coord" || fail "the failpoint did not kill the coordinator"
rc=0
wait "$coord" || rc=$?
coord=
[[ $rc == 137 ]] || fail "the coordinator exited $rc, not by SIGKILL (137)"
grep -q '"verb":"add".*"decision":"granted"' "$home/trace/trace.jsonl" ||
	fail "the add was not decided before the crash"
kill -0 "$client" 2>/dev/null || fail "the client gave up while the coordinator was down"

"$BIN/berth-coordinator" --home "$home" >>"$home/coord.log" 2>&1 &
coord=$!

rc=0
wait "$client" || rc=$?
client=
[[ $rc == 0 ]] || fail "berth add exited $rc"
[[ $(cat "$home/client.out") == T1 ]] || fail "berth add printed '$(cat "$home/client.out")', not T1"

n=$(sqlite3 "$home/berth.db" 'SELECT count(*) FROM tickets')
[[ $n == 1 ]] || fail "expected exactly one ticket, found $n"

# The trace: the add granted once, then the retry answered from the
# stored reply, with the same sender and request id.
trace=$home/trace/trace.jsonl
granted=$(grep '"verb":"add"' "$trace" | grep -c '"decision":"granted"') || true
[[ $granted == 1 ]] || fail "expected one granted add, found $granted"
first=$(grep '"verb":"add"' "$trace" | grep '"decision":"granted"' | grep -o '"instance":"[0-9a-f]*","req_id":[0-9]*')
grep '"decision":"replayed"' "$trace" | grep -qF "$first" || fail "no replayed line for $first"

kill -TERM "$coord"
rc=0
wait "$coord" || rc=$?
coord=
[[ $rc == 0 ]] || fail "SIGTERM: exit status $rc"

# A reply lost on the way (coordinator.after_commit=1*drop): the client's
# resend, a second later, gets the stored reply; still one ticket more.
BERTH_FAILPOINTS='coordinator.after_commit=1*drop' \
	"$BIN/berth-coordinator" --home "$home" >>"$home/coord.log" 2>&1 &
coord=$!
wait_for 30 answers || fail "the coordinator did not answer after the restart"
id=$(BERTH_TIMEOUT=60s "$BIN/berth" add --name dropped -- true 2>"$home/client.err") ||
	fail "berth add failed after a dropped reply"
[[ $id == T2 ]] || fail "berth add printed '$id', not T2"
n=$(sqlite3 "$home/berth.db" 'SELECT count(*) FROM tickets')
[[ $n == 2 ]] || fail "expected two tickets, found $n"
grep '"verb":"add"' "$trace" | grep '"ticket":"T2"' | grep -q '"decision":"replayed"' ||
	fail "no replayed add of T2 in the trace"
kill -0 "$coord" || fail "the drop failpoint killed the coordinator"
kill -TERM "$coord"
rc=0
wait "$coord" || rc=$?
coord=
[[ $rc == 0 ]] || fail "SIGTERM: exit status $rc"
echo "ok"
