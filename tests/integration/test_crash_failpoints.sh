#!/usr/bin/env bash
# Every failpoint of DESIGN §10 armed with crash, one at a time, each in a
# fresh home, while jobs run: the launcher restarts the crashed actor, every
# ticket settles with its job's real exit code, every job executed exactly
# once, and the invariants hold. (docs/RECOVERY.md lists what each crash
# window leaves behind and who finishes it.)
#
# Usage: test_crash_failpoints.sh [POINT...]   (default: all of them)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/crash_lib.bash"

POINTS=(
	supervisor.after_claim
	supervisor.after_spawn
	supervisor.before_handoff
	supervisor.before_record_exit
	supervisor.before_settle
	recovery.before_record_exit
	recovery.before_readopt
	reaper.before_kill
	coordinator.before_commit
	coordinator.after_commit
)
(($# > 0)) && POINTS=("$@")

CODES=(0 3 0 5)

# The jobs of one scenario: j1..j4 exiting with CODES, sleeping $1 s.
add_jobs() {
	local i
	tickets=()
	for i in 1 2 3 4; do
		tickets+=("$(crash_add "j$i" "${CODES[$((i - 1))]}" "$1")")
	done
}

check_jobs() {
	local i
	for i in 1 2 3 4; do
		crash_check_job "${tickets[$((i - 1))]}" "j$i" "${CODES[$((i - 1))]}"
	done
}

running_count() {
	db_query "SELECT count(*) FROM runs WHERE state = 'running'"
}
some_running() { (($(running_count) > 0)); }
all_running() { (($(running_count) >= 4)); }

# Granted requests of verb $1 sent by actor $2, from the trace.
granted_by() {
	jq -r --arg v "$1" --arg f "$2" 'select(.verb == $v and .from == $f and .decision == "granted") | .run' \
		"$H/trace/trace.jsonl" | wc -l
}

scenario() {
	local point=$1 actor=${1%%.*} t extra=
	echo "== $point"
	crash_setup "${point//./-}"
	case $point in
	supervisor.*)
		crash_arm_once supervisor "$point=1*crash"
		;;
	recovery.before_record_exit)
		# The supervisor crashes at its first exit, so recovery must
		# checkpoint that run, and crashes there once itself.
		crash_arm_once recovery "$point=1*crash"
		crash_arm_once supervisor "supervisor.before_record_exit=1*crash"
		;;
	recovery.before_readopt | reaper.*)
		crash_arm_once "$actor" "$point=1*crash"
		;;
	coordinator.*)
		# Armed for the incarnation after a kill -9 in mid-run, so the
		# crash comes at its first mutation while jobs run.
		crash_arm_once coordinator "$point=1*crash"
		rm -f "$T/arm.coordinator"
		;;
	esac
	crash_start --slots 4 --lease-ms 1000 --tick-ms 200 --grace-ms 500

	case $point in
	recovery.before_readopt)
		# The jobs outlive the supervisor until recovery readopted
		# them (after its crash), then end.
		add_jobs gate:end
		wait_until 30 all_running || fail "jobs did not start"
		kill -KILL "$(crash_actor_pid supervisor)"
		wait_until 60 crash_fired recovery "$point" || fail "$point never crashed recovery"
		readopted_all() { (($(crash_readopted) >= 4)); }
		wait_until 60 readopted_all || fail "$point: $(crash_readopted) runs readopted"
		crash_open end
		;;
	reaper.before_kill)
		add_jobs 1
		mkdir -p "$T/w/slow"
		extra=$(B add --name slow --workdir "$T/w/slow" --timeout 1s -- sh -c 'echo ran >>ran; sleep 60')
		;;
	coordinator.*)
		add_jobs 3
		wait_until 30 all_running || fail "jobs did not start"
		crash_rearm coordinator
		kill -KILL "$(crash_actor_pid coordinator)"
		;;
	*)
		add_jobs 1
		;;
	esac

	wait_until 60 crash_fired "$actor" "$point" || fail "$point never crashed $actor"
	crash_wait_settled 90 "${tickets[@]}" ${extra:+"$extra"}
	check_jobs

	# What the crash window leaves for someone else, and who finished it.
	case $point in
	supervisor.after_claim | supervisor.after_spawn | supervisor.before_handoff)
		t=$(db_query "SELECT count(*) FROM runs WHERE state = 'aborted'")
		((t >= 1)) || fail "$point: no run was abandoned"
		;;
	supervisor.before_record_exit | recovery.before_record_exit)
		(($(granted_by record_exit recovery) >= 1)) ||
			fail "$point: recovery checkpointed no exit"
		;;
	supervisor.before_settle)
		(($(granted_by settle recovery) >= 1)) || fail "$point: recovery settled nothing"
		;;
	recovery.before_readopt)
		(($(granted_by readopt recovery) >= 1)) || fail "$point: nothing readopted"
		;;
	reaper.before_kill)
		[[ $(B show "$extra" --json | jq -r '.runs[-1].state') == timed_out ]] ||
			fail "$point: the slow job did not time out: $(B show "$extra" --json)"
		[[ $(wc -l <"$T/w/slow/ran") == 1 ]] || fail "$point: the slow job ran twice"
		;;
	esac
	crash_invariants
	"$T/bin/berth-launch" stop --home "$H" --kill-jobs >/dev/null 2>&1
	kill_recorded_groups
	rm -rf "$T"
	T= H=
	trap - EXIT
}

for p in "${POINTS[@]}"; do
	scenario "$p"
done
echo "ok: ${#POINTS[@]} failpoints"
