#!/usr/bin/env bash
# Placement across hosts on one PostgreSQL store (docs/MANY-HOSTS.md
# "Placement"), played by homes with their own host ids on this machine,
# each with its whole group (as test_hosts_three):
#   - host a is launched with --labels gpu, host b without: tickets queued on
#     b with --on gpu run only on a, --host b only on b, plain ones anywhere;
#   - a ticket asking for a label no host offers stays queued, and show and
#     list on either host say why; a host launched with that label runs it;
#   - a retry keeps the placement: kill -9 of host a while it runs a --on gpu
#     job (--retries 1): the run ends lost after a's TTL and runs again on
#     the other gpu host, never on b.
source "$(dirname "$0")/lib.sh"
berth_test_init hosts_place
BERTH_TEST_SHARED_STORE="three homes share one store"

berth_pg_server place
url=$pg_url

# b is this test's own home (a is killed below, and this shell has
# BERTH_HOME set to its own home).
HA=$BERTH_TEST_DIR/ha HB=$BERTH_HOME HC=$BERTH_TEST_DIR/hc
mkdir -p "$HA" "$HC" && chmod 0700 "$HA" "$HC"
berth_also_home "$HA"
berth_also_home "$HC"
launch() { # HOME HOST [ARGS...]
	local h=$1 id=$2
	shift 2
	"$BERTH_BIN/berth-launch" start --home "$h" --store "$url" --host-id "$id" --host-ttl 3000 \
		--slots 4 --lease-ms 1000 --tick-ms 100 --grace-ms 500 "$@" >"$BERTH_TEST_DIR/launch.$id" 2>&1 ||
		fail "berth-launch start $id: $(cat "$BERTH_TEST_DIR/launch.$id")"
}
on() { # HOME ARGS...: the CLI of one host
	local h=$1
	shift
	BERTH_HOME=$h "$BERTH_BIN/berth" "$@"
}
sql() {
	psql -X -A -t "$url" -c "$1"
}
launch "$HA" a --labels gpu
launch "$HB" b
assert_eq gpu "$(sql "SELECT labels FROM hosts WHERE host = 'a'")" "a's labels in the store"
assert_eq "" "$(sql "SELECT labels FROM hosts WHERE host = 'b'")" "b's labels in the store"

# ------------------------------------------------------------ where each runs
w=$BERTH_TEST_DIR/w
mkdir -p "$w"
gpu=() onb=() any=()
for i in $(seq 1 6); do
	gpu+=("$(on "$HB" add --on gpu -- touch "$w/gpu.$i")") || fail "add --on gpu"
	onb+=("$(on "$HB" add --host b -- touch "$w/b.$i")") || fail "add --host b"
	any+=("$(on "$HB" add -- touch "$w/any.$i")") || fail "add"
done
settled() {
	local t
	for t in "$@"; do
		[[ $(on "$HB" show "$t" --json | jq -r .state) == succeeded ]] || return 1
	done
}
wait_for 90 settled "${gpu[@]}" "${onb[@]}" "${any[@]}"
ran_on() { # TICKET: the hosts its runs ran on
	sql "SELECT string_agg(host, ',' ORDER BY attempt) FROM runs WHERE ticket = ${1#T}"
}
for t in "${gpu[@]}"; do
	assert_eq a "$(ran_on "$t")" "$t (--on gpu) ran on"
done
for t in "${onb[@]}"; do
	assert_eq b "$(ran_on "$t")" "$t (--host b) ran on"
done
assert_eq '"a" ["gpu"]' "$(on "$HA" show "${gpu[0]}" --json | jq -c '.runs[0].host, .labels' | tr '\n' ' ' | sed 's/ $//')" \
	"show --json of ${gpu[0]} on a"
assert_match "placement: host b" "$(on "$HA" show "${onb[0]}")" "show of ${onb[0]} on a"
assert_match "a +epoch 1 +lease live +labels gpu" "$(on "$HB" status)" "status on b"
pass "--on gpu ran only on a, --host b only on b (6 each, queued on b)"

# ------------------------------------------------------------ a label nobody offers
t_tpu=$(on "$HB" add --on tpu -- touch "$w/tpu") || fail "add --on tpu"
never_within 3 test -e "$w/tpu" || fail "the --on tpu job ran with no host offering tpu"
assert_eq ready "$(on "$HA" show "$t_tpu" --json | jq -r .state)" "$t_tpu state"
assert_eq 0 "$(sql "SELECT count(*) FROM runs WHERE ticket = ${t_tpu#T}")" "runs of $t_tpu"
assert_eq "no live host offers label tpu" "$(on "$HA" show "$t_tpu" --json | jq -r .waiting)" \
	"why $t_tpu waits (on a)"
assert_match "waiting: +no live host offers label tpu" "$(on "$HB" show "$t_tpu")" "show on b"
assert_match "$t_tpu .*no live host offers label tpu" "$(on "$HB" list)" "list on b"
launch "$HC" c --labels tpu,gpu
wait_for 60 settled "$t_tpu"
assert_eq c "$(ran_on "$t_tpu")" "$t_tpu ran on"
pass "a ticket for a label no host offered waited and said why, then ran on the host launched with it"

# ------------------------------------------------------------ a retry keeps its placement
g=$BERTH_TEST_DIR/g
mkdir -p "$g"
# Host c is stopped for this part, so a is the one gpu host: the job starts
# there, and its retry has c (launched again) as the one gpu host left.
"$BERTH_BIN/berth-launch" stop --home "$HC" >/dev/null 2>&1 || fail "stop c"
t=$(on "$HB" add --on gpu --retries 1 -- sh -c "echo \$BERTH_RUN_ID >>$g/ran; until [ -e $g/go ]; do sleep 0.05; done") ||
	fail "add"
running_on_a() {
	(($(sql "SELECT count(*) FROM runs WHERE ticket = ${t#T} AND host = 'a' AND state = 'running'") == 1))
}
wait_for 60 running_on_a
r=$(sql "SELECT id FROM runs WHERE ticket = ${t#T} AND host = 'a'")
# Every process of a: its actors (--home HA on their command line), its
# shims and jobs (BERTH_HOME=HA in their environment).
a_pids() {
	local d pid
	for d in /proc/[0-9]*; do
		pid=${d#/proc/}
		{ tr '\0' ' ' <"$d/cmdline"; } 2>/dev/null | grep -q -- "$HA " && { echo "$pid"; continue; }
		{ tr '\0' '\n' <"$d/environ"; } 2>/dev/null | grep -qx "BERTH_HOME=$HA" && echo "$pid"
	done
}
kill -KILL $(cat "$HA/launch/launcher.pid") $(a_pids) 2>/dev/null
lost() { [[ $(sql "SELECT state FROM runs WHERE id = '$r'") == lost ]]; }
wait_for 60 lost
# Ready again, with b the only live host: it stays queued there.
never_within 2 test "$(sql "SELECT count(*) FROM runs WHERE ticket = ${t#T}")" -gt 1 ||
	fail "the retry of $t was claimed with no gpu host live"
assert_eq "no live host offers label gpu" "$(on "$HB" show "$t" --json | jq -r .waiting)" "why $t waits"
touch "$g/go"
launch "$HC" c --labels tpu,gpu
wait_for 60 settled "$t"
assert_eq a,c "$(ran_on "$t")" "$t's attempts ran on"
assert_eq "lost,succeeded" "$(sql "SELECT string_agg(state, ',' ORDER BY attempt) FROM runs WHERE ticket = ${t#T}")" \
	"$t's runs"
pass "kill -9 of host a: the --on gpu run ended lost and its retry waited for a gpu host, never ran on b"
