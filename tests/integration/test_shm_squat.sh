#!/usr/bin/env bash
# Shared memory someone else made first (DESIGN §9, issue 10): the status
# board and trace ring names are predictable from the home's path, so
# another user can create them before the group starts. Such segments are
# never used: the group runs and decides as always, observation is off for
# that home with one warning per actor in its log, `berth status` says so,
# the squatter's bytes are never read as a board nor written, and stopping
# the group leaves them (they are not ours). Run as root (CI), the segments
# belong to `nobody`; run as another user, they are this user's but 0644,
# which is refused just the same.
source "$(dirname "$0")/lib.sh"

berth_test_init shm_squat
base=$(shm_base "$BERTH_HOME")
forge() {
	# What a squatter would write: bytes that look like nothing of ours.
	head -c 8192 /dev/zero | tr '\0' 'F' >"$1"
	chmod 0644 "$1"
	if ((EUID == 0)); then
		chown nobody "$1" || fail "chown nobody $1"
		want="owned by uid $(id -u nobody)"
	else
		want="has mode 0644"
	fi
}
cleanup_squat() {
	rm -f "$base" "$base-ring"
}
trap 'cleanup_squat; berth_cleanup' EXIT
forge "$base"
forge "$base-ring"
sum_before=$(cat "$base" "$base-ring" | sha256sum)

berth_launch
t=$(berth add -- sh -c 'berth progress 1/2 half; exit 3' 2>"$BERTH_TEST_DIR/add.err") ||
	fail "add: $(cat "$BERTH_TEST_DIR/add.err")"
[[ ! -s $BERTH_TEST_DIR/add.err ]] || fail "add said something: $(cat "$BERTH_TEST_DIR/add.err")"
wait_for 60 ticket_is "$t" failed
assert_eq 3 "$(run_field "$t" 0 exit_code)" "the job's exit code"

# status: the actors come from the coordinator, and it says why there is no
# board (the squatter's "board" is never shown).
berth status >"$BERTH_TEST_DIR/st.out" 2>"$BERTH_TEST_DIR/st.err" ||
	fail "status exited $?: $(cat "$BERTH_TEST_DIR/st.out" "$BERTH_TEST_DIR/st.err")"
grep -q "^board: not used: $base $want (observation is off for this home)" \
	"$BERTH_TEST_DIR/st.out" || fail "status does not say the board is not used: $(cat "$BERTH_TEST_DIR/st.out")"
grep -Eq '^  supervisor +pid [0-9]+ +alive' "$BERTH_TEST_DIR/st.out" ||
	fail "status lists no supervisor from the coordinator: $(cat "$BERTH_TEST_DIR/st.out")"
berth status --json >"$BERTH_TEST_DIR/st.json" || fail "status --json"
jq -e --arg w "$want" '.board == false and (.board_refused | contains($w)) and
	([.actors[] | select(.source == "board")] | length) == 0' "$BERTH_TEST_DIR/st.json" \
	>/dev/null || fail "status --json: $(cat "$BERTH_TEST_DIR/st.json")"

# Not used: not written, not resized.
assert_eq "$sum_before" "$(cat "$base" "$base-ring" | sha256sum)" "the squatted segments' bytes"

# One warning per actor, however often it opened the segments.
for a in coordinator supervisor recovery reaper; do
	n=$(grep -c "shared memory not used: $base" "$BERTH_HOME/launch/$a.log")
	assert_eq 1 "$n" "warnings in $a.log"
done

# The trace still reads (from trace.jsonl), with no ring records.
berth trace --json >"$BERTH_TEST_DIR/trace.json" || fail "trace --json"
jq -e -s 'any(.[]; .verb == "record_exit" and .decision == "granted") and
	all(.[]; .source? != "ring")' "$BERTH_TEST_DIR/trace.json" >/dev/null ||
	fail "trace: $(head -c 2000 "$BERTH_TEST_DIR/trace.json")"

# Stopping leaves another user's segments where they are (as root) and
# removes nothing that is not ours.
berth_stop
if ((EUID == 0)); then
	[[ -e $base && -e $base-ring ]] || fail "stop removed another user's segments"
	assert_eq "$sum_before" "$(cat "$base" "$base-ring" | sha256sum)" "the squatted bytes after stop"
fi
check_invariants
pass "a squatted board and ring are not used, status says so, jobs run"
