#!/usr/bin/env bash
# Identity decides, never a pid alone:
# - pid reuse: a run whose shim died while berth was down, its recorded pid
#   now held by an unrelated live process (the runs row forged to point at
#   it, start time unchanged). The run settles orphaned, and that process
#   is never signalled, though the run is past its timeout.
# - another boot: a run whose recorded boot id is not this boot's settles
#   orphaned without its (still running) processes being touched: every
#   process of a previous boot is dead for berth.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/crash_lib.bash"

crash_setup forged
crash_start --slots 4 --lease-ms 1000 --tick-ms 200 --grace-ms 300

mkdir -p "$T/w/reuse" "$T/w/boot"
ta=$(B add --name reuse --workdir "$T/w/reuse" -- sh -c 'echo ran >>ran; exec sleep 300')
tb=$(B add --name boot --workdir "$T/w/boot" -- sh -c 'echo ran >>ran; exec sleep 300')
running() { (($(db_query "SELECT count(*) FROM runs WHERE state = 'running'") == 2)); }
wait_until 30 running || fail "jobs did not start"
ra=$(crash_run_id "$ta" 0)
rb=$(crash_run_id "$tb" 0)
IFS='|' read -r pga sta < <(db_query "SELECT pgid, start_time FROM runs WHERE id = '$ra'")
IFS='|' read -r pgb stb < <(db_query "SELECT pgid, start_time FROM runs WHERE id = '$rb'")

# A graceful stop leaves the jobs running.
"$T/bin/berth-launch" stop --home "$H" >/dev/null 2>&1 || fail "berth-launch stop"
kill -0 -- "-$pga" 2>/dev/null && kill -0 -- "-$pgb" 2>/dev/null ||
	fail "a graceful stop ended jobs"

# reuse: the job's group dies with berth down; a stranger gets "its" pid.
kill -KILL -- "-$pga"
gone() { ! kill -0 -- "-$pga" 2>/dev/null; }
wait_until 10 gone || fail "could not end the first job"
(exec setsid sleep 1000) &
stranger=$!
wait_until 10 test -n "$(start_time "$stranger")" || fail "no stranger"
[[ $(start_time "$stranger") != "$sta" ]] || fail "same start time by chance"
db_query "UPDATE runs SET pid = $stranger, pgid = $stranger, timeout_ms = 1000
	WHERE id = '$ra'" || fail "forging the pid"

# boot: the job lives on, but its row says it belongs to another boot.
db_query "UPDATE runs SET boot_id = '00000000-0000-4000-8000-000000000000',
	timeout_ms = 1000 WHERE id = '$rb'" || fail "forging the boot id"

crash_start --slots 4 --lease-ms 1000 --tick-ms 200 --grace-ms 300
crash_wait_settled 30 "$ta" "$tb"
for t in "$ta" "$tb"; do
	json=$(B show "$t" --json)
	[[ $(jq -r '.runs[0].state' <<<"$json") == orphaned ]] || fail "$t: $json"
	[[ $(jq -c '.runs[0].exit_code' <<<"$json") == null ]] || fail "$t: exit code: $json"
done
# Let the reaper have a few ticks at the settled runs, past their timeout.
sleep 1.5
alive "$stranger" || fail "the process on the reused pid was signalled"
[[ $(start_time "$stranger") != "$sta" ]] || fail "stranger identity"
kill -0 -- "-$pgb" 2>/dev/null || fail "the job of the 'previous boot' was signalled"
[[ $(start_time "$pgb") == "$stb" ]] || fail "the previous-boot job's leader changed"
n=$(jq -r --arg a "$ra" --arg b "$rb" 'select((.run == $a or .run == $b) and .verb == "mark_stop") | .seq' \
	"$H/trace/trace.jsonl" | wc -l)
[[ $n == 0 ]] || fail "the reaper marked a timeout on a dead identity"
[[ $(crash_trace "$ra" record_exit) == recovery:granted ]] || fail "reuse: $(crash_trace "$ra" record_exit)"
[[ $(crash_trace "$rb" record_exit) == recovery:granted ]] || fail "boot: $(crash_trace "$rb" record_exit)"
kill -KILL "$stranger" 2>/dev/null
wait "$stranger" 2>/dev/null
kill -KILL -- "-$pgb" 2>/dev/null
crash_invariants
echo ok
