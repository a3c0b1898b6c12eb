#!/usr/bin/env bash
# Every bad argument gets a message on stderr, a non-zero exit (2 for usage
# errors) and nothing on stdout; an unreachable coordinator is named by its
# socket path, both when no socket exists and when nobody listens on it.
source "$(dirname "$0")/lib.sh"
set -u
BIN=${BERTH_BIN:-$(cd "$(dirname "$0")/../../build/bin" && pwd)}
berth_test_init cli_errors
tmp=$BERTH_TEST_DIR
unset BERTH_TIMEOUT BERTH_SOCKET BERTH_TOKEN BERTH_RUN_ID
fail() { echo "FAIL: $*" >&2; exit 1; }
n=0

# usage_error WANT_RC ARGS...: stderr non-empty, stdout empty, exit WANT_RC.
usage_error() {
	local want=$1
	shift
	"$BIN/berth" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	[ "$rc" = "$want" ] || fail "berth $*: exit $rc, want $want ($(cat "$tmp/err"))"
	[ -s "$tmp/err" ] || fail "berth $*: nothing on stderr"
	[ ! -s "$tmp/out" ] || fail "berth $*: stdout not empty: $(cat "$tmp/out")"
	n=$((n + 1))
}

mkdir -p "$BERTH_HOME"
# No coordinator is running: argument checks must come first and say so.
usage_error 2
usage_error 2 frobnicate
usage_error 2 --bogus list
usage_error 2 --home
usage_error 2 --timeout xyz list
usage_error 2 help frobnicate
BERTH_TIMEOUT=soon usage_error 2 list
usage_error 2 add
usage_error 2 add --bogus -- true
usage_error 2 add --name
usage_error 2 add --timeout 5x -- true
usage_error 2 add --timeout -5s -- true
usage_error 2 add --retries many -- true
usage_error 2 add --retries -1 -- true
usage_error 2 add --priority 1.5 -- true
usage_error 2 add --at 25:00 -- true
usage_error 2 add --at 2026-02-30T10:00 -- true
usage_error 2 add --in soon -- true
usage_error 2 add --in 9223372036854775807ms -- true # now + it overflows
usage_error 2 add --every 0s -- true
usage_error 2 add --every 1ms -- true
grep -q 'at least 1s' "$tmp/err" || fail "--every 1ms does not name its floor: $(cat "$tmp/err")"
usage_error 2 add --retries 2000000 -- true
grep -q 'from 0 to 1000000' "$tmp/err" || fail "--retries names no range: $(cat "$tmp/err")"
usage_error 2 add --at 10:00 --in 5m -- true
usage_error 2 add --in 5m --every 5m -- true
usage_error 2 add --env NOEQUALS -- true
usage_error 2 add --env =x -- true
usage_error 2 add --after T1,,T2 -- true
usage_error 2 add --key '' -- true
usage_error 2 add --workdir "$tmp/missing" -- true
touch "$tmp/file"
usage_error 2 add --workdir "$tmp/file" -- true
usage_error 2 add --batch "$tmp/missing"
printf '# nothing\n\n' >"$tmp/empty"
usage_error 2 add --batch "$tmp/empty"
usage_error 2 add --batch "$tmp/empty" -- true
usage_error 2 add -- ''
usage_error 2 list --state running
usage_error 2 list --limit 0
usage_error 2 list extra
usage_error 2 list --json=yes
grep -q 'option --json takes no value' "$tmp/err" || fail "list --json=yes: $(cat "$tmp/err")"
usage_error 2 show T1 T2
usage_error 2 show bogus
usage_error 2 show T1-x
usage_error 2 show 1234567z
usage_error 2 show --bogus T1
usage_error 2 hold
usage_error 2 release T1 x!
usage_error 2 retry --bogus T1
usage_error 2 cancel ''
usage_error 2 cancel T0
usage_error 2 wait T1 --timeout never
usage_error 2 edit
usage_error 2 edit T1
grep -q 'nothing to change' "$tmp/err" || fail "edit T1: $(cat "$tmp/err")"
usage_error 2 edit bogus --priority 1
usage_error 2 edit T1 --every 1ms
usage_error 2 edit T1 --at 10:00 --now
usage_error 2 edit T1 --unset-env A=1
usage_error 2 edit T1 -- ''
usage_error 2 remove
usage_error 2 remove T1 bogus
usage_error 2 clean --state ready
usage_error 2 clean --older soon
usage_error 2 clean extra
usage_error 2 slots 0
grep -q 'from 1 to 1024' "$tmp/err" || fail "slots 0: $(cat "$tmp/err")"
usage_error 2 slots 2000
usage_error 2 slots many
usage_error 2 slots 2 3
usage_error 2 pause extra
usage_error 2 resume --bogus
usage_error 2 add --after T1 --after-any T2 -- true
usage_error 2 add --after bogus -- true
usage_error 2 add --after-any T1,x -- true
usage_error 2 wait bogus
usage_error 2 wait --exit-code T1 T2
usage_error 2 status --timeout 0
usage_error 2 status extra
usage_error 2 logs ../etc
usage_error 2 logs T1-r
usage_error 2 logs a b
usage_error 2 progress
usage_error 2 progress 11/10
usage_error 2 progress 5/0
usage_error 2 progress abc
usage_error 2 progress -1/3
grep -q "bad I/N '-1/3'" "$tmp/err" || fail "progress -1/3: $(cat "$tmp/err")"
usage_error 2 trace --ticket bogus
usage_error 2 trace --run T1-q
usage_error 2 progress 1/2 label extra
usage_error 2 heartbeat extra
usage_error 2 note
usage_error 2 should-stop extra
usage_error 2 should-stop --owner x
usage_error 2 seat
usage_error 2 seat frob
usage_error 2 seat acquire
usage_error 2 seat acquire x --ttl forever
usage_error 2 seat acquire x --ttl 0
usage_error 2 seat acquire x --reason r
usage_error 2 seat acquire x --pid abc
usage_error 2 seat acquire x --pid 2147483647
usage_error 2 seat release x --pid 1
usage_error 2 seat acquire x --workdir "$tmp/missing"
usage_error 2 seat release x --key k
usage_error 2 seat stop x
usage_error 2 seat activity x 1/2
usage_error 2 seat activity x 3/2 label
usage_error 2 seat list --owner x
usage_error 2 seat show
usage_error 2 seat list extra

