#!/usr/bin/env bash
# satelle's lease package, item by item, through `berth seat` against the
# real group (docs/SEATS.md maps each item): the in-flight transition
# (dedupe, confirm, clear, healing by TTL and by a dead process), kinds and
# states, task leases, any-active, activity with its age, stop with its
# requester, release of a missing seat, the trimmed BERTH_OWNER, the
# default owner that lives by its heartbeat, and the rule between a run's
# key and explicit seats of other keys.
set -u
source "$(dirname "$0")/lib.sh"
berth_test_init cli_seat_lease
unset BERTH_OWNER
berth_launch --slots 2
run() {
	"$BERTH_BIN/berth" "$@" >"$BERTH_TEST_DIR/out" 2>"$BERTH_TEST_DIR/err"
	rc=$?
	out=$(cat "$BERTH_TEST_DIR/out")
	err=$(cat "$BERTH_TEST_DIR/err")
}
js() { B seat show "$1" --json | jq -c "$2"; }
me="$(id -un)@$(hostname)"
sleepers=()
# sleeper: a process to name with --pid, in $p (not a command substitution,
# which would wait for its output to close).
sleeper() {
	sleep 300 </dev/null >/dev/null 2>&1 &
	p=$!
	sleepers+=("$p")
}

# ------------------------------------------------------------------ in flight
# A second engage while one is in flight is deduped: exit 1, "in_flight".
run seat acquire story --in-flight --kind story --state planning --owner alice
[[ $rc == 0 && $out == acquired ]] || fail "in-flight acquire: rc=$rc out=$out err=$err"
assert_eq '[true,"story","planning"]' "$(js story '[.in_flight, .kind, .state]')" "the mark"
run seat acquire story --in-flight --owner alice
[[ $rc == 1 && -z $out ]] || fail "second engage: rc=$rc out=$out"
assert_match "in_flight: a transition is already in flight: alice \(seat story, in flight for" "$err"
assert_match "berth seat confirm story STATE, or berth seat clear story" "$err"
# a plain acquire by the holder still holds; someone else meets a conflict
run seat acquire story --owner alice
[[ $rc == 0 && $out == already_held ]] || fail "plain acquire by the holder: rc=$rc $out"
run seat acquire story --in-flight --owner bob
[[ $rc == 1 ]] && grep -q "conflict: held by alice" <<<"$err" || fail "other owner: rc=$rc $err"
# activity while in flight, with its age
run seat activity story 1/3 gate --owner alice
[[ $rc == 0 ]] || fail "activity: $err"
assert_eq '[1,3,"gate"]' "$(js story '.activity | [.index, .total, .label]')" "activity"
[[ $(js story '.activity.age_ms >= 0 and .activity.at_ms > 0') == true ]] ||
	fail "activity age: $(js story .activity)"
B seat show story | grep -q "activity:  .* 1/3 gate (" || fail "show: activity age: $(B seat show story)"

# Confirm: the state the transition committed; the mark and its activity go.
run seat confirm story implementing --owner bob
[[ $rc == 1 ]] && grep -q "not_owner" <<<"$err" || fail "confirm by another owner: rc=$rc $err"
run seat confirm story implementing --owner alice
[[ $rc == 0 && $out == confirmed ]] || fail "confirm: rc=$rc out=$out err=$err"
assert_eq '[false,"implementing",null]' "$(js story '[.in_flight, .state, .activity]')" "confirmed"
run seat acquire story --in-flight --owner alice
[[ $rc == 0 && $out == already_held ]] || fail "engage after confirm: rc=$rc $out $err"
# Clear: the mark goes, the state stays.
run seat clear story --owner alice
[[ $rc == 0 && $out == cleared ]] || fail "clear: rc=$rc $out $err"
assert_eq '[false,"implementing"]' "$(js story '[.in_flight, .state]')" "cleared"
run seat acquire story --in-flight --owner alice
[[ $rc == 0 && $out == already_held ]] || fail "engage after clear: rc=$rc $out $err"
run seat clear nothing-here --owner alice
[[ $rc == 0 && $out == already_free ]] || fail "clear of a missing seat: rc=$rc $out $err"
run seat confirm nothing-here done --owner alice
[[ $rc == 1 ]] || fail "confirm of a missing seat: rc=$rc"
B seat release story --owner alice >/dev/null || fail "release story"

