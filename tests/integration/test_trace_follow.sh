#!/usr/bin/env bash
# `berth trace --follow`: started before the group exists it waits for the
# trace; then new decisions and the ring's client-side records appear live
# and in order; and a follower that falls more than a ring's worth behind
# says how many records it lost instead of showing torn ones.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/trace_lib.bash"

tr_setup follow
follower=
stop_follower() { [[ -n $follower ]] && kill "$follower" 2>/dev/null; follower=; }

# Run directly (not through B), so $! is berth itself.
"$BIN/berth" trace --follow --json >"$T/follow.json" 2>"$T/follow.err" &
follower=$!
said_waiting() { grep -q "no trace yet at $H/trace/trace.jsonl; waiting" "$T/follow.err"; }
wait_until 30 said_waiting || fail "follow did not say it waits: $(cat "$T/follow.err")"

# A fast tick makes the actors' own traffic lap the ring below.
tr_start --slots 1 --lease-ms 2000 --tick-ms 20
t=$(B add --name follow --workdir "$T/w" -- sh -c 'sleep 0.2; exit 0') || fail "add"
B wait "$t" --timeout 60s >/dev/null || fail "wait"
settled() {
	jq -e -s --arg t "$t" 'any(.[]; .source == "coordinator" and .verb == "settle" and .ticket == $t)' \
		"$T/follow.json" >/dev/null 2>&1
}
wait_until 30 settled || fail "follow did not show the settle: $(cat "$T/follow.json")"
# Live, in decision order, with the ring's state changes merged in.
# (A resent request answered from its stored reply is traced "replayed".)
jq -r --arg t "$t" 'select(.source == "coordinator" and .ticket == $t and .decision == "granted") | .verb' "$T/follow.json" |
	grep -E '^(add|claim|start|record_exit|settle)$' >"$T/got"
printf '%s\n' add claim start record_exit settle >"$T/want"
diff "$T/want" "$T/got" >&2 || fail "followed life differs"
jq -e -s 'any(.[]; .source == "ring" and .event == "state" and .from == "supervisor")' "$T/follow.json" >/dev/null ||
	fail "no ring state records in follow output"
# Whatever the follower printed is whole JSON, one object per line.
jq -e . "$T/follow.json" >/dev/null || fail "follow printed a broken line"
stop_follower

# A stopped follower lapped by the ring: the actors' scans and renewals
# every 20 ms write a sent and a reply record per request; more than 2100
# decided requests write more than the ring's 4096 records.
"$BIN/berth" trace --follow >"$T/lapped.txt" 2>&1 &
follower=$!
wait_until 30 test -s "$T/lapped.txt" || fail "follower printed no backlog"
kill -STOP "$follower"
lines0=$(wc -l <"$H/trace/trace.jsonl")
lapped() { (($(wc -l <"$H/trace/trace.jsonl") > lines0 + 2500)); }
wait_until 120 lapped || fail "too little traffic to lap the ring"
kill -CONT "$follower"
lost() { grep -Eq '^-- [0-9]+ records lost \(overwritten before read\) --$' "$T/lapped.txt"; }
wait_until 60 lost || fail "no loss reported: $(tail -n 5 "$T/lapped.txt")"
n=$(grep -Eo '^-- [0-9]+ records lost' "$T/lapped.txt" | awk '{s += $2} END {print s}')
((n > 0 && n <= 4400)) || fail "implausible loss count $n"
stop_follower
# A line the coordinator is still writing is never shown in halves, and a
# truncated trace is read again from its start (a copy home, no group).
C=$T/copy
mkdir -p "$C/trace"
line='{"seq":1,"ts_ms":1,"from":"cli","instance":"aa","req_id":1,"verb":"add","ticket":"T7","run":"","decision":"granted","reason":"","latency_us":5}'
: >"$C/trace/trace.jsonl"
BERTH_HOME=$C "$BIN/berth" trace --follow --json >"$T/halves.json" 2>"$T/halves.err" &
follower=$!
printf %s "${line:0:50}" >>"$C/trace/trace.jsonl"
# Several polls (200 ms apart) see the torn line before it is finished.
sleep 1
[[ -s $T/halves.json ]] && fail "follow printed a half-written line: $(cat "$T/halves.json")"
printf '%s\n' "${line:50}" >>"$C/trace/trace.jsonl"
one_t7() { [[ $(jq -s '[.[] | select(.ticket == "T7")] | length' "$T/halves.json" 2>/dev/null) == 1 ]]; }
wait_until 30 one_t7 || fail "the finished line was not shown once: $(cat "$T/halves.json")"
printf '%s\n' "${line//T7/T8}" >"$C/trace/trace.jsonl"
t8() { jq -e -s 'any(.[]; .ticket == "T8")' "$T/halves.json" >/dev/null 2>&1; }
wait_until 30 t8 || fail "the rewritten trace was not read again: $(cat "$T/halves.json")"
grep -q "replaced or truncated" "$T/halves.err" || fail "no note on the truncation: $(cat "$T/halves.err")"
[[ $(wc -l <"$T/halves.json") == 2 ]] || fail "want 2 records: $(cat "$T/halves.json")"
stop_follower
echo "ok: follow waits, shows the run live, reports lost ring records ($n), never shows half a line"
