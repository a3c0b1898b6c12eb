#!/usr/bin/env bash
# The reaper ends what should stop existing, identity-checked:
# - `--timeout 1s` on a job that runs `sleep 300` and leaves a grandchild
#   `sleep 300` in its group: timed_out, and the whole group is gone;
# - `berth cancel` of a running job of the same shape: cancelled, group gone;
# - a job that ignores SIGTERM: SIGKILL after the grace period.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/crash_lib.bash"

crash_setup stop
crash_start --slots 4 --lease-ms 1000 --tick-ms 200 --grace-ms 700

mkdir -p "$T/w/timeout" "$T/w/cancel" "$T/w/stubborn"
job='echo ran >>ran; sleep 300 & echo $! >grandchild; sleep 300'
tt=$(B add --name timeout --workdir "$T/w/timeout" --timeout 1s -- sh -c "$job")
tc=$(B add --name cancel --workdir "$T/w/cancel" -- sh -c "$job")
ts=$(B add --name stubborn --workdir "$T/w/stubborn" -- sh -c "trap '' TERM; $job")

started() { [[ -s $T/w/$1/grandchild ]]; }
for j in timeout cancel stubborn; do
	wait_until 30 started "$j" || fail "$j did not start"
done
pg() { db_query "SELECT pgid FROM runs WHERE id = '$(crash_run_id "$1" 0)'"; }
pgt=$(pg "$tt") pgc=$(pg "$tc") pgs=$(pg "$ts")
gct=$(cat "$T/w/timeout/grandchild") gcc=$(cat "$T/w/cancel/grandchild")

B cancel "$tc" >/dev/null || fail "berth cancel"
B cancel "$ts" >/dev/null || fail "berth cancel"
crash_wait_settled 30 "$tt" "$tc" "$ts"

group_gone() { ! kill -0 -- "-$1" 2>/dev/null; }
[[ $(B show "$tt" --json | jq -r '.runs[0].state') == timed_out ]] ||
	fail "timeout: $(B show "$tt" --json)"
[[ $(B show "$tc" --json | jq -r '.runs[0].state') == cancelled ]] ||
	fail "cancel: $(B show "$tc" --json)"
[[ $(B show "$ts" --json | jq -r '.runs[0].state') == cancelled ]] ||
	fail "stubborn: $(B show "$ts" --json)"
[[ $(crash_state "$tc") == cancelled ]] || fail "ticket $tc is $(crash_state "$tc")"
for g in "$pgt" "$pgc" "$pgs"; do
	wait_until 10 group_gone "$g" || fail "process group $g still has members"
done
for p in "$gct" "$gcc"; do
	alive "$p" && fail "grandchild $p survived"
done
# The timeout was recorded before any signal, by the reaper.
rt=$(crash_run_id "$tt" 0)
[[ $(crash_trace "$rt" mark_stop) == reaper:granted ]] || fail "mark_stop: $(crash_trace "$rt" mark_stop)"
# The stubborn job needed the SIGKILL after the grace period.
grep -q "run T3-r1: grace period over: SIGKILL" "$H/launch/reaper.log" ||
	fail "no SIGKILL for the job that ignores SIGTERM"
for j in timeout cancel stubborn; do
	[[ $(wc -l <"$T/w/$j/ran") == 1 ]] || fail "$j ran more than once"
done
crash_invariants
echo ok
