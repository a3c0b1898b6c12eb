#!/usr/bin/env bash
# Two tickets with the same --key never overlap (DESIGN §8: a run takes the
# seat its ticket names, in the claim's transaction), while tickets with
# other keys still use the free slot beside them. Intervals are measured from
# timestamps the jobs write themselves.
set -u
source "$(dirname "$0")/lib.sh"
berth_test_init seat_key_overlap
berth_launch --slots 3

out=$BERTH_TEST_DIR/stamps
mkdir -p "$out"
# job NAME: stamps its start and end (ns) into $out/NAME.
job() {
	echo "s=\$(date +%s%N); sleep 0.4; echo \"\$s \$(date +%s%N)\" >> '$out/$1'"
}
ids=()
for i in 1 2 3 4; do
	ids+=("$(berth add --key build-lock --name "k$i" -- sh -c "$(job key)")") || fail "add k$i"
done
for i in 1 2; do
	ids+=("$(berth add --key other-$i --name "o$i" -- sh -c "$(job other)")") || fail "add o$i"
done
berth wait "${ids[@]}" --timeout 60s >/dev/null || fail "not all tickets succeeded: $(berth list)"

assert_eq 4 "$(wc -l <"$out/key")" "runs of build-lock"
assert_eq 2 "$(wc -l <"$out/other")" "runs of other keys"

# No two build-lock intervals overlap: sorted by start, each starts after the
# previous one ended.
prev_end=0
while read -r s e; do
	((s >= prev_end)) || fail "two build-lock jobs overlapped (start $s < previous end $prev_end)"
	prev_end=$e
done < <(sort -n "$out/key")

# The other keys were not held back by build-lock: some other-key job ran
# while a build-lock job was running (three slots, two free).
overlap=0
while read -r os oe; do
	while read -r ks ke; do
		((os < ke && ks < oe)) && overlap=1
	done <"$out/key"
done <"$out/other"
assert_eq 1 "$overlap" "another key ran beside build-lock"

check_invariants
pass "same-key tickets ran one at a time; other keys ran beside them"
