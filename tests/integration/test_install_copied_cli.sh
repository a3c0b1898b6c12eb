#!/usr/bin/env bash
# A copied berth (not a symlink: /proc/self/exe is the copy) finds the
# launcher where an install layout puts it, or on PATH, and says where it
# looked when it cannot; a launcher alone finds no actors and says where it
# looked too. Before the lookup learned the libexec directory, the copy in
# a prefix layout failed, and its message named no place.
set -u
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/install_lib.bash"
berth_test_init install_copied_cli

# berth_up_ok BERTH [PATH]: BERTH up (with that PATH) starts the group, a job
# runs, BERTH down stops it.
berth_up_ok() {
	local b=$1 p=$2 t
	PATH=$p "$b" up --lease-ms 1000 --tick-ms 100 >"$BERTH_TEST_DIR/up.out" 2>&1 ||
		fail "$b up (PATH=$p): $(cat "$BERTH_TEST_DIR/up.out")"
	t=$(PATH=$p "$b" add -- true) || fail "$b add"
	PATH=$p "$b" wait "$t" --timeout 60s >/dev/null || fail "$b wait $t"
	PATH=$p "$b" down >"$BERTH_TEST_DIR/down.out" 2>&1 || fail "$b down: $(cat "$BERTH_TEST_DIR/down.out")"
	wait_for 30 test "$(actor_count coordinator)" = 0
}

# Alone: nothing next to it, no libexec beside it, nothing on PATH.
mkdir -p "$BERTH_TEST_DIR/lone"
cp "$BERTH_BIN/berth" "$BERTH_TEST_DIR/lone/berth"
L=$BERTH_TEST_DIR/lone/berth
PATH=$SYS_PATH "$L" up >"$BERTH_TEST_DIR/out" 2>"$BERTH_TEST_DIR/err"
assert_eq 1 $? "exit of a lone copy's berth up"
[[ ! -s $BERTH_TEST_DIR/out ]] || fail "stdout of a failed up: $(cat "$BERTH_TEST_DIR/out")"
err=$(cat "$BERTH_TEST_DIR/err")
for where in "not in $BERTH_TEST_DIR/lone (next to $L)" "not in $BERTH_TEST_DIR/libexec/berth" \
	"not on PATH ($SYS_PATH)"; do
	[[ $err == *"$where"* ]] || fail "the message does not say '$where': $err"
done
[[ ! -e $BERTH_HOME/launch ]] || fail "a failed up left $BERTH_HOME/launch"
PATH=$SYS_PATH "$L" down >/dev/null 2>&1
assert_eq 1 $? "exit of a lone copy's berth down"
pass "a lone copy says where it looked for berth-launch"

# PATH provides the launcher: an install's bin/.
P=$BERTH_TEST_DIR/prefix
install_into "$P"
berth_up_ok "$L" "$P/bin:$SYS_PATH"
assert_eq "$P/libexec/berth/berth-coordinator" \
	"$(grep -o "started coordinator pid [0-9]*: [^ ]*" "$BERTH_HOME/launch/launcher.log" | tail -1 | sed 's/.*: //')" \
	"the coordinator the PATH's launcher started"
pass "a copy finds the launcher on PATH"

# The install layout provides it: a copy in Q/bin, the launcher with the
# actors in Q/libexec/berth (where the launcher finds them next to itself).
Q=$BERTH_TEST_DIR/q
mkdir -p "$Q/bin" "$Q/libexec/berth"
cp "$BERTH_BIN/berth" "$Q/bin/berth"
cp "$P/bin/berth-launch" "$P"/libexec/berth/* "$Q/libexec/berth/"
berth_up_ok "$Q/bin/berth" "$SYS_PATH"
grep -q "started coordinator pid [0-9]*: $Q/libexec/berth/berth-coordinator " \
	"$BERTH_HOME/launch/launcher.log" || fail "the layout's launcher did not start its coordinator"
pass "a copy finds the launcher in ../libexec/berth"

# A symlink resolves to the build, where the launcher is.
ln -s "$BERTH_BIN/berth" "$BERTH_TEST_DIR/lone/berth-link"
berth_up_ok "$BERTH_TEST_DIR/lone/berth-link" "$SYS_PATH"
pass "a symlinked berth finds the launcher next to its target"

# The launcher alone: no actors next to it, none in ../libexec/berth, none
# on PATH.
mkdir -p "$BERTH_TEST_DIR/launch-only/bin"
cp "$P/bin/berth-launch" "$BERTH_TEST_DIR/launch-only/bin/"
PATH=$SYS_PATH "$BERTH_TEST_DIR/launch-only/bin/berth-launch" start >"$BERTH_TEST_DIR/out" 2>"$BERTH_TEST_DIR/err"
assert_eq 2 $? "exit of a lone launcher's start"
err=$(cat "$BERTH_TEST_DIR/err")
for where in "in $BERTH_TEST_DIR/launch-only/bin" "in $BERTH_TEST_DIR/launch-only/libexec/berth" \
	"on PATH ($SYS_PATH)"; do
	[[ $err == *"$where"* ]] || fail "the launcher's message does not say '$where': $err"
done
pass "a launcher without actors says where it looked"
