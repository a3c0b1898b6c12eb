#!/usr/bin/env bash
# Shims spawned ahead of their claims (DESIGN §4 "One decision, fewer trips",
# §6): while slots are free the supervisor keeps shims waiting (at most two),
# each claim names one and, granted, creates its run running with it (claim
# and start in one decision); the run is handed over the go pipe; the exit
# is checkpointed and settled in one decision. A waiting shim that dies costs
# nothing but a retry, a crashed supervisor leaves no waiting shim behind,
# and --no-ahead takes the unfused path, which stays valid.
set -u
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/supervise_lib.bash"
supervise_init ahead

# shims_matching ERE: live processes of this home whose command line
# (arguments joined by spaces) matches ERE.
shims_matching() {
	local d n=0 cmd s
	for d in /proc/[0-9]*; do
		cmd=$({ tr '\0' ' ' <"$d/cmdline"; } 2>/dev/null) || continue
		[[ $cmd =~ $1 && $cmd == *" $BERTH_HOME "* ]] || continue
		s=$(cat "$d/stat" 2>/dev/null) || continue
		s=${s##*) }
		[[ ${s:0:1} != Z ]] && n=$((n + 1))
	done
	echo "$n"
}
ahead_shims() { shims_matching 'berth-shim --ahead '; }
ahead_is() { [[ $(ahead_shims) == "$1" ]]; }
no_shim_of_home() { [[ $(shims_matching 'berth-shim ') == 0 ]]; }

start_coord
start_sup --slots 3 --tick-ms 200

echo "== three free slots: two shims wait, none knows a run"
wait_for 30 ahead_is 2
never_within 1 ahead_is 3 || fail "more than two shims spawned ahead"

echo "== --kill-jobs leaves waiting shims to their supervisor (they have no job)"
before=$(pgrep -f -- "berth-shim --ahead .*-- $BERTH_HOME\$" | sort | tr '\n' ' ')
out=$("$BIN/berth-launch" stop --home "$BERTH_HOME" --kill-jobs 2>&1)
[[ $out == *"no running jobs"* && $out != *"did not finish"* ]] ||
	fail "berth-launch stop --kill-jobs with only waiting shims: $out"
after=$(pgrep -f -- "berth-shim --ahead .*-- $BERTH_HOME\$" | sort | tr '\n' ' ')
[[ $after == "$before" ]] || fail "waiting shims $before became $after"

echo "== jobs run through them: claim+start and record_exit+settle fused"
tickets=()
for i in $(seq 1 12); do
	tickets+=("$(B add -- sh -c 'echo "ran $1" >> "$2"' sh "$i" "$tmp/ran")") || fail "add $i"
done
for t in "${tickets[@]}"; do
	bwait "$t" || fail "$t did not succeed: $(B show "$t" --json)"
done
[[ $(sort -u "$tmp/ran" | wc -l) == 12 && $(wc -l <"$tmp/ran") == 12 ]] ||
	fail "each job once: $(sort "$tmp/ran" | uniq -c)"
n=$(trace_count '.from == "supervisor" and .verb == "start" and .decision == "granted" and .fused == "claim"')
[[ $n == 12 ]] || fail "fused starts: $n, want 12"
n=$(trace_count '.from == "supervisor" and .verb == "start" and (.fused // "") == ""')
[[ $n == 0 ]] || fail "$n unfused start requests"
n=$(trace_count '.from == "supervisor" and .verb == "settle" and .decision == "granted" and .fused == "record_exit"')
[[ $n == 12 ]] || fail "fused settles: $n, want 12"
check_invariants

echo "== the job gets its ticket's environment, however large"
big=$(head -c 100000 /dev/zero | tr '\0' x)
t=$(B1=$big B2=$big FOO=bar B add -- sh -c 'echo "$((${#B1} + ${#B2})) $FOO ${BERTH_RUN_ID:+id}"') ||
	fail "add big"
bwait "$t" || fail "big env: $(B show "$t" --json)"
[[ $(B logs "$t") == "200000 bar id" ]] || fail "big env: output $(B logs "$t")"

echo "== waiting shims killed: the claim naming one is given back, the job runs once"
wait_for 30 ahead_is 2
pkill -KILL -f "berth-shim --ahead --umask [0-7]+ --status-fd 4 -- $BERTH_HOME\$" ||
	fail "no waiting shim to kill"
t=$(B add -- sh -c 'echo once >> "$1"' sh "$tmp/once") || fail "add once"
bwait "$t" || fail "after killed shims: $(B show "$t" --json)"
[[ $(wc -l <"$tmp/once") == 1 ]] || fail "the job ran $(wc -l <"$tmp/once") times"
grep -q "spawned ahead, ended before it had a run" "$tmp/supervisor.log" ||
	fail "the supervisor did not notice its waiting shims end"
# A claim that named a killed shim is abandoned (no attempt spent); each of
# the two killed may have been named before it was reaped.
state=$(B show "$t" --json | jq -c '[.runs[].state]')
[[ $state =~ ^\[(\"aborted\",){0,2}\"succeeded\"\]$ ]] || fail "runs of the ticket: $state"
check_invariants

echo "== a crashed supervisor leaves no waiting shim"
wait_for 30 ahead_is 2
kill -KILL "$sup"
wait "$sup" 2>/dev/null
sup=
wait_for 30 no_shim_of_home

echo "== --no-ahead: spawned after the claim, started with its own request"
start_sup --slots 2 --tick-ms 200 --no-ahead
t=$(B add -- sh -c 'echo plain') || fail "add plain"
bwait "$t" || fail "--no-ahead: $(B show "$t" --json)"
run=$(jqshow "$t" '.runs[0].id')
n=$(trace_count ".verb == \"start\" and .run == \"$run\" and .decision == \"granted\" and (.fused // \"\") == \"\"")
[[ $n == 1 ]] || fail "--no-ahead: $n unfused starts of $run, want 1"
n=$(trace_count ".verb == \"settle\" and .run == \"$run\" and (.fused // \"\") == \"\"")
[[ $n == 1 ]] || fail "--no-ahead: $n unfused settles of $run, want 1"
ahead_is 0 || fail "--no-ahead: $(ahead_shims) shims spawned ahead"
check_invariants
echo PASS
