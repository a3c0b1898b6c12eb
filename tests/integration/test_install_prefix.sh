#!/usr/bin/env bash
# cmake --install into a temporary prefix puts every file where
# docs/LAUNCHER.md ("Install") says, and the installed programs alone, with
# no build on PATH, run a job end to end: `berth up` finds the launcher next
# to itself, the launcher finds the actors in PREFIX/libexec/berth (the
# running actors' /proc/PID/exe prove which binaries run), `berth down`
# stops them. DESTDIR staging installs the same files under the stage with
# the unit still naming the final path.
set -u
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/install_lib.bash"
berth_test_init install_prefix

P=$BERTH_TEST_DIR/prefix
install_into "$P"
want=(bin/berth bin/berth-launch share/man/man1/berth.1 share/man/man1/berth-launch.1
	share/bash-completion/completions/berth share/bash-completion/completions/berth-launch
	share/zsh/site-functions/_berth lib/systemd/user/berth.service)
for a in "${INSTALL_ACTORS[@]}"; do
	want+=("libexec/berth/$a")
done
for f in "${want[@]}"; do
	[[ -f $P/$f ]] || fail "no $f in the prefix; cmake --install said: $(cat "$BERTH_TEST_DIR/install.out")"
	grep -q "Installing: $P/$f\$" "$BERTH_TEST_DIR/install.out" || fail "cmake --install did not report $f"
done
for f in "${want[@]}"; do
	[[ $f == bin/* || $f == libexec/* ]] || continue
	[[ -x $P/$f ]] || fail "$f is not executable"
done
# Nothing else: no actor in bin/, no test program, no benchmark.
got=$(cd "$P" && find . -type f | sed 's|^\./||' | sort)
assert_eq "$(printf '%s\n' "${want[@]}" | sort)" "$got" "the installed files"
grep -qx "ExecStart=$P/bin/berth-launch start --foreground" "$P/lib/systemd/user/berth.service" ||
	fail "unit ExecStart: $(grep Exec "$P/lib/systemd/user/berth.service")"
pass "cmake --install put every file in place"

# The installed CLI and launcher, with nothing of the build on PATH.
ib() { PATH=$SYS_PATH "$P/bin/berth" "$@"; }
ib up --lease-ms 1000 --tick-ms 100 --grace-ms 500 >"$BERTH_TEST_DIR/up.out" 2>&1 ||
	fail "installed berth up: $(cat "$BERTH_TEST_DIR/up.out")"
for a in coordinator supervisor recovery reaper; do
	wait_for 30 actor_up "$a"
	assert_eq "$P/libexec/berth/berth-$a" "$(proc_exe "$(actor_pid "$a")")" "the running $a"
done
grep -q "started coordinator pid [0-9]*: $P/libexec/berth/berth-coordinator " \
	"$BERTH_HOME/launch/launcher.log" || fail "launcher.log does not name the installed coordinator"
out=$(PATH=$SYS_PATH "$P/bin/berth-launch" status)
assert_eq 0 $? "installed berth-launch status"
t=$(ib add -- sh -c 'echo "ran by $(readlink /proc/$PPID/exe)"') || fail "installed berth add"
ib wait "$t" --timeout 60s >/dev/null || fail "wait $t: $(ib show "$t")"
# The job's parent is its shim: the installed one.
assert_eq "ran by $P/libexec/berth/berth-shim" "$(ib logs "$t")" "the job's output"
check_invariants
pass "the installed berth up runs a job with the installed actors"

# Ticket ids complete from the running group (installed completion,
# installed berth).
comp=$(PATH=$SYS_PATH bash -c 'source "$1"; COMP_WORDS=("$2" show T); COMP_CWORD=2; _berth
	printf "%s\n" "${COMPREPLY[@]}"' _ "$P/share/bash-completion/completions/berth" "$P/bin/berth")
assert_eq "$t" "$comp" "completion of 'berth show T'"
pass "bash completion offers the group's ticket ids"

ib down >"$BERTH_TEST_DIR/down.out" 2>&1 || fail "installed berth down: $(cat "$BERTH_TEST_DIR/down.out")"
for a in coordinator supervisor recovery reaper; do
	[[ $(count_procs "$P/libexec/berth/berth-$a") == 0 ]] || fail "berth-$a still runs after down"
done
PATH=$SYS_PATH "$P/bin/berth-launch" status >/dev/null
assert_eq 3 $? "status after the installed berth down"
pass "the installed berth down stops the group"

# DESTDIR: the files land under the stage, the unit names the real prefix.
install_into /opt/berth-test DESTDIR="$BERTH_TEST_DIR/stage"
for f in "${want[@]}"; do
	[[ -f $BERTH_TEST_DIR/stage/opt/berth-test/$f ]] || fail "no $f under DESTDIR"
done
[[ ! -e /opt/berth-test ]] || fail "DESTDIR install wrote to /opt/berth-test"
grep -qx "ExecStart=/opt/berth-test/bin/berth-launch start --foreground" \
	"$BERTH_TEST_DIR/stage/opt/berth-test/lib/systemd/user/berth.service" ||
	fail "staged unit: $(grep Exec "$BERTH_TEST_DIR/stage/opt/berth-test/lib/systemd/user/berth.service")"
pass "DESTDIR stages the install; the unit names the final prefix"
