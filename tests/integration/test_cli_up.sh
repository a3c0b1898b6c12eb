#!/usr/bin/env bash
# berth up / berth down wrap the launcher found next to the berth binary:
# up starts the whole group (status then lists every actor), a job runs,
# down stops the actors (status then says the coordinator is not answering).
source "$(dirname "$0")/lib.sh"
set -u
BIN=${BERTH_BIN:-$(cd "$(dirname "$0")/../../build/bin" && pwd)}
berth_test_init cli_up
tmp=$BERTH_TEST_DIR
home=$BERTH_HOME
# The commands name their home with --home: BERTH_HOME stays set for lib.sh's
# cleanup only, out of their environment.
export -n BERTH_HOME
fail() {
	echo "FAIL: $*" >&2
	tail -20 "$home/launch/launcher.log" >&2 2>/dev/null
	exit 1
}
[ -x "$BIN/berth-launch" ] || fail "no berth-launch next to berth in $BIN"
B() { "$BIN/berth" --home "$home" "$@"; }

# PATH without the build: berth must find the launcher next to itself.
PATH=/usr/bin:/bin B up --slots 1 --tick-ms 200 >"$tmp/up.out" 2>&1 || fail "up: $(cat "$tmp/up.out")"
# up returns once the coordinator answers; the other actors follow it
# (recovery's first pass comes before the supervisor).
all_up() {
	local a
	B status >"$tmp/st" 2>&1 || return 1
	for a in coordinator supervisor recovery reaper; do
		grep -Eq "^  $a +pid [0-9]+ +running " "$tmp/st" || return 1
	done
}
end=$((SECONDS + 30))
until all_up; do
	[ $SECONDS -lt $end ] || fail "status never listed all four actors: $(cat "$tmp/st")"
	sleep 0.1
done
t=$(B add -- true) || fail "add"
B wait "$t" --timeout 60s >/dev/null || fail "wait $t"
B down >"$tmp/down.out" 2>&1 || fail "down: $(cat "$tmp/down.out")"
B status --timeout 1s >"$tmp/st" 2>/dev/null && fail "status after down exited 0"
grep -qx "coordinator: not answering at $home/coordinator.sock" "$tmp/st" || fail "status after down: $(cat "$tmp/st")"
echo "PASS test_cli_up"