# Healing by TTL: a mark older than --in-flight-ttl is not in flight.
run seat acquire ttl --key heal --in-flight --in-flight-ttl 1s --owner alice
[[ $rc == 0 ]] || fail "ttl acquire: $err"
assert_eq 1000 "$(js ttl .in_flight_ttl_ms)" "in_flight_ttl_ms"
healed() { [[ $(js "$1" '[.in_flight, .in_flight_healed, .stale]') == '[false,true,false]' ]]; }
wait_until 10 healed ttl || fail "the mark did not heal by its TTL: $(B seat show ttl --json)"
B seat show ttl | grep -q "in flight: healed" || fail "show: healed: $(B seat show ttl)"
run seat acquire ttl --key heal --in-flight --owner alice
[[ $rc == 0 && $out == already_held ]] || fail "engage after the TTL: rc=$rc $out $err"

# Healing by a dead process: the mark's process dies, the mark heals at
# once, while the owner (no process of its own) keeps the seat.
sleeper
run seat acquire pid --key heal --in-flight --in-flight-pid "$p" --owner alice
[[ $rc == 0 ]] || fail "pid acquire: $err"
assert_eq "[true,$p,null]" "$(js pid '[.in_flight, .in_flight_pid, .owner_pid]')" "the mark's process"
run seat acquire pid --key heal --in-flight --owner alice
[[ $rc == 1 ]] && grep -q "in_flight" <<<"$err" || fail "live mark: rc=$rc $err"
kill "$p"
wait "$p" 2>/dev/null
healed pid || fail "the mark of a dead process did not heal: $(B seat show pid --json)"
run seat acquire pid --key heal --in-flight --owner alice
[[ $rc == 0 && $out == already_held ]] || fail "engage after the process died: rc=$rc $out $err"
run seat acquire pid2 --key heal --in-flight --in-flight-pid 2147483646 --owner alice
[[ $rc == 2 ]] && grep -q "no such process" <<<"$err" || fail "a pid that does not exist: rc=$rc $err"
B seat release ttl --owner alice >/dev/null && B seat release pid --owner alice >/dev/null ||
	fail "release heal seats"

# ------------------------------------------------------------------ tasks
# A task lease is visible, never blocked and never blocking.
run seat acquire solo --owner alice
[[ $rc == 0 ]] || fail "solo: $err"
run seat acquire review --task --kind task --owner bob --workdir "$BERTH_TEST_DIR"
[[ $rc == 0 && $out == acquired ]] || fail "a task is never blocked: rc=$rc $err"
assert_eq '[true,"task"]' "$(js review '[.task, .kind]')" "task seat"
B seat list | grep -q "^review .* task" || fail "list does not mark the task: $(B seat list)"
run seat acquire other --owner carol
[[ $rc == 1 ]] && grep -q "held by alice (seat solo" <<<"$err" || fail "the conflict is alice's: $err"
B seat release solo --owner alice >/dev/null || fail "release solo"
run seat acquire other --owner carol --workdir "$BERTH_TEST_DIR"
[[ $rc == 0 ]] || fail "a task blocks neither key nor tree: rc=$rc $err"
B seat release other --owner carol >/dev/null || fail "release other"

# ------------------------------------------------------------------ any-active
run seat any-active
[[ $rc == 0 && -z $out ]] || fail "any-active with the task live: rc=$rc out=$out"
assert_eq '["review"]' "$(B seat any-active --json | jq -c 'map(.item)')" "any-active --json"
sleeper
run seat acquire doomed --key d --pid "$p" --owner dora
kill "$p"
wait "$p" 2>/dev/null
assert_eq '["review"]' "$(B seat any-active --json | jq -c 'map(.item)')" "a stale seat is not active"
B seat release review --owner bob >/dev/null || fail "release review"
B seat force-release doomed >/dev/null || fail "force-release doomed"
run seat any-active
[[ $rc == 1 && -z $out && -z $err ]] || fail "any-active with nothing live: rc=$rc out=$out err=$err"
run seat any-active --json
[[ $rc == 1 && $out == "[]" ]] || fail "any-active --json with nothing live: rc=$rc out=$out"
run --home "$BERTH_TEST_DIR/nowhere" seat any-active
[[ $rc == 2 ]] || fail "any-active without a group: rc=$rc (want 2: cannot say)"

# ------------------------------------------------------------------ release, stop, owner
run seat release never-was
[[ $rc == 0 && $out == already_free ]] || fail "release of a missing seat: rc=$rc $out $err"
run seat force-release never-was
[[ $rc == 0 && $out == already_free ]] || fail "force-release of a missing seat: rc=$rc $out $err"

# stop records who asked and when
B seat acquire wrap --owner alice >/dev/null || fail "wrap"
run seat stop wrap --reason "need it" --by "  bob  "
[[ $rc == 0 ]] || fail "stop: $err"
assert_eq '["need it","bob",true]' "$(js wrap '[.stop_reason, .stop_by, .stop_ms > 0]')" "stop"
B seat show wrap | grep -q "stop:      requested by bob .*: need it" || fail "show stop: $(B seat show wrap)"
BERTH_OWNER=carol run seat stop wrap --reason again
assert_eq '"carol"' "$(js wrap .stop_by)" "the requester defaults to the caller's owner"
B seat release wrap --owner alice >/dev/null || fail "release wrap"

