#!/usr/bin/env bash
# The CLI with jobs really running (coordinator + supervisor): worker verbs
# from inside a job, show --json of settled runs (exit codes, signals,
# retries oldest first), wait's exit statuses, logs and logs --follow,
# status with a progress bar, should-stop after cancel.
source "$(dirname "$0")/lib.sh"
set -u
BIN=${BERTH_BIN:-$(cd "$(dirname "$0")/../../build/bin" && pwd)}
berth_test_init cli_worker
tmp=$BERTH_TEST_DIR
export PATH=$BIN:$PATH # jobs call `berth` (the ticket captures PATH)
pids=()
fail() {
	echo "FAIL: $*" >&2
	echo "--- supervisor log" >&2
	tail -20 "$tmp/sup.log" >&2
	exit 1
}
J() { B show "$1" --json | jq -c "$2"; }
expect() {
	local got
	got=$(J "$1" "$2") || fail "show $1"
	[ "$got" = "$3" ] || fail "show $1: $2 = $got, want $3"
}

mkdir -p "$BERTH_HOME"
"$BIN/berth-coordinator" --home "$BERTH_HOME" --backoff-ms 100 2>"$tmp/coord.log" &
pids+=($!)
wait_until 20 B list >/dev/null 2>&1 || fail "coordinator did not come up"
"$BIN/berth-supervisor" --home "$BERTH_HOME" --slots 2 2>"$tmp/sup.log" &
pids+=($!)