# Worker verbs outside a run name the missing variable.
usage_error 2 progress 1/2
grep -q BERTH_SOCKET "$tmp/err" || fail "progress outside a run: $(cat "$tmp/err")"
BERTH_SOCKET=ipc://$tmp/x.sock BERTH_TOKEN=t usage_error 2 note hello
grep -q BERTH_RUN_ID "$tmp/err" || fail "note without BERTH_RUN_ID: $(cat "$tmp/err")"
BERTH_SOCKET=ipc://$tmp/x.sock BERTH_RUN_ID=r usage_error 2 should-stop
grep -q BERTH_TOKEN "$tmp/err" || fail "should-stop without BERTH_TOKEN: $(cat "$tmp/err")"

# --help everywhere: usage on stdout, exit 0.
for c in add list show hold release retry cancel edit remove clean wait status logs trace seat \
	slots pause resume up down progress heartbeat note should-stop; do
	"$BIN/berth" "$c" --help >"$tmp/out" 2>"$tmp/err" || fail "berth $c --help failed"
	grep -q "usage: berth $c" "$tmp/out" || fail "berth $c --help: $(cat "$tmp/out")"
	[ ! -s "$tmp/err" ] || fail "berth $c --help wrote to stderr"
done
for c in acquire release force-release heartbeat stop activity list show; do
	"$BIN/berth" seat "$c" --help >"$tmp/out" 2>"$tmp/err" || fail "berth seat $c --help failed"
	grep -q "berth seat $c" "$tmp/out" || fail "berth seat $c --help: $(cat "$tmp/out")"
	[ ! -s "$tmp/err" ] || fail "berth seat $c --help wrote to stderr"
done
"$BIN/berth" help --help | grep -q '^usage: berth' || fail "berth help --help"
"$BIN/berth" --help | grep -q '^  add ' || fail "berth --help lists no commands"

# Unreachable coordinator, no socket at all: fails at once, names the socket.
sock=$BERTH_HOME/coordinator.sock
for args in "list" "show T1" "add -- true" "hold T1" "seat list" "wait T1"; do
	# shellcheck disable=SC2086
	"$BIN/berth" $args >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -ne 0 ] || fail "berth $args with no coordinator exited 0"
	grep -qF "$sock" "$tmp/err" || fail "berth $args: stderr does not name $sock: $(cat "$tmp/err")"
	[ ! -s "$tmp/out" ] || fail "berth $args printed on stdout"
done
# --home is where it looks.
"$BIN/berth" --home "$tmp/other" list >"$tmp/out" 2>"$tmp/err" && fail "list --home other exited 0"
grep -qF "$tmp/other/coordinator.sock" "$tmp/err" || fail "--home not used: $(cat "$tmp/err")"

# A socket file nobody listens on (a crashed coordinator): retries until
# the timeout, says after a second what it is waiting for, then fails.
# A coordinator killed with SIGKILL leaves exactly that behind.
"$BIN/berth-coordinator" --home "$BERTH_HOME" 2>"$tmp/coord.err" &
coord=$!
for _ in $(seq 200); do [ -S "$sock" ] && break; sleep 0.05; done
[ -S "$sock" ] || fail "the coordinator made no socket: $(cat "$tmp/coord.err")"
kill -9 "$coord"
wait "$coord" 2>/dev/null
[ -S "$sock" ] || fail "cannot make a dead socket"
start=$(date +%s%N)
BERTH_TIMEOUT=2s "$BIN/berth" list >"$tmp/out" 2>"$tmp/err"
rc=$?
el=$((($(date +%s%N) - start) / 1000000))
[ "$rc" -ne 0 ] || fail "list against a dead socket exited 0"
[ ! -s "$tmp/out" ] || fail "list against a dead socket printed on stdout"
grep -qF "waiting for the coordinator at $sock" "$tmp/err" || fail "no waiting notice: $(cat "$tmp/err")"
grep -qF "no answer from the coordinator at $sock after 2s" "$tmp/err" ||
	fail "no final error naming the socket: $(cat "$tmp/err")"
[ "$el" -ge 1900 ] && [ "$el" -lt 8000 ] || fail "BERTH_TIMEOUT=2s took ${el}ms"
# --timeout before the command does the same.
"$BIN/berth" --timeout 1s show T1 >"$tmp/out" 2>"$tmp/err" && fail "show against a dead socket exited 0"
grep -qF "after 1s" "$tmp/err" || fail "--timeout 1s: $(cat "$tmp/err")"
# status still reports, on stdout, that the coordinator is not answering.
"$BIN/berth" status --timeout 500ms >"$tmp/out" 2>"$tmp/err" && fail "status with a dead coordinator exited 0"
grep -qF "coordinator: not answering at $sock" "$tmp/out" || fail "status: $(cat "$tmp/out")"

echo "PASS test_cli_errors ($n usage errors checked)"
