#!/usr/bin/env bash
# A run's whole life in `berth trace`, from `berth add` to `settle`: the
# coordinator's decisions in order, with the client-side records of the
# ring merged in, every actor of the group visible, and the filters, the
# alias, the JSON, SVG and Mermaid outputs agreeing. Also: a missing trace
# and a trace with garbage and a torn last line are reported, not crashed on.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/trace_lib.bash"

tr_setup life
tr_start --slots 1 --lease-ms 10000 --tick-ms 200
t=$(B add --name life --workdir "$T/w" -- sh -c 'echo hello; sleep 0.3; exit 0') || fail "add"
B wait "$t" --timeout 60s >/dev/null || fail "wait $t: $(B show "$t" --json)"
run=$(B show "$t" --json | jq -r '.runs[0].id')
[[ $run =~ ^[0-9a-f]{32}$ ]] || fail "run id: $run"

# The settle is traced after COMMIT; the trace file has it once wait returns.
B trace --ticket "$t" --json >"$T/ticket.json" || fail "trace --ticket --json"

# 1. The decisions of the run's life, in the order the coordinator made
#    them: add (cli), claim, start, record_exit, settle (supervisor), all
#    granted, seq increasing. (renew may come in between.)
#    A request its sender resent is answered from the stored reply and
#    traced "replayed": not a second decision.
jq -r 'select(.source == "coordinator" and .decision != "replayed") |
	select(.verb | test("^(add|claim|start|record_exit|settle)$")) |
	"\(.verb) \(.from) \(.decision)"' "$T/ticket.json" >"$T/got"
printf '%s\n' "add cli granted" "claim supervisor granted" "start supervisor granted" \
	"record_exit supervisor granted" "settle supervisor granted" >"$T/want"
diff "$T/want" "$T/got" >&2 || fail "the run's life differs from add/claim/start/record_exit/settle: $(cat "$T/ticket.json")"
jq -s '[.[] | select(.source == "coordinator") | .seq] | . == sort and . == unique' \
	"$T/ticket.json" | grep -qx true || fail "seq not increasing"
jq -e -s --arg run "$run" '[.[] | select(.source == "coordinator" and .run != "")
	| .run == $run] | all' "$T/ticket.json" >/dev/null || fail "records of other runs"

# 2. The ring's side is merged: the supervisor's state changes of the run,
#    each stamped with its pid; the ring's sent/reply of decided requests
#    are left out (the decision line says it all).
n=$(jq -s '[.[] | select(.source == "ring" and .event == "state" and .from == "supervisor" and .pid > 0)] | length' "$T/ticket.json")
((n >= 3)) || fail "expected the supervisor's state changes from the ring, got $n"
n=$(jq -s '[.[] | select(.source == "ring" and (.event == "sent" or .event == "reply"))] | length' "$T/ticket.json")
((n == 0)) || fail "$n ring sent/reply records duplicated decided requests"

# 3. Every actor of the group is in the trace: each said hello to the
#    coordinator, and the coordinator itself wrote to the ring.
B trace --json >"$T/all.json" || fail "trace --json"
for a in supervisor recovery reaper; do
	jq -e -s --arg a "$a" 'any(.[]; .source == "coordinator" and .from == $a and .verb == "hello" and .decision == "granted")' \
		"$T/all.json" >/dev/null || fail "no hello from $a in the trace"
done
jq -e -s 'any(.[]; .source == "ring" and .from == "coordinator")' "$T/all.json" >/dev/null ||
	fail "no ring record from the coordinator"
jq -e -s 'any(.[]; .from == "cli" and .verb == "add")' "$T/all.json" >/dev/null || fail "no add from the cli"

# 4. Filters: the alias and the run id (and a prefix of it) select the same
#    records; --verb and --actor narrow; --limit keeps the last ones.
B trace --run "$t-r1" --json >"$T/alias.json" || fail "trace --run alias"
B trace --run "$run" --json >"$T/runid.json" || fail "trace --run id"
B trace --run "${run:0:8}" --json >"$T/prefix.json" || fail "trace --run prefix"
[[ -s $T/alias.json ]] || fail "--run $t-r1 selected nothing"
cmp -s "$T/alias.json" "$T/runid.json" || fail "--run alias and id differ"
cmp -s "$T/prefix.json" "$T/runid.json" || fail "--run prefix and id differ"
n=$(B trace --ticket "$t" --verb settle --json | jq -s '[.[] | select(.source == "coordinator")] | length')
((n == 1)) || fail "--verb settle: $n records"
B trace --actor recovery --json | jq -e -s 'length > 0 and all(.[]; .from == "recovery")' >/dev/null ||
	fail "--actor recovery"
