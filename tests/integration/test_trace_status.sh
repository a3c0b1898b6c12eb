#!/usr/bin/env bash
# The status board (DESIGN §9) works without the coordinator: with the
# coordinator killed (and no launcher to restart it), `berth status` still
# lists every actor from shared memory and names the dead one. The board
# and the ring live in /dev/shm under names derived from the home.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/trace_lib.bash"

tr_setup status
tr_start --slots 2 --lease-ms 2000 --tick-ms 200
base=$(shm_base "$H")
[[ -e $base ]] || fail "no status board at $base"
[[ -e $base-ring ]] || fail "no trace ring at $base-ring"

all_running() {
	B status --json >"$T/st.json" 2>/dev/null || return 1
	local a
	for a in coordinator supervisor recovery reaper; do
		jq -e -s --arg a "$a" 'any(.. | objects; .source? == "board" and .actor? == $a and .state? == "running")' \
			"$T/st.json" >/dev/null || return 1
	done
}
wait_until 60 all_running || fail "not every actor running on the board: $(cat "$T/st.json")"

# The launcher's monitor goes first, so nothing restarts the coordinator.
monitor=$(cat "$H/launch/launcher.pid") || fail "no launcher.pid"
coord=$(cat "$H/launch/coordinator.pid") || fail "no coordinator.pid"
kill -KILL "$monitor"
kill -KILL "$coord"
gone() { ! kill -0 "$coord" 2>/dev/null; }
wait_until 30 gone || fail "coordinator $coord still alive"

rc=0
B --timeout 2s status >"$T/status.txt" 2>"$T/status.err" || rc=$?
cat "$T/status.txt" >&2
grep -q "coordinator: not answering" "$T/status.txt" || fail "status does not say the coordinator is not answering"
for a in supervisor recovery reaper; do
	pid=$(cat "$H/launch/$a.pid")
	grep -Eq "^  $a +pid $pid +running" "$T/status.txt" || fail "$a (pid $pid) not listed as running"
done
grep -Eq "^  coordinator +pid $coord +dead" "$T/status.txt" || fail "the dead coordinator is not named"
grep -Eq "^  its process is dead \(pid $coord," "$T/status.txt" ||
	fail "status does not say under its first line that the coordinator is dead"

# A dead actor's pid taken by another process: still dead, by identity
# (pid and start time), never "running" because kill(pid, 0) succeeds.
# ns_last_pid steers the next fork onto the coordinator's old pid; other
# processes on the machine may take it first, so try a few times.
#
# The steering and the squatter live in a bash of their own: forks steered
# onto a recently used pid confused this shell's own job table (once, under
# load, a child of it ran the EXIT trap's cleanup and took the test's
# directory away). The squatter is not our child; it is ended by pid.
if [[ -w /proc/sys/kernel/ns_last_pid ]]; then
	squat=$(bash -c '
		for _ in $(seq 1 50); do
			echo $(($1 - 1)) >/proc/sys/kernel/ns_last_pid 2>/dev/null || exit 1
			sleep 600 </dev/null >/dev/null 2>&1 &
			p=$!
			if [[ $p == "$1" ]]; then
				echo "$p"
				exit 0
			fi
			kill "$p" 2>/dev/null
			wait "$p" 2>/dev/null
		done
		exit 1' steer "$coord")
	if [[ -n $squat ]]; then
		B --timeout 2s status >"$T/status.txt" 2>/dev/null && fail "status exit 0 without a coordinator"
		cat "$T/status.txt" >&2
		grep -Eq "^  coordinator +pid $coord +dead .*\(pid reused\)" "$T/status.txt" ||
			fail "a reused pid is taken for the coordinator"
		B --timeout 2s status --json >"$T/st.json" 2>/dev/null || true
		jq -e -s 'any(.. | objects; .source? == "board" and .actor? == "coordinator" and .alive? == false)' \
			"$T/st.json" >/dev/null || fail "json: a reused pid is alive: $(cat "$T/st.json")"
		kill "$squat" 2>/dev/null
	else
		echo "(could not place a process on pid $coord: reuse case not run)" >&2
	fi
fi

# The same from --json: the coordinator's slot is stale, the others not.
B --timeout 2s status --json >"$T/st.json" 2>/dev/null || true
jq -e -s 'any(.. | objects; .source? == "board" and .actor? == "coordinator" and .stale? == true)' \
	"$T/st.json" >/dev/null || fail "json: coordinator not stale: $(cat "$T/st.json")"
jq -e -s 'any(.. | objects; .source? == "board" and .actor? == "supervisor" and .stale? == false)' \
	"$T/st.json" >/dev/null || fail "json: supervisor stale: $(cat "$T/st.json")"

# The trace reads the same with the coordinator down.
B trace --json >"$T/trace.json" || fail "trace with the coordinator down"
jq -e -s 'any(.[]; .verb == "hello" and .from == "supervisor")' "$T/trace.json" >/dev/null ||
	fail "trace lost its records"
echo "ok: status names the dead coordinator from the board"