# --- worker verbs inside a job; output captured; wait 0.
t1=$(B add --name worker -- sh -c '
	berth progress 3/10 compiling || exit 11
	berth note "half way" || exit 12
	berth heartbeat || exit 13
	berth should-stop; echo "should-stop=$?"
	BERTH_TOKEN=0000 berth heartbeat 2>/dev/null; echo "badtoken=$?"
	BERTH_TOKEN=0000 berth should-stop 2>/dev/null; echo "badtoken-ss=$?"
	echo out-line; echo err-line >&2
	exit 0') || fail "add"
out=$(B wait "$t1" --timeout 60s) || fail "wait $t1 exited $? ($out)"
[ "$out" = "$t1 succeeded" ] || fail "wait printed '$out'"
expect "$t1" .state '"succeeded"'
expect "$t1" .attempts 1
expect "$t1" '.runs | length' 1
expect "$t1" '.runs[0] | [.attempt, .state, .exit_code, .signal]' '[1,"succeeded",0,null]'
expect "$t1" .runs[0].progress '{"index":3,"total":10,"label":"compiling","at_ms":'"$(J "$t1" .runs[0].progress.at_ms)"'}'
expect "$t1" .runs[0].notes '["half way"]'
expect "$t1" .runs[0].alias "\"$t1-r1\""
log=$(B logs "$t1") || fail "logs $t1"
for want in should-stop=1 badtoken=1 badtoken-ss=2 out-line err-line; do
	echo "$log" | grep -qx "$want" || fail "logs $t1 lacks '$want': $log"
done
# By alias and by run id (the latter read without the coordinator).
[ "$(B logs "$t1-r1")" = "$log" ] || fail "logs by alias differ"
rid=$(B show "$t1" --json | jq -r .runs[0].id)
[ "$(B logs "$rid")" = "$log" ] || fail "logs by run id differ"

# --- exit code and signal recorded exactly; wait 1 on failure.
t2=$(B add -- sh -c 'exit 3')
t3=$(B add -- sh -c 'kill -9 $$')
B wait "$t2" "$t3" --timeout 60s >/dev/null
rc=$?
[ "$rc" = 1 ] || fail "wait on failing tickets exited $rc"
expect "$t2" '.runs[0] | [.state, .exit_code, .signal]' '["failed",3,null]'
expect "$t3" '.runs[0] | [.state, .exit_code, .signal]' '["failed",null,9]'
B show "$t2" | grep -q "exit 3" || fail "human show lacks 'exit 3'"

# --- retries: runs oldest attempt first.
t4=$(B add --retries 2 -- sh -c 'exit 7')
B wait "$t4" --timeout 60s >/dev/null
[ $? = 1 ] || fail "wait $t4"
expect "$t4" '[.runs[] | .attempt]' '[1,2,3]'
expect "$t4" '[.runs[] | .exit_code]' '[7,7,7]'
expect "$t4" .state '"failed"'
expect "$t4" .attempts 3

# --- logs --follow waits for the first run, prints output as it comes, and
# returns when the run settles.
t5=$(B add --in 1s -- sh -c 'for i in 1 2 3; do echo line$i; sleep 0.3; done')
out=$(timeout 60 "$BIN/berth" logs "$t5" --follow) || fail "logs --follow exited $?"
[ "$out" = "$(printf 'line1\nline2\nline3')" ] || fail "logs --follow printed '$out'"
expect "$t5" .state '"succeeded"'

# --- status shows the running run with its progress bar; should-stop after
# cancel (a cooperative job ends itself; the run settles cancelled).
t6=$(B add -- sh -c 'berth progress 5/10 linking; while ! berth should-stop >/dev/null; do sleep 0.1; done; exit 0')
has_bar() { B status | grep -q "$t6-r1 .*running .*\[#####\.\.\.\.\.\] 5/10 linking"; }
wait_until 30 has_bar || fail "status never showed the bar: $(B status)"
st=$(B status --json) || fail "status --json"
echo "$st" | jq -e --arg a "$t6-r1" '.running | map(select(.run.alias == $a)) | .[0] |
	.run.progress.index == 5 and .elapsed_ms >= 0' >/dev/null || fail "status --json: $st"
echo "$st" | jq -e '.slots.total == 2 and .slots.used >= 1' >/dev/null || fail "status slots: $st"
echo "$st" | jq -e '[.actors[] | select(.source == "board") | .actor] | index("supervisor") != null' \
	>/dev/null || fail "status: no supervisor on the board: $st"
B status | grep -Eq '^slots: [12]/2 in use' || fail "status slots line: $(B status)"
B cancel "$t6" >/dev/null || fail "cancel $t6"
B wait "$t6" --timeout 60s >/dev/null
[ $? = 1 ] || fail "wait on cancelled $t6"
expect "$t6" '.runs[0] | [.state, .stop_reason]' '["cancelled","cancel"]'
expect "$t6" .state '"cancelled"'

# --- status with the coordinator down: still lists the actors from the
# shared-memory board, says plainly that the coordinator is not answering,
# and exits non-zero.
coord=${pids[0]}
sup=${pids[1]}
kill -TERM "$coord"
wait "$coord" 2>/dev/null
"$BIN/berth" status --timeout 1s >"$tmp/st.out" 2>"$tmp/st.err"
rc=$?
[ "$rc" = 1 ] || fail "status with the coordinator down exited $rc"
grep -qx "coordinator: not answering at $BERTH_HOME/coordinator.sock" "$tmp/st.out" ||
	fail "status: $(cat "$tmp/st.out")"
grep -Eq "^  supervisor +pid $sup +running " "$tmp/st.out" ||
	fail "status does not list the live supervisor from the board: $(cat "$tmp/st.out")"
grep -Eq "^  coordinator +pid $coord +stopped " "$tmp/st.out" ||
	fail "status does not show the coordinator stopped: $(cat "$tmp/st.out")"
grep -qF "$BERTH_HOME/coordinator.sock" "$tmp/st.err" || fail "status stderr: $(cat "$tmp/st.err")"
"$BIN/berth" status --json --timeout 1s 2>/dev/null | jq -e --argjson p "$sup" \
	'.coordinator.answering == false and
	 ([.actors[] | select(.actor == "supervisor" and .pid == $p and .alive)] | length) == 1' \
	>/dev/null || fail "status --json with the coordinator down"

echo "PASS test_cli_worker"
