#!/usr/bin/env bash
# Jobs that cannot be executed settle failed with a reason anyone can read
# in `berth show`, and the supervisor carries on with the next job: a
# missing executable (exit 127), a workdir that vanished before the run
# (126), a run whose directory cannot be made, and a supervisor whose
# berth-shim is missing altogether.
set -u
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/supervise_lib.bash"
supervise_init spawnerr

# The copied supervisor below runs from another directory than the
# group's actors: the coordinator is told it is one of the group's.
start_coord --allow-actor-exe "$tmp/noshim/berth-supervisor"

mkdir "$tmp/wd"
t1=$(B add -- /nonexistent/berth-no-such-command arg) || fail "add"
t2=$(B add --workdir "$tmp/wd" -- touch "$tmp/ran-in-gone-workdir") || fail "add"
t3=$(B add -- sh -c 'echo next > "$1"' sh "$tmp/next") || fail "add"
rmdir "$tmp/wd"
start_sup --tick-ms 200

bwait "$t3" || fail "the job after the failures did not succeed"
bwait "$t1" "$t2"
[ $? -eq 1 ] || fail "failed spawns must make wait exit 1"

expect "$t1" .state '"failed"'
expect "$t1" '.runs[0].state' '"failed"'
expect "$t1" '.runs[0].exit_code' 127
reason=$(jqshow "$t1" '.runs[0].reason')
[[ $reason == *"exec /nonexistent/berth-no-such-command"*"No such file or directory"* ]] ||
	fail "missing executable: reason '$reason'"
B show "$t1" | grep -q "berth-no-such-command" || fail "the reason is not in berth show"

expect "$t2" .state '"failed"'
expect "$t2" '.runs[0].exit_code' 126
reason=$(jqshow "$t2" '.runs[0].reason')
[[ $reason == *"chdir $tmp/wd"* ]] || fail "missing workdir: reason '$reason'"
[ ! -e "$tmp/ran-in-gone-workdir" ] || fail "the job ran without its workdir"

[ "$(cat "$tmp/next")" = next ] || fail "the next job did not run"
kill -0 "$sup" || fail "supervisor died"

# A run that cannot be set up at all (runs/ is a file, so its directory
# cannot be made): on the fast path the claim has already recorded it
# running with a shim spawned ahead; it fails with the reason, once, as a
# failed spawn does, and is not given back to be claimed again forever.
mv "$BERTH_HOME/runs" "$tmp/runs.saved"
touch "$BERTH_HOME/runs"
t5=$(B add -- true) || fail "add"
bwait "$t5"
[ $? -eq 1 ] || fail "a run that cannot be set up must fail"
expect "$t5" '[.runs[].state]' '["failed"]'
reason=$(jqshow "$t5" '.runs[0].reason')
[[ $reason == *"mkdir $BERTH_HOME/runs/"*"Not a directory"* ]] || fail "no run dir: reason '$reason'"
rm "$BERTH_HOME/runs"
mv "$tmp/runs.saved" "$BERTH_HOME/runs"

# A supervisor without a berth-shim next to it: the spawn itself fails.
kill "$sup"
wait "$sup"
sup=
mkdir "$tmp/noshim"
cp "$BIN/berth-supervisor" "$tmp/noshim/"
"$tmp/noshim/berth-supervisor" --home "$BERTH_HOME" --tick-ms 200 2>>"$tmp/supervisor.log" &
sup=$!
t4=$(B add -- true) || fail "add"
bwait "$t4"
[ $? -eq 1 ] || fail "a spawn without shim must fail"
expect "$t4" '.runs | length' 1
expect "$t4" '.runs[0].state' '"failed"'
reason=$(jqshow "$t4" '.runs[0].reason')
[[ $reason == *"$tmp/noshim/berth-shim"*"No such file"* ]] || fail "no shim: reason '$reason'"
kill -0 "$sup" || fail "supervisor died after a failed spawn"
echo PASS
