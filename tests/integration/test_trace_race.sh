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
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/trace_lib.bash"

tr_setup race
export BERTH_FAILPOINTS_SUPERVISOR="supervisor.before_record_exit=1*pause"
tr_start --slots 1 --lease-ms 1000 --tick-ms 200
unset BERTH_FAILPOINTS_SUPERVISOR
t=$(B add --name race --workdir "$T/w" -- sh -c 'sleep 0.3; exit 7') || fail "add"
wait_until 60 test -e "$H/failpoints/supervisor.before_record_exit.reached" ||
	fail "the supervisor never reached its pause"
# Recovery settles the run while the supervisor sleeps on the failpoint.
B wait "$t" --timeout 60s >/dev/null
[[ $(B show "$t" --json | jq -r '.runs[0].exit_code') == 7 ]] || fail "exit code: $(B show "$t" --json)"
touch "$H/failpoints/supervisor.before_record_exit.release"
denied() {
	B trace --ticket "$t" --verb record_exit --json |
		jq -e -s 'any(.[]; .source == "coordinator" and .from == "supervisor" and .decision == "denied")' >/dev/null
}
wait_until 60 denied || fail "the supervisor's record_exit was not denied: $(B trace --ticket "$t")"

# Both attempts and both decisions are in the trace, recovery's first.
B trace --ticket "$t" --verb record_exit --json |
	jq -r 'select(.source == "coordinator") | "\(.from) \(.decision) \(.reason)"' >"$T/got"
printf '%s\n' "recovery granted " "supervisor denied already_claimed" >"$T/want"
diff "$T/want" "$T/got" >&2 || fail "record_exit decisions differ"

B trace --ticket "$t" --no-reads --json >"$T/race.json" || fail "trace --json"
B trace --ticket "$t" --no-reads --svg "$T/race.svg" 2>/dev/null || fail "--svg"
[[ -n ${BERTH_TRACE_SVG_OUT:-} ]] && cp "$T/race.svg" "$BERTH_TRACE_SVG_OUT"
B trace --ticket "$t" --no-reads >&2
tr_wellformed "$T/race.svg" || fail "the SVG is not well-formed"
tr_renders "$T/race.svg" || fail "rsvg-convert cannot draw the SVG"

# One lifeline per process: the coordinator, the cli clients (one shared
# lane), the supervisor (one process, though it uses two rpc clients) and
# recovery, and nothing else.
grep -o '<g class="lifeline" data-actor="[a-z]*"' "$T/race.svg" | sed 's/.*data-actor="//; s/"//' |
	sort >"$T/lanes"
printf '%s\n' cli coordinator recovery supervisor >"$T/want"
diff "$T/want" "$T/lanes" >&2 || fail "lifelines differ"

# One arrow per request and one per reply of every traced decision.
nd=$(jq -s '[.[] | select(.source == "coordinator")] | length' "$T/race.json")
((nd >= 7)) || fail "only $nd decisions traced"
[[ $(grep -c '<g class="msg req"' "$T/race.svg") == "$nd" ]] || fail "want $nd request arrows"
[[ $(grep -c '<g class="msg rep ' "$T/race.svg") == "$nd" ]] || fail "want $nd reply arrows"

# The denial: the reply arrow of the supervisor's record_exit, red and dashed.
grep -A1 '<g class="msg rep denied" data-seq="[0-9]*" data-verb="record_exit" data-decision="denied">' \
	"$T/race.svg" >"$T/denial"
[[ $(grep -c '<g class="msg rep denied"' "$T/denial") == 1 ]] || fail "no denied record_exit drawn"
grep -q '<line .*stroke="#d32f2f".*stroke-dasharray=.*marker-end="url(#ah-denied)"' "$T/denial" ||
	fail "the denial is not drawn red and dashed: $(cat "$T/denial")"
[[ $(grep -c '<g class="msg rep denied"' "$T/race.svg") == 1 ]] || fail "more than one denial drawn"
# The failpoint the supervisor stopped at is marked on its lifeline.
grep -q '<g class="mark failpoint"' "$T/race.svg" || fail "failpoint not marked"
grep -q 'supervisor.before_record_exit pause' "$T/race.svg" || fail "failpoint not named"

# Why recovery acted: the supervisor's lease ran out (a mark on its
# lifeline at the expiry), recovery's record_exit says so, and the exit
# code and the outcome are on record_exit and settle; the denial reads as
# a sentence, the code stays in --json.
[[ $(grep -c '<g class="mark lease"' "$T/race.svg") == 1 ]] || fail "no lease expiry marked"
grep -q 'record_exit (lease expired [0-9.]*m\?s before)' "$T/race.svg" ||
	fail "recovery's record_exit does not say the lease had expired"
grep -q 'granted exit 7' "$T/race.svg" || fail "the exit code is not on record_exit"
grep -q 'granted failed; ticket failed' "$T/race.svg" || fail "the outcome is not on settle"
grep -q 'denied the exit was already recorded' "$T/race.svg" || fail "the denial is not in words"
jq -e -s 'any(.[]; .verb == "record_exit" and .from == "recovery" and .detail == "exit 7"
	and .lease_expires_ms < .ts_ms)' "$T/race.json" >/dev/null || fail "--json lacks detail and lease"
grep -q 'recovery: record_exit (job gone; its supervisor alive, lease ran out)' \
	"$T/race.svg" || fail "recovery's verdict is not in words"

# Mermaid says the same: the denial as a cross-ended reply.
B trace --ticket "$t" --no-reads --mermaid >"$T/race.mmd" || fail "--mermaid"
grep -q -- '--xP[0-9]*: denied the exit was already recorded, exit 7' "$T/race.mmd" || fail "mermaid denial: $(cat "$T/race.mmd")"
echo "ok: the exit-checkpoint race traced and drawn"
