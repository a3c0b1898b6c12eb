#!/usr/bin/env bash
# check_invariants.sh [HOME]: checks a berth home against the invariants
# every test must leave intact (DESIGN §3-4, §9), reading berth.db with the
# sqlite3 CLI and trace/trace.jsonl with jq. Prints one line per violation
# and exits 1 if there is any, 0 otherwise. HOME defaults to $BERTH_HOME.
#
#   1. a run in a terminal state holds no lease, and a lease belongs to its
#      run's ticket;
#   2. no ticket has two unsettled runs;
#   3. a run is nonterminal exactly when settled_ms is NULL;
#   4. the trace holds at most one granted record_exit per run, exactly one
#      for every run that reached running and then ended (aftercare or a
#      terminal outcome other than aborted), none for a run still running,
#      and none for a run the database does not know unless its ticket was
#      removed (berth remove, berth clean);
#   5. no process is left in the process group of a settled run (zombies
#      aside), waiting up to BERTH_CHECK_GROUP_WAIT seconds (5) for the
#      shim's and the reaper's kills to land;
#   6. side effects: for every workdir holding the file named by
#      BERTH_CHECK_RAN (default "ran"; jobs append one line per execution),
#      the file has no more lines than the runs there that were not aborted
#      (an aborted run never executed; any other may have, even one settled
#      from claimed when the store lost its start): a job never runs twice
#      for one run.
#
# Safe to run while the group is up: sqlite3 reads a consistent snapshot
# (WAL), and a torn last trace line (a crash mid-append) is skipped.
set -u

home=${1:-${BERTH_HOME:-}}
[[ -n $home ]] || {
	echo "usage: check_invariants.sh HOME (or set BERTH_HOME)" >&2
	exit 2
}
db=$home/berth.db
url=
[[ -f $home/store ]] && url=$(head -n 1 "$home/store")
trace=$home/trace/trace.jsonl
[[ -n $url || -f $db ]] || {
	echo "check_invariants: no database at $db" >&2
	exit 2
}
bad=0

violation() {
	echo "INVARIANT: $*"
	bad=1
}

# A home on PostgreSQL (DESIGN §13) names its database in $home/store.
q() {
	if [[ -n $url ]]; then
		psql -X -q -A -t -F '|' -v ON_ERROR_STOP=1 "$url" -c "$1"
	else
		sqlite3 -batch -noheader -cmd '.timeout 5000' "$db" "$@"
	fi
}

# Nonterminal run states; everything else is an outcome.
LIVE="('claimed','running','aftercare')"

# 1. Terminal runs hold no lease; a lease names its run's ticket.
while IFS='|' read -r id state; do
	[[ -n $id ]] && violation "run $id is $state but still holds a lease"
