#!/usr/bin/env bash
# The exit-checkpoint race, traced and drawn. The supervisor pauses at
# supervisor.before_record_exit past a 1 s lease, recovery checkpoints and
# settles the run, and once released the supervisor's record_exit is
# denied. `berth trace --svg` of that ticket is well-formed XML with one
# lifeline per process (actor instance), one arrow per request and per
# reply of every traced decision, the failpoint marked, and the denied
# record_exit drawn as a denial (red, dashed).
#
# BERTH_TRACE_SVG_OUT=FILE keeps a copy of the picture (docs/).
source "$(dirname "$0")/test_trace_common.bash"

tr_setup race
export BERTH_FAILPOINTS_SUPERVISOR="supervisor.before_record_exit=1*pause"
tr_start --slots 1 --lease-ms 1000 --tick-ms 200
unset BERTH_FAILPOINTS_SUPERVISOR
t=$(B add --name race --workdir "$T/w" -- sh -c 'sleep 0.3; exit 7') || tr_fail "add"
tr_wait 60 test -e "$H/failpoints/supervisor.before_record_exit.reached" ||
	tr_fail "the supervisor never reached its pause"
# Recovery settles the run while the supervisor sleeps on the failpoint.
B wait "$t" --timeout 60s >/dev/null
[[ $(B show "$t" --json | jq -r '.runs[0].exit_code') == 7 ]] || tr_fail "exit code: $(B show "$t" --json)"
touch "$H/failpoints/supervisor.before_record_exit.release"
denied() {
	B trace --ticket "$t" --verb record_exit --json |
		jq -e -s 'any(.[]; .source == "coordinator" and .from == "supervisor" and .decision == "denied")' >/dev/null
}
tr_wait 60 denied || tr_fail "the supervisor's record_exit was not denied: $(B trace --ticket "$t")"

# Both attempts and both decisions are in the trace, recovery's first.
B trace --ticket "$t" --verb record_exit --json |
	jq -r 'select(.source == "coordinator") | "\(.from) \(.decision) \(.reason)"' >"$T/got"
printf '%s\n' "recovery granted " "supervisor denied already_claimed" >"$T/want"
diff "$T/want" "$T/got" >&2 || tr_fail "record_exit decisions differ"

B trace --ticket "$t" --no-reads --json >"$T/race.json" || tr_fail "trace --json"
B trace --ticket "$t" --no-reads --svg "$T/race.svg" 2>/dev/null || tr_fail "--svg"
[[ -n ${BERTH_TRACE_SVG_OUT:-} ]] && cp "$T/race.svg" "$BERTH_TRACE_SVG_OUT"
B trace --ticket "$t" --no-reads >&2
tr_wellformed "$T/race.svg" || tr_fail "the SVG is not well-formed"

# One lifeline per process: the coordinator, the cli clients (one shared
# lane), the supervisor (one process, though it uses two rpc clients) and
# recovery, and nothing else.
grep -o '<g class="lifeline" data-actor="[a-z]*"' "$T/race.svg" | sed 's/.*data-actor="//; s/"//' |
	sort >"$T/lanes"
printf '%s\n' cli coordinator recovery supervisor >"$T/want"
diff "$T/want" "$T/lanes" >&2 || tr_fail "lifelines differ"

# One arrow per request and one per reply of every traced decision.
nd=$(jq -s '[.[] | select(.source == "coordinator")] | length' "$T/race.json")
((nd >= 7)) || tr_fail "only $nd decisions traced"
[[ $(grep -c '<g class="msg req"' "$T/race.svg") == "$nd" ]] || tr_fail "want $nd request arrows"
[[ $(grep -c '<g class="msg rep ' "$T/race.svg") == "$nd" ]] || tr_fail "want $nd reply arrows"

# The denial: the reply arrow of the supervisor's record_exit, red and dashed.
grep -A1 '<g class="msg rep denied" data-seq="[0-9]*" data-verb="record_exit" data-decision="denied">' \
	"$T/race.svg" >"$T/denial"
[[ $(grep -c '<g class="msg rep denied"' "$T/denial") == 1 ]] || tr_fail "no denied record_exit drawn"
grep -q '<line .*stroke="#d32f2f".*stroke-dasharray=.*marker-end="url(#ah-denied)"' "$T/denial" ||
	tr_fail "the denial is not drawn red and dashed: $(cat "$T/denial")"
[[ $(grep -c '<g class="msg rep denied"' "$T/race.svg") == 1 ]] || tr_fail "more than one denial drawn"
# The failpoint the supervisor stopped at is marked on its lifeline.
grep -q '<g class="mark failpoint"' "$T/race.svg" || tr_fail "failpoint not marked"
grep -q 'supervisor.before_record_exit pause' "$T/race.svg" || tr_fail "failpoint not named"

# Mermaid says the same: the denial as a cross-ended reply.
B trace --ticket "$t" --no-reads --mermaid >"$T/race.mmd" || tr_fail "--mermaid"
grep -q -- '--xP[0-9]*: denied already_claimed' "$T/race.mmd" || tr_fail "mermaid denial: $(cat "$T/race.mmd")"
echo "ok: the exit-checkpoint race traced and drawn"
