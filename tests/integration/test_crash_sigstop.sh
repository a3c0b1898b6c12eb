#!/usr/bin/env bash
# The supervisor stopped with SIGSTOP past its lease TTL while its jobs end,
# then continued: recovery settles the runs with their real exit codes, the
# continued supervisor's record_exit is denied, and nothing is settled twice.
# The jobs end when the test opens their gate, after the SIGSTOP.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/crash_lib.bash"

crash_setup sigstop
crash_start --slots 4 --lease-ms 1000 --tick-ms 200

codes=(4 0 9)
tickets=()
for i in 0 1 2; do
	tickets+=("$(crash_add "j$i" "${codes[$i]}" gate:end)")
done
running() { (($(db_query "SELECT count(*) FROM runs WHERE state = 'running'") == 3)); }
wait_until 30 running || fail "jobs did not start"
sup=$(crash_actor_pid supervisor)
kill -STOP "$sup"
crash_open end

crash_wait_settled 30 "${tickets[@]}"
for i in 0 1 2; do
	run=$(crash_run_id "${tickets[$i]}" 0)
	[[ $(crash_trace "$run" record_exit) == "recovery:granted" ]] ||
		fail "j$i: record_exit while stopped: $(crash_trace "$run" record_exit)"
	crash_check_job "${tickets[$i]}" "j$i" "${codes[$i]}"
done

kill -CONT "$sup"
denied_all() {
	local i run
	for i in 0 1 2; do
		run=$(crash_run_id "${tickets[$i]}" 0)
		[[ $(crash_trace "$run" record_exit | tr '\n' ' ') == "recovery:granted supervisor:denied " ]] ||
			return 1
	done
}
wait_until 30 denied_all || fail "the continued supervisor was not denied on every run"
sleep 0.5
for i in 0 1 2; do
	run=$(crash_run_id "${tickets[$i]}" 0)
	[[ $(crash_trace "$run" settle) == "recovery:granted" ]] ||
		fail "j$i settled more than once: $(crash_trace "$run" settle | tr '\n' ' ')"
	n=$(db_query "SELECT count(*) FROM events WHERE run = '$run'
		AND verb = 'settle'") || fail "events table"
	[[ $n == 1 ]] || fail "j$i: $n settle events"
	crash_check_job "${tickets[$i]}" "j$i" "${codes[$i]}"
done
[[ $(crash_actor_pid supervisor) == "$sup" ]] || fail "the supervisor was restarted"
crash_invariants
echo ok
