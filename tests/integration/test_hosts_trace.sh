#!/usr/bin/env bash
# One trace for a store shared by two hosts (DESIGN §13, docs/MANY-HOSTS.md
# "One trace"), played by two homes with their own host ids on one
# PostgreSQL server: berth trace on either host shows both hosts'
# decisions, in the order the store decided them, with every line of its
# own host's file once and in order; --local shows its file alone; the
# diagram draws each host's lanes as a group; with its coordinator down a
# host still shows its own trace.
source "$(dirname "$0")/lib.sh"
berth_test_init hosts_trace
BERTH_TEST_SHARED_STORE="two homes share one store"

berth_pg_server hosts
url=$pg_url

H1=$BERTH_HOME H2=$BERTH_TEST_DIR/h2
mkdir -p "$H2" && chmod 0700 "$H2"
berth_also_home "$H2"
launch() { # HOME HOST
	"$BERTH_BIN/berth-launch" start --home "$1" --store "$url" --host-id "$2" --host-ttl 3000 \
		--slots 1 --lease-ms 1000 --tick-ms 100 --grace-ms 500 >"$BERTH_TEST_DIR/launch.$2" 2>&1 ||
		fail "berth-launch start $2: $(cat "$BERTH_TEST_DIR/launch.$2")"
}
on() { # HOME ARGS...: the CLI of one host
	local h=$1
	shift
	BERTH_HOME=$h "$BERTH_BIN/berth" "$@"
}
launch "$H1" h1
launch "$H2" h2

# Jobs long enough that one slot per host makes both hosts run some.
for i in $(seq 1 8); do
	on "$H1" add -- sleep 0.3 >/dev/null || fail "add"
done
all_done() {
	(($(on "$H1" list --json | jq '[.[] | select(.state == "succeeded")] | length') >= 8))
}
wait_for 120 all_done
for h in h1 h2; do
	n=$(psql -X -A -t "$url" -c "SELECT count(*) FROM runs WHERE host = '$h'")
	((n >= 1)) || fail "host $h ran no job"
done

# ------------------------------------------------------------ one order
check_view() { # HOME SELF OTHER
	local out=$BERTH_TEST_DIR/view.$2 file=$1/trace/trace.jsonl
	on "$1" trace --json >"$out" 2>"$out.err" || fail "trace on $2: $(cat "$out.err")"
	# Another host's decisions are there: its claims and starts.
	(($(jq -c "select(.host == \"$3\" and .verb == \"claim\" and .decision == \"granted\")" "$out" | wc -l) >= 1)) ||
		fail "trace on $2 shows no claim granted on $3"
	# Its own lines: every line of its file once, in the file's order.
	jq -r "select(.host == \"$2\" and .source == \"coordinator\") | .seq" "$out" >"$out.own"
	n=$(wc -l <"$out.own")
	jq -r .seq "$file" | head -n "$n" | diff - "$out.own" >/dev/null ||
		fail "trace on $2: its own lines are not its file's, once and in order"
	# One order: the store's groups never go back.
	jq -r 'select(.gseq != null) | .gseq' "$out" | sort -c -n ||
		fail "trace on $2: the store's order goes back"
	# Every line of the other host's in the store is there, in its order
	# (reads are in that host's file only).
	jq -r "select(.host == \"$3\") | .seq" "$out" | sort -c -n ||
		fail "trace on $2: $3's lines are out of their order"
	# What came first in the store comes first here: each ticket's add
	# (on h1) before its claim, wherever it was claimed.
	jq -rs 'reduce .[] as $e ({}; if $e.source == "coordinator" and $e.decision == "granted" and
		($e.verb == "add" or $e.verb == "claim") and $e.ticket != "" then
		.[$e.ticket] += [$e.verb] else . end) | to_entries[] |
		select(.value[0] != "add") | .key' "$out" >"$out.bad"
	[[ ! -s $out.bad ]] || fail "trace on $2: claimed before added: $(tr '\n' ' ' <"$out.bad")"
}
check_view "$H1" h1 h2
check_view "$H2" h2 h1
pass "berth trace on either host shows both hosts' decisions in the store's order, its own lines all and in order"

on "$H1" trace --local --json >"$BERTH_TEST_DIR/local" || fail "trace --local"
[[ -z $(jq -c 'select(.host != null)' "$BERTH_TEST_DIR/local") ]] || fail "--local shows another host's line"
jq -r 'select(.source == "coordinator") | .seq' "$BERTH_TEST_DIR/local" >"$BERTH_TEST_DIR/local.seq"
n=$(wc -l <"$BERTH_TEST_DIR/local.seq")
jq -r .seq "$H1/trace/trace.jsonl" | head -n "$n" | diff - "$BERTH_TEST_DIR/local.seq" >/dev/null ||
	fail "--local: not h1's file, line by line"
on "$H1" trace | grep -q " h2/supervisor " || fail "the timeline does not name h2's supervisor"
pass "--local shows this host's file alone; the timeline names the other host's actors"

on "$H1" trace --svg "$BERTH_TEST_DIR/t.svg" 2>/dev/null || fail "trace --svg"
for h in h1 h2; do
	grep -q "<g class=\"host\" data-host=\"$h\">" "$BERTH_TEST_DIR/t.svg" || fail "the diagram has no group for host $h"
done
(($(grep -c 'data-actor="coordinator"' "$BERTH_TEST_DIR/t.svg") == 2)) || fail "the diagram has not one coordinator per host"
on "$H1" trace --mermaid | grep -q "participant C[0-9]* as coordinator on h2" || fail "mermaid: no coordinator of h2"
pass "the diagram draws each host's lanes as a group, with a coordinator each"

# ------------------------------------------------------------ --follow
f=$BERTH_TEST_DIR/follow
on "$H1" trace --follow --json --all >"$f" 2>"$f.err" &
fpid=$!
backlog() { [[ -s $f ]]; }
wait_for 30 backlog
m=$(jq -s '[.[] | .gseq // 0] | max' "$f")
t=$(on "$H2" add -- true) || fail "add on h2"
followed() {
	jq -e -s "any(.[]; .host == \"h2\" and .verb == \"add\" and .ticket == \"$t\" and .gseq > $m)" "$f" >/dev/null 2>&1
}
wait_for 30 followed
kill "$fpid" 2>/dev/null
wait "$fpid" 2>/dev/null
pass "--follow on h1 shows a ticket added on h2 as the store records it"

# ------------------------------------------------------------ coordinator down
"$BERTH_BIN/berth-launch" stop --home "$H2" >/dev/null 2>&1 || fail "stop h2"
on "$H2" trace --json >"$BERTH_TEST_DIR/down" 2>"$BERTH_TEST_DIR/down.err" || fail "trace on h2, its coordinator down"
grep -q "does not answer" "$BERTH_TEST_DIR/down.err" || fail "no note that the coordinator does not answer: $(cat "$BERTH_TEST_DIR/down.err")"
assert_eq "$(wc -l <"$H2/trace/trace.jsonl")" "$(jq -c 'select(.source == "coordinator")' "$BERTH_TEST_DIR/down" | wc -l)" \
	"lines of h2's own trace"
pass "with its coordinator down, a host shows its own trace and says so"
