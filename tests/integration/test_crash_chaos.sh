#!/usr/bin/env bash
# Chaos: 120 short jobs while a random actor (coordinator, supervisor,
# recovery, reaper) is killed with -9 every few hundred milliseconds for
# 15 s. Afterwards every job ran exactly once and its run carries its real
# exit code; the invariants hold. Bounded: the killing stops by itself and
# the settling has a deadline.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/crash_lib.bash"

N=${CHAOS_JOBS:-120}
CHAOS_S=${CHAOS_SECONDS:-15}
crash_setup chaos
crash_start --slots 8 --lease-ms 1000 --tick-ms 200 --grace-ms 500

tickets=()
for i in $(seq 0 $((N - 1))); do
	tickets+=("$(crash_add "j$i" $((i % 4)) "0.$((1 + i % 4))")")
done
[[ ${#tickets[@]} == "$N" && -n ${tickets[$((N - 1))]} ]] || fail "could not add $N jobs"

actors=(coordinator supervisor recovery reaper)
kills=0
end=$((SECONDS + CHAOS_S))
RANDOM=$$
while ((SECONDS < end)); do
	a=${actors[$((RANDOM % 4))]}
	p=$(crash_actor_pid "$a")
	if [[ -n $p ]] && alive "$p"; then
		kill -KILL "$p" 2>/dev/null && kills=$((kills + 1))
	fi
	sleep "0.$((2 + RANDOM % 4))"
done
echo "chaos: $kills kills in ${CHAOS_S}s"
((kills >= 10)) || fail "only $kills kills happened"

crash_wait_settled 150 "${tickets[@]}"
for i in $(seq 0 $((N - 1))); do
	crash_check_job "${tickets[$i]}" "j$i" $((i % 4))
done
crash_invariants
echo ok
