#!/usr/bin/env bash
# Placement on one host (docs/MANY-HOSTS.md "Placement", docs/CLI.md):
#   - every bad --host / --on (add, edit) and --labels (the launcher, the
#     coordinator) is refused before anything is sent or started: a message
#     on stderr that names the option, a non-zero exit, nothing on stdout,
#     nothing queued;
#   - a group launched with --labels runs what it may take; a ticket for
#     another host or a label it does not offer waits, and show, list and
#     --json say why and what it asks; status shows the host's labels;
#   - edit moves a waiting ticket to where it can run.
source "$(dirname "$0")/lib.sh"
berth_test_init cli_place
tmp=$BERTH_TEST_DIR

# refused RC ARGS...: the berth CLI exits RC with a message and no output.
refused() {
	local want=$1
	shift
	"$BERTH_BIN/berth" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	[[ $rc == "$want" ]] || fail "berth $*: exit $rc, want $want ($(cat "$tmp/err"))"
	[[ -s $tmp/err ]] || fail "berth $*: nothing on stderr"
	[[ ! -s $tmp/out ]] || fail "berth $*: stdout not empty: $(cat "$tmp/out")"
}
long=$(printf 'x%.0s' $(seq 1 65))
many=$(seq -s, -f 'l%g' 1 17)

# Checked before the coordinator is asked: none runs yet.
refused 2 add --on "" -- true
assert_match "--on: an empty name" "$(cat "$tmp/err")" "empty --on"
refused 2 add --on gpu, -- true
refused 2 add --on gpu,,ssd -- true
refused 2 add --on "g pu" -- true
assert_match "--on: 'g\?pu' holds a character other than" "$(cat "$tmp/err")" "a space"
refused 2 add --on $'gpu\e[2J' -- true
[[ $(cat "$tmp/err") != *$'\e'* ]] || fail "an escape reached the terminal: $(cat -v "$tmp/err")"
refused 2 add --on "gpu/x" -- true
refused 2 add --on gpu,ssd,gpu -- true
assert_match "label 'gpu' is given twice" "$(cat "$tmp/err")" "duplicate"
refused 2 add --on "$long" -- true
assert_match "65 bytes; a name is at most 64" "$(cat "$tmp/err")" "too long"
refused 2 add --on "$many" -- true
assert_match "more than 16 labels" "$(cat "$tmp/err")" "too many"
refused 2 add --host "" -- true
assert_match "--host: an empty name" "$(cat "$tmp/err")" "empty --host"
refused 2 add --host a,b -- true
assert_match "--host takes one host id" "$(cat "$tmp/err")" "a list"
refused 2 add --host "a b" -- true
refused 2 add --host "$long" -- true
refused 2 edit T1 --on gpu,gpu
refused 2 edit T1 --host "x;y"
refused 2 edit T1 --anywhere --on gpu
refused 2 edit T1 --host h --anywhere
# launched_refused ARGS...: the launcher refuses them and starts nothing.
launch_refused() {
	"$BERTH_BIN/berth-launch" start --home "$BERTH_HOME" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[[ $rc != 0 ]] || fail "berth-launch start $*: started"
	assert_match "^berth-launch: --labels" "$(cat "$tmp/err")" "berth-launch $*"
	[[ ! -e $BERTH_HOME/launch/launcher.pid ]] || fail "berth-launch $*: a monitor started"
}
launch_refused --labels ""
launch_refused --labels gpu,gpu
launch_refused --labels "g pu"
launch_refused --labels "$long"
launch_refused --labels "$many"
for bad in "" gpu,gpu "a b" "$many"; do
	"$BERTH_BIN/berth-coordinator" --home "$BERTH_HOME" --labels "$bad" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	assert_eq 2 "$rc" "berth-coordinator --labels '$bad'"
	assert_match "^berth-coordinator: --labels" "$(cat "$tmp/err")" "coordinator --labels '$bad'"
done
pass "bad --host, --on and --labels refused with the reason, nothing started"

berth_launch --host-id here --labels gpu,ssd
# The same checks with a coordinator to ask: still refused by the CLI, and
# nothing queued.
refused 2 add --on gpu,gpu -- true
refused 2 add --host "" -- true
assert_eq 0 "$(berth list --json | jq length)" "tickets after refused adds"

w=$tmp/w
mkdir -p "$w"
t_gpu=$(berth add --on gpu -- touch "$w/gpu") || fail "add --on gpu"
t_both=$(berth add --host here --on ssd,gpu -- touch "$w/both") || fail "add --host here --on ssd,gpu"
t_big=$(berth add --on big -- touch "$w/big") || fail "add --on big"
t_other=$(berth add --host there -- touch "$w/other") || fail "add --host there"
t_any=$(berth add -- touch "$w/any") || fail "add"
wait_for 30 ticket_is "$t_gpu" succeeded
wait_for 30 ticket_is "$t_both" succeeded
wait_for 30 ticket_is "$t_any" succeeded
# What this host may not take stays queued: a few ticks of the supervisor.
never_within 2 test -e "$w/big" || fail "the --on big job ran on a host without big"
[[ ! -e $w/other ]] || fail "the --host there job ran here"
assert_eq ready "$(berth show "$t_big" --json | jq -r .state)" "$t_big"
assert_eq "no live host offers label big" "$(berth show "$t_big" --json | jq -r .waiting)" \
	"$t_big waiting"
assert_eq "host there is not live" "$(berth show "$t_other" --json | jq -r .waiting)" \
	"$t_other waiting"
assert_match "placement: label big" "$(berth show "$t_big")" "show $t_big"
assert_match "waiting: +no live host offers label big" "$(berth show "$t_big")" "show $t_big"
assert_match "placement: host here, labels ssd,gpu" "$(berth show "$t_both")" "show $t_both"
assert_eq '"here" ["ssd","gpu"] "here"' \
	"$(berth show "$t_both" --json | jq -c '.host_wanted, .labels, .runs[0].host' | tr '\n' ' ' | sed 's/ $//')" \
	"show --json $t_both"
assert_eq 'null []' "$(berth show "$t_any" --json | jq -c '.host_wanted, .labels' | tr '\n' ' ' | sed 's/ $//')" \
	"show --json of a ticket without placement"
assert_match "$t_other .*host there is not live" "$(berth list)" "list"
assert_match "host: here \(labels gpu,ssd\)" "$(berth status)" "status"
assert_eq '["gpu","ssd"]' "$(berth status --json | jq -c '.hosts[] | select(.self) | .labels')" \
	"status --json labels"
pass "a host with labels runs what it may take; the rest waits and says why"

berth edit "$t_big" --on ssd >/dev/null || fail "edit --on ssd"
berth edit "$t_other" --anywhere >/dev/null || fail "edit --anywhere"
wait_for 30 ticket_is "$t_big" succeeded
wait_for 30 ticket_is "$t_other" succeeded
assert_eq '["ssd"]' "$(berth show "$t_big" --json | jq -c .labels)" "edited labels"
assert_eq null "$(berth show "$t_other" --json | jq -c .host_wanted)" "edited host"
check_invariants
pass "edit moved the waiting tickets to where they run"