n=$(B trace --limit 3 --json | wc -l)
((n == 3)) || fail "--limit 3 printed $n"

# 5. The timeline: one line per record, plain when piped.
B trace --ticket "$t" --no-reads >"$T/timeline.txt" || fail "timeline"
grep -q $'\033' "$T/timeline.txt" && fail "colour codes in piped output"
grep -Eq "^[0-9:.]{12}  supervisor [0-9a-f]{8} +-> coordinator  record_exit +$t ${run:0:8} +granted" \
	"$T/timeline.txt" || fail "no record_exit line: $(cat "$T/timeline.txt")"
grep -q " show " "$T/timeline.txt" && fail "--no-reads kept a show"

# 6. The diagrams: the SVG is well-formed, with a lane per process and an
#    arrow per request and per reply of every decision drawn.
B trace --ticket "$t" --no-reads --svg "$T/life.svg" 2>/dev/null || fail "--svg"
tr_wellformed "$T/life.svg" || fail "the SVG is not well-formed"
nd=$(B trace --ticket "$t" --no-reads --json | jq -s '[.[] | select(.source == "coordinator")] | length')
[[ $(grep -c '<g class="msg req"' "$T/life.svg") == "$nd" ]] || fail "want $nd request arrows"
[[ $(grep -c '<g class="msg rep ' "$T/life.svg") == "$nd" ]] || fail "want $nd reply arrows"
grep -q 'data-actor="supervisor"' "$T/life.svg" || fail "no supervisor lifeline"
[[ $(grep -c 'data-actor="supervisor"' "$T/life.svg") == 1 ]] || fail "one supervisor process, several lifelines"
B trace --ticket "$t" --no-reads --mermaid >"$T/life.mmd" || fail "--mermaid"
head -n 1 "$T/life.mmd" | grep -qx sequenceDiagram || fail "mermaid header"
[[ $(grep -c -- '->>C: ' "$T/life.mmd") == "$nd" ]] || fail "mermaid: want $nd requests"

# 7. A missing trace: a clear message and exit 1. Garbage and a torn last
#    line: noted on stderr, the good records still shown.
rc=0
BERTH_HOME=$T/nohome B trace >"$T/out" 2>"$T/err" || rc=$?
((rc == 1)) || fail "missing trace: exit $rc"
grep -q "no trace yet at $T/nohome/trace/trace.jsonl" "$T/err" || fail "missing trace: $(cat "$T/err")"
[[ -s $T/out ]] && fail "missing trace printed on stdout"
mkdir -p "$T/copy/trace"
head -n 5 "$H/trace/trace.jsonl" >"$T/copy/trace/trace.jsonl"
echo 'not json at all' >>"$T/copy/trace/trace.jsonl"
tail -n 2 "$H/trace/trace.jsonl" >>"$T/copy/trace/trace.jsonl"
head -n 1 "$H/trace/trace.jsonl" | head -c 40 >>"$T/copy/trace/trace.jsonl"
BERTH_HOME=$T/copy B trace --json >"$T/out" 2>"$T/err" || fail "trace with garbage failed"
[[ $(jq -s '[.[] | select(.source == "coordinator")] | length' "$T/out") == 7 ]] ||
	fail "want the 7 good records: $(cat "$T/out")"
grep -q ":6: not a trace record, skipped" "$T/err" || fail "garbage not noted: $(cat "$T/err")"
grep -q ":9: partial last line" "$T/err" || fail "torn line not noted: $(cat "$T/err")"
mkdir -p "$T/empty/trace"
: >"$T/empty/trace/trace.jsonl"
BERTH_HOME=$T/empty B trace >"$T/out" 2>"$T/err" || fail "empty trace: exit $?"
grep -q "trace is empty" "$T/err" || fail "empty trace: $(cat "$T/err")"
echo "ok: a run's life traced"
