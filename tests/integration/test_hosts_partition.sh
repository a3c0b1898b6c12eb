#!/usr/bin/env bash
# A network partition between one host and the store (DESIGN §13): host h2
# runs in a network namespace of its own and reaches the PostgreSQL server
# over a veth pair; h1 reaches it on its socket. The pair is cut while h2
# runs a job: h2 stops claiming (its status says so), h1 declares it lost
# after its TTL and runs the job's ticket again; the pair is mended: h2
# comes back stale, takes the new epoch, its late decisions about the old
# run are denied, and its reaper ends the job that went on there.
source "$(dirname "$0")/lib.sh"
berth_test_init hosts_partition
BERTH_TEST_SHARED_STORE="two homes share one store"
((EUID == 0)) || fail "needs root for ip netns (CI runs as root)"
command -v ip >/dev/null || fail "no ip (iproute2)"

n=$(($$ % 200 + 20))
ns=berthp$$ va=bpa$$ vb=bpb$$ addr=10.213.$n.1 peer=10.213.$n.2
berth_at_exit ip netns delete "$ns"
ip netns add "$ns" || fail "ip netns add"
ip link add "$va" type veth peer name "$vb" || fail "ip link add veth"
ip link set "$vb" netns "$ns" &&
	ip addr add "$addr/24" dev "$va" && ip link set "$va" up &&
	ip netns exec "$ns" ip addr add "$peer/24" dev "$vb" &&
	ip netns exec "$ns" ip link set "$vb" up &&
	ip netns exec "$ns" ip link set lo up || fail "cannot set up the veth pair"

BERTH_PG_LISTEN=$addr berth_pg_server part
url1=$pg_url
port=$(cat "$pg_dir/port")
# Over TCP, with timeouts short beside the host TTL (4 s), so a cut is
# noticed in about a second.
url2="postgresql://postgres@$addr:$port/part?connect_timeout=2&tcp_user_timeout=1000&keepalives_idle=1&keepalives_interval=1&keepalives_count=1"

H1=$BERTH_HOME H2=$BERTH_TEST_DIR/h2
mkdir -p "$H2" && chmod 0700 "$H2"
berth_also_home "$H2"
on() {
	local h=$1
	shift
	BERTH_HOME=$h "$BERTH_BIN/berth" "$@"
}
q() { psql -X -A -t "$url1" -c "$1"; }

ip netns exec "$ns" "$BERTH_BIN/berth-launch" start --home "$H2" --store "$url2" --host-id h2 \
	--host-ttl 4000 --slots 2 --lease-ms 1000 --tick-ms 100 --grace-ms 500 \
	>"$BERTH_TEST_DIR/launch.h2" 2>&1 || fail "start h2: $(cat "$BERTH_TEST_DIR/launch.h2")"
w=$BERTH_TEST_DIR/w
mkdir -p "$w"
t=$(on "$H2" add --retries 1 -- sh -c "echo \$\$ >>$w/pids; exec sleep 600") || fail "add"
running_on_h2() { [[ $(q "SELECT count(*) FROM runs WHERE host = 'h2' AND state = 'running'") == 1 ]]; }
wait_for 60 running_on_h2
r=$(q "SELECT id FROM runs WHERE host = 'h2'")
job=$(head -n 1 "$w/pids")
# h1 only now, so the job is h2's.
berth_launch --store "$url1" --host-id h1 --host-ttl 4000 --slots 2

ip link set "$va" down || fail "cannot cut the pair"
# Cut off: h2 cannot renew; after half its TTL it says it does not claim.
not_claiming() { on "$H2" status 2>&1 | grep -q "not claiming\|not connected\|no connection\|storage"; }
wait_for 30 not_claiming
# h1 declares it lost after its TTL; the run ends lost, the ticket runs again on h1.
lost() { [[ $(q "SELECT state FROM runs WHERE id = '$r'") == lost ]]; }
wait_for 60 lost
again() { [[ $(q "SELECT count(*) FROM runs WHERE ticket = ${t#T} AND host = 'h1' AND state = 'running'") == 1 ]]; }
wait_for 60 again
alive "$job" || fail "the job on h2 ended while h2 was cut off"
t2=$(on "$H1" add -- true) || fail "add during the cut"
wait_for 60 ticket_is "$t2" succeeded
assert_eq h1 "$(q "SELECT host FROM runs WHERE ticket = ${t2#T}")" "where a job added during the cut ran"

ip link set "$va" up || fail "cannot mend the pair"
# Back: the new epoch; the old job ended by its reaper; its decisions denied.
wait_for 60 gone "$job"
epoch=$(q "SELECT epoch FROM hosts WHERE host = 'h2'")
((epoch >= 2)) || fail "h2's epoch is $epoch after it was lost"
back() { [[ $(q "SELECT renewed_ms > lost_ms FROM hosts WHERE host = 'h2'") == t ]]; }
wait_for 60 back
denied=$(jq -c "select(.run == \"$r\" and .decision == \"denied\") | .reason" "$H2/trace/trace.jsonl" | sort -u | tr '\n' ' ')
[[ -n $denied ]] || fail "no decision about $r was denied on h2 after it came back"
on "$H1" cancel "$t" >/dev/null 2>&1
pass "partition: h2 stopped claiming, was declared lost (epoch $epoch), came back stale; its late decisions denied ($denied); its job ended"