done < <(q "SELECT r.id, r.state FROM runs r JOIN leases l ON l.run_id = r.id
	WHERE r.state NOT IN $LIVE OR r.settled_ms IS NOT NULL")
while IFS='|' read -r id t lt; do
	[[ -n $id ]] && violation "lease of run $id is for ticket $lt, the run is of ticket $t"
done < <(q "SELECT r.id, r.ticket, l.ticket_id FROM runs r JOIN leases l ON l.run_id = r.id
	WHERE l.ticket_id != r.ticket")

# 2. At most one unsettled run per ticket.
while IFS='|' read -r t n; do
	[[ -n $t ]] && violation "ticket T$t has $n unsettled runs"
done < <(q "SELECT ticket, count(*) FROM runs WHERE settled_ms IS NULL
	GROUP BY ticket HAVING count(*) > 1")

# 3. Nonterminal <=> settled_ms IS NULL.
while IFS='|' read -r id state s; do
	[[ -n $id ]] && violation "run $id is $state with settled_ms ${s:-NULL}"
done < <(q "SELECT id, state, settled_ms FROM runs
	WHERE (state IN $LIVE) != (settled_ms IS NULL)")

# 4. Granted record_exit per run, from the trace (the arbitration order).
declare -A exits=() exit_ticket=()
if [[ -f $trace ]]; then
	while read -r run ticket; do
		[[ -n $run ]] || continue
		exits[$run]=$((${exits[$run]:-0} + 1))
		exit_ticket[$run]=$ticket
	done < <(jq -R -r 'fromjson? | select(.verb == "record_exit" and .decision == "granted") |
		"\(.run) \(.ticket)"' "$trace")
fi
while IFS='|' read -r id state started; do
	[[ -n $id ]] || continue
	n=${exits[$id]:-0}
	if ((n > 1)); then
		violation "run $id ($state) has $n granted record_exit in the trace"
	elif [[ $state == running ]] && ((n != 0)); then
		violation "run $id is running but its exit was checkpointed"
	elif [[ -n $started && $state != running && $state != aborted ]] && ((n != 1)); then
		violation "run $id reached running and is $state, but has $n granted record_exit"
	fi
done < <(q "SELECT id, state, started_ms FROM runs")
# A run the database does not know is one whose ticket was removed (berth
# remove, berth clean): then its ticket is gone too.
for id in "${!exits[@]}"; do
	t=${exit_ticket[$id]#T}
	[[ -n $(q "SELECT 1 FROM runs WHERE id = '${id//\'/}'") ]] ||
		[[ $t =~ ^[0-9]+$ && -z $(q "SELECT 1 FROM tickets WHERE n = $t") ]] ||
		violation "the trace grants record_exit to run $id, which the database does not know"
done

# 5. Nothing left in the group of a settled run. A member counts when it is
#    not a zombie and is the run's (the leader with the recorded start time,
#    or any process whose environment names the run); a reused group id of
#    an unrelated process does not.
start_time() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	s=${s##*) }
	set -- $s
	echo "${20}"
}
group_members() { # pgid run st: prints the run's live members
	local pg=$1 run=$2 st=$3 d s pid env
	for d in /proc/[0-9]*; do
		pid=${d#/proc/}
		s=$(cat "$d/stat" 2>/dev/null) || continue
		s=${s##*) }
		set -- $s
		[[ $1 != Z && $3 == "$pg" ]] || continue
		if [[ $pid == "$pg" && $(start_time "$pid") == "$st" ]]; then
			echo "$pid"
			continue
		fi
		env=$({ tr '\0' '\n' <"$d/environ"; } 2>/dev/null) || continue
		[[ $env == *"BERTH_RUN_ID=$run"* ]] && echo "$pid"
	done
}
wait_s=${BERTH_CHECK_GROUP_WAIT:-5}
while IFS='|' read -r id pg st; do
	[[ -n $id && -n $pg ]] && ((pg > 1)) || continue
	kill -0 -- "-$pg" 2>/dev/null || continue
	left=
	for ((i = 0; i <= wait_s * 10; i++)); do
		left=$(group_members "$pg" "$id" "$st")
		[[ -z $left ]] && break
		sleep 0.1
	done
	[[ -n $left ]] && violation "settled run $id: group $pg still has processes $(echo $left)"
done < <(q "SELECT id, pgid, coalesce(CAST(start_time AS TEXT), '') FROM runs
	WHERE settled_ms IS NOT NULL AND pgid IS NOT NULL")

# 6. Side effects against runs. Tickets may share a workdir: the file is
#    counted against the runs of every ticket that names it. Upper bound
#    only: a job may die before it writes its line.
ran=${BERTH_CHECK_RAN:-ran}
while IFS='|' read -r wd execd; do
	[[ -n $wd && -f $wd/$ran ]] || continue
	lines=$(wc -l <"$wd/$ran")
	((lines <= execd)) ||
		violation "$wd/$ran records $lines executions for $execd runs that may have executed there"
done < <(q "SELECT t.workdir, count(r.id) FROM tickets t LEFT JOIN runs r ON r.ticket = t.n
	AND r.state != 'aborted' WHERE t.workdir != '' GROUP BY t.workdir")

exit $bad
