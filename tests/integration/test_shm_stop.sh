#!/usr/bin/env bash
# The group's shared memory lives as long as the group (DESIGN §9): the
# board and the ring are made 0600 by the actors, removed by `berth-launch
# stop` (even with a job left running, which then records nothing more in
# them), and the segments of a home that was removed without stopping its
# group are collected by another group's reaper.
source "$(dirname "$0")/lib.sh"

berth_test_init shm_stop
base=$(shm_base "$BERTH_HOME")
# no_pids HOME: nothing of that home runs any more (for wait_for).
no_pids() {
	[[ -z $(BERTH_HOME=$1 berth_home_pids) ]]
}

berth_launch
for f in "$base" "$base-ring"; do
	[[ -e $f ]] || fail "no segment $f while the group runs"
	assert_eq "600 $(id -u)" "$(stat -c '%a %u' "$f")" "mode and owner of $f"
done
mkdir -p "$BERTH_TEST_DIR/w"
t=$(berth add --workdir "$BERTH_TEST_DIR/w" -- sh -c 'touch started; while [ ! -e go ]; do sleep 0.05; done; berth --timeout 1s note done; true') ||
	fail "add"
wait_for 60 test -e "$BERTH_TEST_DIR/w/started"
berth_stop
for f in "$base" "$base-ring"; do
	[[ ! -e $f ]] || fail "$f left after berth-launch stop"
done
# The job outlives the stop; what it says now makes no new segment.
touch "$BERTH_TEST_DIR/w/go"
wait_for 30 no_pids "$BERTH_HOME"
[[ ! -e $base && ! -e $base-ring ]] || fail "a job left running made new segments after the stop"
berth_launch
wait_for 60 ticket_is "$t" succeeded
berth_stop
pass "segments removed at stop, not made again by a job"

# A home removed without stopping its group: every actor killed, the home
# deleted. Its segments stay while the home exists, and a reaper (ours, or
# that of a group running alongside) collects them once it is gone.
other=$BERTH_TEST_DIR/other
mkdir -m 0700 "$other"
obase=$(shm_base "$other")
BERTH_HOME=$other "$BERTH_BIN/berth-launch" start --home "$other" --tick-ms 100 \
	>"$BERTH_TEST_DIR/other.out" 2>&1 || fail "start other: $(cat "$BERTH_TEST_DIR/other.out")"
wait_for 30 test -e "$obase-ring"
kill -KILL "$(cat "$other/launch/launcher.pid")" 2>/dev/null
for a in coordinator supervisor recovery reaper; do
	kill -KILL "$(cat "$other/launch/$a.pid" 2>/dev/null)" 2>/dev/null
done
wait_for 30 no_pids "$other"
[[ -e $obase && -e $obase-ring ]] || fail "the killed group's segments are gone while its home exists"
rm -rf "$other"
# Any group's reaper collects them (tests running alongside may be first).
berth_launch
wait_for 30 test ! -e "$obase"
wait_for 30 test ! -e "$obase-ring"
pass "the segments of a removed home are collected by another group's reaper"
