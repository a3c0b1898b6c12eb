#!/usr/bin/env bash
# The installed systemd user unit passes `systemd-analyze verify --user`
# without a word (skipped, saying so, where systemd-analyze does not exist),
# and its command lines do what a user service needs, run here as systemd
# would run them (a clean environment with HOME, no BERTH_HOME): ExecStart
# brings the group up in the foreground in the default home, ExecStop stops
# it and ExecStart's process then exits 0, and a running job survives the
# stop (KillMode=process: systemd signals nothing else of the cgroup).
set -u
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/install_lib.bash"
berth_test_init install_systemd

P=$BERTH_TEST_DIR/prefix
install_into "$P"
unit=$P/lib/systemd/user/berth.service

# unit_value KEY: the value of KEY= in the unit (the last one).
unit_value() {
	sed -n "s/^$1=//p" "$unit" | tail -n 1
}
assert_eq "$P/bin/berth-launch start --foreground" "$(unit_value ExecStart)" ExecStart
assert_eq "$P/bin/berth-launch stop" "$(unit_value ExecStop)" ExecStop
assert_eq process "$(unit_value KillMode)" KillMode
assert_eq on-failure "$(unit_value Restart)" Restart
assert_eq default.target "$(unit_value WantedBy)" WantedBy
assert_eq "man:berth-launch(1) man:berth(1)" "$(unit_value Documentation)" Documentation
pass "the unit runs the installed launcher"

if command -v systemd-analyze >/dev/null; then
	# A user manager needs a runtime directory; the documentation lines
	# are checked with man, which must find the installed pages.
	rt=${XDG_RUNTIME_DIR:-}
	if [[ -z $rt || ! -d $rt ]]; then
		rt=$BERTH_TEST_DIR/runtime
		mkdir -m 0700 "$rt"
	fi
	out=$(XDG_RUNTIME_DIR=$rt MANPATH=$P/share/man systemd-analyze verify --user "$unit" 2>&1)
	rc=$?
	assert_eq 0 "$rc" "systemd-analyze verify --user exit ($out)"
	assert_eq "" "$out" "what systemd-analyze verify --user said"
	pass "systemd-analyze verify --user accepts the unit"
else
	echo "SKIP: systemd-analyze is not installed: the unit was not verified"
fi

# The default home of a user service: no BERTH_HOME, no XDG_STATE_HOME.
uhome=$BERTH_TEST_DIR/user
mkdir -p "$uhome"
export BERTH_HOME=$uhome/.local/state/berth
as_systemd() {
	env -i HOME="$uhome" PATH="$SYS_PATH" "$@"
}
# shellcheck disable=SC2046
as_systemd $(unit_value ExecStart) >"$BERTH_TEST_DIR/service.out" 2>&1 &
main=$!
for a in coordinator supervisor recovery reaper; do
	wait_for 30 actor_up "$a"
done
wait_for 30 grep -q "group running" "$BERTH_TEST_DIR/service.out"
t=$(PATH=$SYS_PATH "$P/bin/berth" add -- sleep 300) || fail "add"
wait_for 30 run_is "$t" 0 running
job=$(run_field "$t" 0 pid)
alive "$job" || fail "the job pid $job is not alive"

# shellcheck disable=SC2046
as_systemd $(unit_value ExecStop) >"$BERTH_TEST_DIR/stop.out" 2>&1 ||
	fail "ExecStop: $(cat "$BERTH_TEST_DIR/stop.out")"
wait_for 30 gone "$main"
wait "$main"
assert_eq 0 $? "exit of ExecStart's process after ExecStop"
for a in coordinator supervisor recovery reaper; do
	[[ $(actor_count "$a") == 0 ]] || fail "berth-$a still runs after ExecStop"
done
alive "$job" || fail "ExecStop ended the job"
pass "ExecStart runs the group in the default home; ExecStop stops it and the job lives on"
