#!/usr/bin/env bash
# Garbage on the coordinator's socket (DESIGN §5): bytes that are not a
# request, an empty message, an oversized one, a protocol version mismatch
# and an envelope without a sender are each answered with their error, and
# the coordinator keeps serving real requests afterwards.
set -euo pipefail

BIN=${BERTH_BIN:?set BERTH_BIN to the build bin/ directory}
SENDRAW=$BIN/../tests/berth-sendraw
home=$(mktemp -d /tmp/berth-it-garbage.XXXXXX)
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
	rm -rf "$home"
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

"$BIN/berth-coordinator" --home "$home" --sync normal >>"$home/coord.log" 2>&1 &
coord=$!
wait_for 30 answers || fail "the coordinator did not answer"

expect() { # what pattern output
	[[ $3 == $2 ]] || fail "$1: expected '$2', got '$3'"
	kill -0 "$coord" 2>/dev/null || fail "the coordinator died after $1"
}

expect garbage 'req_id=0 error 1: *' "$("$SENDRAW" "$url" hex deadbeefffffffff0f)"
expect empty 'req_id=0 error 1: *' "$("$SENDRAW" "$url" hex '')"
expect oversized 'req_id=0 error 7: *limit*' "$("$SENDRAW" "$url" zeros 5000000)"
expect version 'req_id=77 error 2: *version 99*version 1*' "$("$SENDRAW" "$url" version 99)"
expect noactor 'req_id=77 error 1: *actor*' "$("$SENDRAW" "$url" noactor)"

# Still serving: a real client adds and lists.
id=$("$BIN/berth" add -- true) || fail "berth add failed after the garbage"
[[ $id == T1 ]] || fail "berth add printed '$id'"
"$BIN/berth" list | grep -q T1 || fail "berth list does not show T1"
expect list 'req_id=77 granted' "$("$SENDRAW" "$url" version 1)"

# Each refusal is traced as an error; the sender of garbage is unknown.
trace=$home/trace/trace.jsonl
n=$(grep -c '"decision":"error"' "$trace") || true
[[ $n == 5 ]] || fail "expected 5 error lines in the trace, found $n"
grep -q '"from":"","instance":"","req_id":0,"verb":"none".*"reason":"malformed"' "$trace" ||
	fail "no malformed line for the garbage"
grep -q '"reason":"too_large"' "$trace" || fail "no too_large line"
grep -q '"from":"test".*"req_id":77.*"reason":"version"' "$trace" || fail "no version line"

kill -TERM "$coord"
rc=0
wait "$coord" || rc=$?
coord=
[[ $rc == 0 ]] || fail "SIGTERM: exit status $rc"
echo "ok"
