#!/usr/bin/env bash
# Out of descriptors, live jobs are never declared dead (DESIGN §7: an
# identity that cannot be read counts as alive). The supervisor runs under
# `ulimit -n 20` (a wrapper next to a copy of the launcher), with 16 jobs
# (--retries 1) that wait for a gate. It is killed with SIGKILL; the
# launcher restarts it, still under the limit, and recovery hands it the 16
# runs. It must adopt all 16 (watching them by polling their identities:
# no pidfd fits its budget), settle none while they run, and run none
# twice; once the gate opens, all 16 succeed, each executed once.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/crash_lib.bash"

crash_setup exhaust_fd_adopt
rm -f "$T/bin/berth-supervisor"
cat >"$T/bin/berth-supervisor" <<EOS
#!/usr/bin/env bash
ulimit -n 20 || exit 1
exec "$BIN/berth-supervisor" "\$@"
EOS
chmod +x "$T/bin/berth-supervisor"
crash_start --slots 16 --lease-ms 1000 --tick-ms 100 --grace-ms 500

ids=()
for i in $(seq 1 16); do
	ids+=("$(crash_add "j$i" 0 gate:go --retries 1)")
done
running() {
	local i
	for i in $(seq 1 16); do
		[[ -s $T/w/j$i/ran ]] || return 1
	done
}
wait_for 90 running
sup=$(crash_actor_pid supervisor)
grep -q '^Max open files *20 ' "/proc/$sup/limits" || fail "the supervisor is not under ulimit -n 20"
ls "/proc/$sup/fd" | wc -l >"$T/fds.before"

kill -KILL "$sup"
new_sup() {
	local p
	p=$(crash_actor_pid supervisor) && [[ -n $p && $p != "$sup" ]] && alive "$p"
}
wait_for 60 new_sup
sup2=$(crash_actor_pid supervisor)
grep -q '^Max open files *20 ' "/proc/$sup2/limits" || fail "the restarted supervisor is not under ulimit -n 20"
adopted() { (($(grep -c "run T[0-9]*-r1: adopted" "$H/launch/supervisor.log") >= 16)); }
wait_for 60 adopted
# None settled while they run, through several passes of recovery and of the
# supervisor's polling (each recovery pass is a traced scan); none ran twice.
t0=$((${EPOCHREALTIME/./} / 1000))
quiet_passes() {
	settled=$(db_query "SELECT count(*) FROM runs WHERE settled_ms IS NOT NULL")
	[[ $settled == 0 ]] || fail "$settled runs settled while their jobs ran: $(db_query "SELECT id, state FROM runs WHERE settled_ms IS NOT NULL")"
	recovery_passes_after "$t0" 10
}
wait_until 60 quiet_passes || fail "recovery made no 10 passes in 60 s"
grep "adopted, shim" "$H/launch/supervisor.log" | grep -q " gone" &&
	fail "a live shim was judged gone: $(grep 'adopted, shim' "$H/launch/supervisor.log" | grep ' gone')"
polled=$(grep -c "adopted, shim [0-9]* \(matches\|unverifiable\) (identity polled)" "$H/launch/supervisor.log")
crash_open go
crash_wait_settled 120 "${ids[@]}"
for i in $(seq 1 16); do
	crash_check_job "${ids[i - 1]}" "j$i" 0
	expect "${ids[i - 1]}" .attempts 1
done
pass "a supervisor under ulimit -n 20 adopted 16 live jobs ($polled watched by identity polling), settled none while they ran, ran none twice"