# BERTH_OWNER is trimmed: the padded name is the same owner.
BERTH_OWNER="  alice
" run seat acquire trim
[[ $rc == 0 ]] || fail "trimmed acquire: $err"
assert_eq '"alice"' "$(js trim .owner)" "trimmed owner"
BERTH_OWNER=alice run seat release trim
[[ $rc == 0 && $out == released ]] || fail "release by the trimmed name: rc=$rc $out $err"
BERTH_OWNER="   " run seat acquire blank
assert_eq "\"$me\"" "$(js blank .owner)" "a blank BERTH_OWNER is the default"
B seat release blank >/dev/null || fail "release blank"

# The default owner lives by its heartbeat, not by a process: a seat taken
# from a shell that exits at once is live, and the next shell of the same
# session holds it too; without heartbeats it goes stale at its TTL.
sh -c "'$BERTH_BIN/berth' seat acquire agent --ttl 2s" >/dev/null || fail "acquire from a shell"
assert_eq '[false,null]' "$(js agent '[.stale, .owner_pid]')" "a seat whose shell exited"
out=$(sh -c "'$BERTH_BIN/berth' seat acquire agent --ttl 2s") || fail "the next shell"
assert_eq already_held "$out" "the next shell of the session"
for i in 1 2 3; do
	sleep 1
	sh -c "'$BERTH_BIN/berth' seat heartbeat agent" >/dev/null || fail "heartbeat $i"
done
assert_eq false "$(js agent .stale)" "a seat kept by heartbeats past its TTL"
# Stale, or already reaped (the reaper removes stale seats).
stale_or_gone() {
	local js
	js=$("$BERTH_BIN/berth" seat show agent --json 2>/dev/null) || return 0
	[[ $(jq .stale <<<"$js") == true ]]
}
wait_until 10 stale_or_gone || fail "a seat without heartbeats did not go stale"
# --pid still ties it to a process
sleeper
B seat acquire tied --pid "$p" >/dev/null || fail "tied"
assert_eq "[false,$p]" "$(js tied '[.stale, .owner_pid]')" "--pid"
kill "$p"
wait "$p" 2>/dev/null
# Stale at once, or already reaped (the reaper's tick may come first).
tied_stale_or_gone() {
	local js
	js=$("$BERTH_BIN/berth" seat show tied --json 2>/dev/null) || return 0
	[[ $(jq .stale <<<"$js") == true ]]
}
tied_stale_or_gone || fail "a --pid seat whose process died is not stale: $(js tied .stale)"
B seat force-release tied >/dev/null

# ------------------------------------------------------------------ key vs seat
# An explicit single-occupancy seat keeps keyed jobs out (DESIGN §8's key
# rule between a run and an explicit seat); a job without a key is not
# kept out by keys; released, the keyed job runs.
B seat acquire freeze --owner alice >/dev/null || fail "freeze"
k=$(B add --key build -- true) || fail "add keyed"
u=$(B add -- true) || fail "add unkeyed"
wait_for 30 ticket_is "$u" succeeded
waits() { B show "$k" --json | jq -r .waiting | grep -q "seat freeze, owner alice, admits only key freeze"; }
wait_for 20 waits
assert_eq 0 "$(B show "$k" --json | jq '.runs | length')" "the keyed job ran beside the seat"
B seat release freeze --owner alice >/dev/null || fail "release freeze"
wait_for 30 ticket_is "$k" succeeded
# and a running keyed job keeps a single-occupancy seat out
g=$BERTH_TEST_DIR/gate
k2=$(B add --key build -- sh -c "while [ ! -e '$g' ]; do sleep 0.05; done") || fail "add k2"
wait_for 30 run_is "$k2" 0 running
run seat acquire freeze --owner alice
[[ $rc == 1 ]] && grep -q "conflict: held by .* (seat build" <<<"$err" ||
	fail "a keyed run must keep a single seat out: rc=$rc $err"
run seat acquire helper --key build --owner alice
[[ $rc == 0 ]] || fail "a holder of the run's key comes in beside it: rc=$rc $err"
B seat release helper --owner alice >/dev/null
touch "$g"
wait_for 30 ticket_is "$k2" succeeded

for p in "${sleepers[@]}"; do kill "$p" 2>/dev/null; done
check_invariants
pass "satelle's lease items through berth seat"
