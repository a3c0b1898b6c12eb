# crash_lib.bash: the crash-safety scenarios (tests/integration/test_crash_*.sh),
# on top of lib.sh (sourced first).
#
# Each scenario gets its own temporary directory $T with:
#   $T/home      BERTH_HOME
#   $T/bin       the launcher and every actor (symlinks to the build); an
#                actor armed with crash_arm_once is a wrapper there
#   $T/w/<job>   one workdir per job (runs sharing a workdir are serialised
#                by the seat rules), holding the job's side-effect file "ran"
#
# The launcher passes BERTH_FAILPOINTS_<ACTOR> to every incarnation of an
# actor, so "1*crash" would crash each restart again at its first hit. A
# crash scenario needs the crash once: crash_arm_once makes only the next
# start of the actor run with the failpoint armed.

set -u

T= H=

crash_launcher() {
	if [[ -x $BERTH_BIN/berth-launch ]]; then
		echo "$BERTH_BIN/berth-launch"
	else
		echo "$BERTH_SRC/scripts/berth-launch"
	fi
}

# crash_setup NAME: lib.sh's directory and home, plus $T/bin and $T/w.
crash_setup() {
	local f
	berth_test_init "crash_$1"
	T=$BERTH_TEST_DIR
	H=$BERTH_HOME
	BIN=$BERTH_BIN
	mkdir -p "$T/bin" "$T/w"
	# The launcher finds its actors next to itself: a copy (not a
	# symlink, it resolves those) among links to the real binaries.
	cp "$(crash_launcher)" "$T/bin/berth-launch"
	chmod +x "$T/bin/berth-launch"
	for f in "$BIN"/berth*; do
		[[ ${f##*/} == berth-launch ]] && continue
		ln -s "$f" "$T/bin/${f##*/}"
	done
}

# crash_arm_once ACTOR SPEC: the next start of ACTOR gets
# BERTH_FAILPOINTS=SPEC; later restarts run clean.
crash_arm_once() {
	local actor=$1 spec=$2
	rm -f "$T/bin/berth-$actor"
	cat >"$T/bin/berth-$actor" <<EOF
#!/usr/bin/env bash
unset BERTH_FAILPOINTS
# recovery's first pass (--once) is not the incarnation under test.
once=0
for a in "\$@"; do [[ \$a == --once ]] && once=1; done
if ((!once)) && [[ -e "$T/arm.$actor" ]]; then
	rm -f "$T/arm.$actor"
	echo "\$\$" >"$T/armed.$actor"
	export BERTH_FAILPOINTS='$spec'
fi
exec "$BIN/berth-$actor" "\$@"
EOF
	chmod +x "$T/bin/berth-$actor"
	touch "$T/arm.$actor"
}

# crash_rearm ACTOR: arm the next start again (same spec).
crash_rearm() {
	touch "$T/arm.$1"
}

# crash_fired ACTOR POINT: the armed incarnation logged the crash and is gone.
crash_fired() {
	local pid
	pid=$(cat "$T/armed.$1" 2>/dev/null) || return 1
	grep -q "failpoint $2: .*crash" "$H/launch/$1.log" 2>/dev/null || return 1
	! alive "$pid"
}

crash_start() {
	"$T/bin/berth-launch" start --home "$H" "$@" >"$T/launch.out" 2>&1 ||
		fail "berth-launch start: $(cat "$T/launch.out")"
}

crash_actor_pid() {
	cat "$H/launch/$1.pid" 2>/dev/null
}

# crash_add JOB CODE SLEEP [berth add options...]: a job that appends to its
# side-effect file, sleeps, and exits CODE. Prints the ticket id. SLEEP
# "gate:NAME" makes the job wait until crash_open NAME instead: a test on a
# loaded machine decides when jobs end, rather than hoping they last.
crash_add() {
	local job=$1 code=$2 secs=$3 wait
	shift 3
	mkdir -p "$T/w/$job"
	if [[ $secs == gate:* ]]; then
		wait="while [ ! -e '$T/gate.${secs#gate:}' ]; do sleep 0.05; done"
	else
		wait="sleep $secs"
	fi
	B add --name "$job" --workdir "$T/w/$job" "$@" -- \
		sh -c "echo ran >>ran; $wait; exit $code" ||
		fail "berth add $job"
}

# crash_open NAME: the jobs waiting on gate NAME end.
crash_open() {
	touch "$T/gate.$1"
}

# Runs (of any ticket) granted a readopt, from the trace.
crash_readopted() {
	jq -r 'select(.verb == "readopt" and .decision == "granted") | .run' \
		"$H/trace/trace.jsonl" | sort -u | wc -l
}

# Number of runs of ticket in state $2 (a jq test on .state).
crash_runs_in() {
	B show "$1" --json | jq "[.runs[] | select(.state == \"$2\")] | length"
}

crash_state() {
	B show "$1" --json | jq -r .state
}

# 0 when every listed ticket is settled (not ready/held/claimed). One
# read of the database (WAL: a consistent snapshot while the group runs),
# so polling a hundred tickets stays cheap on a loaded machine.
crash_all_settled() {
	local t ns= n
	for t in "$@"; do
		[[ $t =~ ^T([0-9]+)$ ]] || return 1
		ns+=${ns:+,}${BASH_REMATCH[1]}
	done
	n=$(db_query "SELECT count(*) FROM tickets
		WHERE n IN ($ns) AND state IN ('succeeded', 'failed', 'cancelled')" 2>/dev/null) ||
		return 1
	[[ $n == $# ]]
}

# crash_wait_settled SECONDS TICKET...
crash_wait_settled() {
	local secs=$1
	shift
	wait_until "$secs" crash_all_settled "$@" ||
		fail "tickets not settled after ${secs}s: $(B list 2>&1)"
}

# crash_check_job TICKET JOB CODE: the job executed exactly once (one line
# in its side-effect file, exactly one run that was not aborted) and its
# run carries the job's real exit code.
crash_check_job() {
	local t=$1 job=$2 code=$3 json n execd got state
	json=$(B show "$t" --json) || fail "show $t"
	n=$(wc -l <"$T/w/$job/ran" 2>/dev/null || echo 0)
	execd=$(jq '[.runs[] | select(.state != "aborted")] | length' <<<"$json")
	got=$(jq -c '[.runs[] | select(.state != "aborted")][0].exit_code' <<<"$json")
	state=$(jq -r '[.runs[] | select(.state != "aborted")][0].state' <<<"$json")
	[[ $n == 1 ]] || fail "$t ($job): executed $n times: $json"
	[[ $execd == 1 ]] || fail "$t ($job): $execd executed runs: $json"
	[[ $got == "$code" ]] || fail "$t ($job): exit code $got, want $code: $json"
	if ((code == 0)); then
		[[ $state == succeeded ]] || fail "$t ($job): run $state, want succeeded"
	else
		[[ $state == failed ]] || fail "$t ($job): run $state, want failed"
	fi
}

# The decisions of the trace for one run and verb, as "from:decision" lines.
crash_trace() {
	jq -r --arg run "$1" --arg verb "$2" \
		'select(.run == $run and .verb == $verb) | "\(.from):\(.decision)"' \
		"$H/trace/trace.jsonl"
}

crash_run_id() {
	B show "$1" --json | jq -r ".runs[$2].id"
}

# Our own invariants, then the shared checkers (lib.sh: invariants and
# trace conformance).
crash_invariants() {
	local bad n
	bad=$(db_query "SELECT count(*) FROM runs r JOIN leases l ON l.run_id = r.id
		WHERE r.settled_ms IS NOT NULL")
	[[ $bad == 0 ]] || fail "$bad settled runs still hold a lease"
	bad=$(db_query "SELECT count(*) FROM (SELECT ticket FROM runs
		WHERE settled_ms IS NULL GROUP BY ticket HAVING count(*) > 1) AS two")
	[[ $bad == 0 ]] || fail "$bad tickets with two unsettled runs"
	# Exactly one granted record_exit per run that has a checkpointed exit.
	n=$(jq -r 'select(.verb == "record_exit" and .decision == "granted") | .run' \
		"$H/trace/trace.jsonl" | sort | uniq -d | wc -l)
	[[ $n == 0 ]] || fail "$n runs with two granted record_exit"
	check_invariants
}
