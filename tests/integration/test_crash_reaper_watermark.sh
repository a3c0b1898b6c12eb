#!/usr/bin/env bash
# The reaper's retention watermark survives a restart: it is persisted in
# $BERTH_HOME/reaper/retention once run data past --retention is removed
# (past that run's settlement), and a reaper killed with SIGKILL and
# restarted by the launcher resumes from it instead of from the beginning,
# and goes on advancing it.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/crash_lib.bash"

crash_setup watermark
crash_start --slots 2 --lease-ms 1000 --tick-ms 200 --retention 2s

mark() { cat "$H/reaper/retention" 2>/dev/null; }
settled_ms() { db_query "SELECT settled_ms FROM runs WHERE id = '$1'"; }

t1=$(crash_add j1 0 0.1)
crash_wait_settled 30 "$t1"
r1=$(crash_run_id "$t1" 0)
removed() { [[ ! -e $H/runs/$1 ]]; }
wait_until 30 removed "$r1" || fail "run data of $r1 kept past retention"
past() { local m; m=$(mark); [[ $m =~ ^[0-9]+$ ]] && ((m > $1)); }
s1=$(settled_ms "$r1")
wait_until 30 past "$s1" || fail "watermark '$(mark)' not past $r1 settled at $s1"
[[ $(stat -c %a "$H/reaper") == 700 ]] || fail "reaper/ is not 0700"
ls "$H/reaper" | grep -qv '^retention$' && fail "a temp file left in reaper/: $(ls "$H/reaper")"

# A restart reads it back.
old=$(crash_actor_pid reaper)
kill -KILL "$old"
restarted() { local p; p=$(crash_actor_pid reaper); [[ -n $p && $p != "$old" ]] && alive "$p"; }
wait_until 30 restarted || fail "the reaper was not restarted"
resumed() { grep -q "retention: resuming from the watermark" "$H/launch/reaper.log"; }
wait_until 30 resumed || fail "the restarted reaper did not resume from the watermark"
w=$(grep -o "resuming from the watermark [0-9]*" "$H/launch/reaper.log" | tail -1 | awk '{print $NF}')
((w > s1)) || fail "resumed from $w, not past $s1"

# And it goes on: a run settled after the restart has its data removed and
# the watermark passes it.
t2=$(crash_add j2 0 0.1)
crash_wait_settled 30 "$t2"
r2=$(crash_run_id "$t2" 0)
wait_until 30 removed "$r2" || fail "run data of $r2 kept past retention after the restart"
s2=$(settled_ms "$r2")
wait_until 30 past "$s2" || fail "watermark '$(mark)' not past $r2 settled at $s2"
crash_check_job "$t1" j1 0
crash_check_job "$t2" j2 0
crash_invariants
echo ok
