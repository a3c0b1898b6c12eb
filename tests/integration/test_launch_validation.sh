#!/usr/bin/env bash
# Every launcher option is checked before anything starts: a bad
# --retention (the reaper would crash-loop while start said "started") and
# a home whose socket path does not fit a unix socket (107 bytes; the
# reason used to come 15 s later at the end of a log dump) are refused at
# once, exit 2, with the reason, and nothing is started.
set -u
source "$(dirname "$0")/lib.sh"
berth_test_init launch_validation
err=$BERTH_TEST_DIR/err

"$BERTH_BIN/berth-launch" start --home "$BERTH_HOME" --retention 5x 2>"$err"
assert_eq 2 $? "start --retention 5x"
grep -q -- "--retention takes a duration (e.g. 7d, 12h, 30m, 90s, 1h30m; a bare number is seconds), not '5x'" \
	"$err" || fail "retention: $(cat "$err")"
[[ ! -e $BERTH_HOME/launch/launcher.pid && ! -S $BERTH_HOME/coordinator.sock ]] ||
	fail "something started after a refused option"
for good in 7d 12h 90 1h30m 250ms; do
	"$BERTH_BIN/berth-launch" status --home "$BERTH_HOME" --retention "$good" >/dev/null 2>&1
	[[ $? != 2 ]] || fail "--retention $good refused"
done

long=$BERTH_TEST_DIR/$(printf 'h%.0s' $(seq 1 100))
mkdir -m 700 "$long"
start=${EPOCHREALTIME/./}
B --home "$long" up 2>"$err"
rc=$?
el=$(((${EPOCHREALTIME/./} - start) / 1000))
assert_eq 2 $rc "berth up with a home too long for a socket"
((el < 3000)) || fail "the long home took ${el} ms to be refused"
grep -q "is too long for berth's socket: $long/coordinator.sock is [0-9]* bytes, a unix socket path at most 107" \
	"$err" || fail "long home: $(cat "$err")"
[[ ! -e $long/launch/launcher.pid ]] || fail "a monitor started for the long home"
pass "launcher options are checked before anything starts"
