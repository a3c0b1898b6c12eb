#!/usr/bin/env bash
# The home (DESIGN §2, issue 10): created 0700 when missing; an existing one
# that is group- or world-writable, or another user's, is refused by the
# launcher, every actor and the CLI with the path and the mode (or owner)
# named, and left exactly as it was; every file berth makes in a fresh home
# is 0600 (directories 0700), while jobs keep the user's umask; another user
# who tries the socket is told "permission denied", not "no socket".
set -u
source "$(dirname "$0")/lib.sh"
berth_test_init home_perms

# refused DIR MODE_WORDS: every way in refuses DIR and leaves it unchanged.
refused() {
	local dir=$1 want=$2 before after out a
	before=$(stat -c '%u %a' "$dir")
	out=$("$BERTH_BIN/berth-launch" start --home "$dir" 2>&1) && fail "launcher accepted $dir ($before)"
	[[ $out == *"$want"*"refusing to use it as BERTH_HOME"* ]] || fail "launcher on $dir: $out"
	for a in coordinator supervisor reaper recovery; do
		out=$(timeout 10 "$BERTH_BIN/berth-$a" --home "$dir" 2>&1 </dev/null) &&
			fail "berth-$a accepted $dir ($before)"
		[[ $out == *"$dir$want"* || $out == *"$dir $want"* ]] || fail "berth-$a on $dir: $out"
	done
	for a in status list "trace" "show T1"; do
		out=$("$BERTH_BIN/berth" --home "$dir" $a 2>&1) && fail "berth $a accepted $dir ($before)"
		[[ $out == "berth: $dir"*"$want"*"refusing to use it as BERTH_HOME"* ]] ||
			fail "berth $a on $dir: $out"
	done
	after=$(stat -c '%u %a' "$dir")
	assert_eq "$before" "$after" "owner and mode of $dir after the refusals"
	[[ -z $(ls -A "$dir") ]] || fail "something was created in $dir: $(ls -A "$dir")"
}

shared=$BERTH_TEST_DIR/shared
mkdir "$shared" && chmod 1777 "$shared"
refused "$shared" " is mode 1777 (group- or world-writable)"
chmod 0770 "$shared"
refused "$shared" " is mode 770 (group- or world-writable)"
if ((EUID == 0)); then
	chmod 0700 "$shared" && chown 65534 "$shared"
	refused "$shared" " belongs to uid 65534, not to you (uid 0): permission denied"
fi

# A fresh home, made by the launcher with its parents, under the user's
# usual umask: every file 0600, every directory 0700, and the job still
# gets umask 022 for what it creates itself.
umask 022
export BERTH_HOME=$BERTH_TEST_DIR/new/deeper/home
berth_launch
t=$(berth add -- sh -c 'umask; berth progress 1/2 half && berth note noted && touch "$1"/made' job "$BERTH_TEST_DIR") ||
	fail "add"
wait_for 30 ticket_is "$t" succeeded
assert_eq "0022" "$(berth logs "$t")" "the job's umask"
assert_eq 644 "$(stat -c %a "$BERTH_TEST_DIR/made")" "mode of a file the job made"
for d in "$BERTH_TEST_DIR/new" "$BERTH_TEST_DIR/new/deeper" "$BERTH_HOME"; do
	assert_eq 700 "$(stat -c %a "$d")" "mode of $d"
done
[[ -e $BERTH_HOME/berth.db-wal && -s $BERTH_HOME/trace/trace.jsonl ]] || fail "no WAL or trace to look at"
[[ -n $(find "$BERTH_HOME/runs" -name output.log) ]] || fail "no output.log to look at"
loose=$(find "$BERTH_HOME" \( -type f ! -perm 0600 \) -o \( -type d ! -perm 0700 \) -o \( -type s ! -perm 0600 \) |
	xargs -r stat -c '%a %n')
[[ -z $loose ]] || fail "files or directories others may read:"$'\n'"$loose"

# Another user: "permission denied", at once, not "no socket" or a wait.
if ((EUID == 0)) && command -v runuser >/dev/null; then
	chmod 0711 "$BERTH_TEST_DIR" "$BERTH_TEST_DIR/new" "$BERTH_TEST_DIR/new/deeper"
	out=$(timeout 20 runuser -u nobody -- "$BERTH_BIN/berth" --home "$BERTH_HOME" status 2>&1) &&
		fail "another user's status succeeded: $out"
	[[ $out == *"permission denied"* && $out != *"no socket"* ]] || fail "another user's status: $out"
	out=$(timeout 20 runuser -u nobody -- env BERTH_SOCKET="ipc://$BERTH_HOME/coordinator.sock" \
		BERTH_TOKEN=x BERTH_RUN_ID=y "$BERTH_BIN/berth" progress 1/2 2>&1) &&
		fail "another user's progress succeeded: $out"
	[[ $out == "berth: progress: permission denied: $BERTH_HOME/coordinator.sock"* ]] ||
		fail "another user's progress: $out"
	chmod 0700 "$BERTH_TEST_DIR"
fi
check_invariants
pass "bad homes refused and left alone; a fresh home is 0600/0700; others get permission denied"
