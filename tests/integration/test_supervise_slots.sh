#!/usr/bin/env bash
# 16 jobs on a supervisor with --slots 2: each ticket runs exactly once, and
# at no moment do more than two jobs run (measured from timestamps the jobs
# write themselves) -- yet two do run side by side, so the slots are used.
# Each job has its own workdir: runs sharing a workdir never overlap (a
# workdir is an implicit seat, DESIGN §8), which is not what is tested here.
set -u
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/supervise_lib.bash"
supervise_init slots

start_coord
start_sup --slots 2 --tick-ms 200

log=$tmp/events
ids=()
for i in $(seq 1 16); do
	mkdir "$tmp/w$i"
	ids+=("$(B add --name "job$i" --workdir "$tmp/w$i" -- sh -c '
		echo "$(date +%s%N) start $BERTH_RUN_ID" >> "$1"
		sleep 0.3
		echo "$(date +%s%N) end $BERTH_RUN_ID" >> "$1"' sh "$log")") || fail "add $i"
done
bwait "${ids[@]}" || fail "not every job succeeded"

for t in "${ids[@]}"; do
	expect "$t" .attempts 1
	expect "$t" '.runs | length' 1
	expect "$t" '.runs[0].state' '"succeeded"'
done

[ "$(wc -l < "$log")" -eq 32 ] || fail "want 32 events, got $(wc -l < "$log")"
[ "$(awk '$2 == "start" {print $3}' "$log" | sort -u | wc -l)" -eq 16 ] ||
	fail "16 distinct runs must have started"
[ "$(awk '$2 == "end" {print $3}' "$log" | sort -u | wc -l)" -eq 16 ] ||
	fail "16 distinct runs must have ended"
# Each run started once and ended once.
dups=$(awk '{print $2, $3}' "$log" | sort | uniq -d)
[ -z "$dups" ] || fail "events repeated: $dups"

# Sweep the events in time order: the number running never exceeds 2.
max=$(sort -n "$log" | awk '$2 == "start" {n++} $2 == "end" {n--} n > m {m = n} END {print m}')
[ "$max" -le 2 ] || fail "$max jobs overlapped with --slots 2"
[ "$max" -eq 2 ] || fail "jobs never overlapped: the second slot was not used"
echo PASS
