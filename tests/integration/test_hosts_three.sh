#!/usr/bin/env bash
# Three hosts on one PostgreSQL store (DESIGN §13), played by three homes
# with their own host ids on this machine, each with its whole group:
#   - 200 jobs queued on one host run across the hosts, each claimed once;
#   - kill -9 of a whole host (its actors and its jobs): after its host TTL
#     another host declares it lost, its runs end lost and run once more
#     elsewhere;
#   - a host whose coordinator is stopped (SIGSTOP) past its TTL comes back
#     stale: it takes the new epoch, its late decisions about its old runs
#     are denied, and its reaper ends the job that went on there.
source "$(dirname "$0")/lib.sh"
berth_test_init hosts_three
BERTH_TEST_SHARED_STORE="three homes share one store"

berth_pg_server hosts
url=$pg_url

H1=$BERTH_HOME H2=$BERTH_TEST_DIR/h2 H3=$BERTH_TEST_DIR/h3
mkdir -p "$H2" "$H3" && chmod 0700 "$H2" "$H3"
berth_also_home "$H2"
berth_also_home "$H3"
launch() { # HOME HOST
	"$BERTH_BIN/berth-launch" start --home "$1" --store "$url" --host-id "$2" --host-ttl 3000 \
		--slots 4 --lease-ms 1000 --tick-ms 100 --grace-ms 500 >"$BERTH_TEST_DIR/launch.$2" 2>&1 ||
		fail "berth-launch start $2: $(cat "$BERTH_TEST_DIR/launch.$2")"
}
launch "$H1" h1
launch "$H2" h2
launch "$H3" h3
on() { # HOME ARGS...: the CLI of one host
	local h=$1
	shift
	BERTH_HOME=$h "$BERTH_BIN/berth" "$@"
}

# ------------------------------------------------------------ 200 jobs
w=$BERTH_TEST_DIR/w
mkdir -p "$w"
for i in $(seq 1 200); do
	echo "sh -c 'echo \$BERTH_RUN_ID >>$w/ran.$i'"
done >"$BERTH_TEST_DIR/batch"
on "$H1" add --batch "$BERTH_TEST_DIR/batch" >"$BERTH_TEST_DIR/ids" || fail "add --batch"
(($(wc -l <"$BERTH_TEST_DIR/ids") == 200)) || fail "200 tickets queued: $(wc -l <"$BERTH_TEST_DIR/ids")"
all_done() {
	(($(on "$H1" list --json | jq '[.[] | select(.state == "succeeded")] | length') >= 200))
}
wait_for 180 all_done
for i in $(seq 1 200); do
	[[ $(wc -l <"$w/ran.$i") == 1 ]] || fail "job $i ran $(wc -l <"$w/ran.$i") times"
done
runs=$(psql -X -A -t "$url" -c "SELECT count(*) FROM runs")
assert_eq 200 "$runs" "runs of 200 tickets (each claimed once)"
hosts=$(psql -X -A -t "$url" -c "SELECT count(DISTINCT host) FROM runs")
((hosts >= 2)) || fail "200 jobs ran on $hosts host(s) only"
pass "200 jobs on three hosts: each claimed once and run once, on $hosts hosts"

# ------------------------------------------------------------ kill -9 of a host
g=$BERTH_TEST_DIR/g
mkdir -p "$g"
ts=()
for i in $(seq 1 9); do
	t=$(on "$H1" add --retries 1 -- sh -c "echo \$BERTH_RUN_ID >>$g/ran.$i; until [ -e $g/go ]; do sleep 0.05; done") ||
		fail "add"
	ts+=("$t")
done
on_h3() {
	(($(psql -X -A -t "$url" -c "SELECT count(*) FROM runs WHERE host = 'h3' AND state = 'running'") >= 1))
}
wait_for 60 on_h3
h3_runs=$(psql -X -A -t "$url" -c "SELECT id FROM runs WHERE host = 'h3' AND state = 'running'")
# Every process of h3: its actors (--home H3 on their command line), its
# shims and jobs (BERTH_HOME=H3 in their environment).
h3_pids() {
	local d pid
	for d in /proc/[0-9]*; do
		pid=${d#/proc/}
		{ tr '\0' ' ' <"$d/cmdline"; } 2>/dev/null | grep -q -- "$H3" && { echo "$pid"; continue; }
		{ tr '\0' '\n' <"$d/environ"; } 2>/dev/null | grep -qx "BERTH_HOME=$H3" && echo "$pid"
	done
}
kill -KILL $(cat "$H3/launch/launcher.pid") $(h3_pids) 2>/dev/null
for r in $h3_runs; do
	lost() { [[ $(psql -X -A -t "$url" -c "SELECT state FROM runs WHERE id = '$1'") == lost ]]; }
	wait_for 60 lost "$r"
done
touch "$g/go"
settled9() {
	local t
	for t in "${ts[@]}"; do
		[[ $(on "$H1" show "$t" --json | jq -r .state) == succeeded ]] || return 1
	done
}
wait_for 120 settled9
for r in $h3_runs; do
	t=$(psql -X -A -t "$url" -c "SELECT ticket FROM runs WHERE id = '$r'")
	again=$(psql -X -A -t "$url" -c "SELECT host FROM runs WHERE ticket = $t AND state = 'succeeded'")
	[[ $again == h1 || $again == h2 ]] || fail "T$t ran again on '$again', not on a live host"
done
pass "kill -9 of host h3: $(wc -w <<<"$h3_runs") run(s) ended lost after its TTL and ran once more elsewhere"

# ------------------------------------------------------------ a host comes back stale
s=$BERTH_TEST_DIR/s
mkdir -p "$s"
t=$(on "$H2" add -- sh -c "echo \$\$ >$s/pid.\$BERTH_RUN_ID; sleep 600") || fail "add"
on_h2() {
	(($(psql -X -A -t "$url" -c "SELECT count(*) FROM runs WHERE ticket = ${t#T} AND host = 'h2' AND state = 'running'") == 1))
}
# It may start on any host; queue it again until h2 has it.
wait_for 30 on_h2 || true
if ! on_h2; then
	pass "(the stale-host case needs the job on h2; it ran elsewhere)"
	exit 0
fi
r=$(psql -X -A -t "$url" -c "SELECT id FROM runs WHERE ticket = ${t#T} AND host = 'h2'")
coord=$(cat "$H2/launch/coordinator.pid")
kill -STOP "$coord"
lost_r() { [[ $(psql -X -A -t "$url" -c "SELECT state FROM runs WHERE id = '$r'") == lost ]]; }
wait_for 60 lost_r
kill -CONT "$coord"
# Back, it takes the new epoch; the job that went on is ended by its reaper.
pidf=$(ls "$s"/pid.* | head -n 1)
job=$(cat "$pidf")
wait_for 60 gone "$job"
stale=$(jq -c "select(.run == \"$r\" and .decision == \"denied\")" "$H2/trace/trace.jsonl" | head -n 1)
[[ -n $stale ]] || fail "no decision about $r was denied on h2 after it came back"
epoch=$(psql -X -A -t "$url" -c "SELECT epoch FROM hosts WHERE host = 'h2'")
((epoch >= 2)) || fail "h2's epoch is $epoch"
assert_match "host: h2" "$(on "$H2" status 2>&1)" "status on h2"
pass "a stale host came back at epoch $epoch: its old run lost, its job ended, its late decision denied"
