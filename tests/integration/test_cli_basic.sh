#!/usr/bin/env bash
# The CLI against a real coordinator (no supervisor: tickets stay queued):
# add with every option, list, show --json field by field, hold, release,
# cancel, retry, batch adds, wait's exit statuses, status.
source "$(dirname "$0")/lib.sh"
set -u
BIN=${BERTH_BIN:-$(cd "$(dirname "$0")/../../build/bin" && pwd)}
# lib.sh's home, and its cleanup (which stops the coordinator and checks
# the trace's conformance).
berth_test_init cli_basic
tmp=$BERTH_TEST_DIR
coord=
fail() { echo "FAIL: $*" >&2; exit 1; }

# Runs berth, keeping stdout, stderr and status in $out, $err, $rc.
run() {
	"$BIN/berth" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
}
ok() { run "$@"; [ "$rc" -eq 0 ] || fail "berth $* exited $rc: $err"; }

mkdir -p "$BERTH_HOME"
"$BIN/berth-coordinator" --home "$BERTH_HOME" 2>"$tmp/coord.log" &
coord=$!
for _ in $(seq 1 200); do
	B list >/dev/null 2>&1 && break
	sleep 0.05
done
B list >/dev/null || fail "coordinator did not come up: $(cat "$tmp/coord.log")"

# --- add: the id on stdout, nothing on stderr; workdir canonicalised.
mkdir -p "$tmp/real/dir"
ln -s "$tmp/real" "$tmp/link"
cd "$tmp/link/dir" || fail "cd"
ok add -- sh -c 'exit 3'
[[ $out =~ ^T[0-9]+$ ]] || fail "add printed '$out'"
[ -z "$err" ] || fail "add wrote to stderr: $err"
t1=$out
cd "$tmp" || fail "cd"
expect "$t1" .id "\"$t1\""
expect "$t1" .state '"ready"'
expect "$t1" .attempts 0
expect "$t1" .runs '[]'
expect "$t1" .argv '["sh","-c","exit 3"]'
expect "$t1" .workdir "\"$(realpath "$tmp/real/dir")\""

# --- the environment: the caller's, plus --env (DESIGN §12), stored with
# the ticket; show lists its names, never its values.
CALLER_ONLY=from-shell BERTH_TOKEN=forged-token BERTH_FAILPOINTS_SHIM=x \
	ok add --env FOO=bar --env 'SPACED=a b' -- env
t2=$out
expect "$t2" '[.env[] | select(. == "FOO" or . == "SPACED" or . == "CALLER_ONLY")] | sort' \
	'["CALLER_ONLY","FOO","SPACED"]'
expect "$t2" '[.env[] | select(. == "PATH")] | length' 1
expect "$t2" '[.env[] | select(. == "HOME")] | length' 1
expect "$t2" '[.env[] | select(test("="))] | length' 0
# berth's own variables are never a ticket's: a job's token, failpoints, the home.
expect "$t2" '[.env[] | select(. == "BERTH_TOKEN" or . == "BERTH_HOME" or startswith("BERTH_FAILPOINTS"))] | length' 0
"$BIN/berth" show "$t2" --json | grep -q 'from-shell' && fail "show --json prints a value"
"$BIN/berth" show "$t2" | grep -q 'from-shell' && fail "show prints a value"
"$BIN/berth" show "$t2" | grep -q '^  env: .* CALLER_ONLY' || fail "show lists no env names"
# The values are in the database, for the job.
n=${t2#T}
stored=$(db_query "SELECT env FROM tickets WHERE n = $n")
[[ $stored == *'"CALLER_ONLY=from-shell"'* && $stored == *'"FOO=bar"'* &&
	$stored == *'"SPACED=a b"'* ]] || fail "stored env: $stored"
[[ $stored != *forged-token* ]] || fail "a caller's BERTH_TOKEN was stored: $stored"
# --clean-env: PATH and HOME of the caller, and every --env, nothing else.
CALLER_ONLY=from-shell ok add --clean-env --env FOO=bar -- env
expect "$out" '.env | sort' '["FOO","HOME","PATH"]'

# --- scheduling and limits.
ok add --name nightly --at 2099-01-01T00:00:00Z --timeout 5m --retries 2 --priority -3 \
	--key build --workdir "$tmp/real" -- make all
t3=$out
expect "$t3" .name '"nightly"'
expect "$t3" .next_due_ms 4070908800000
expect "$t3" .timeout_ms 300000
expect "$t3" .max_attempts 3
expect "$t3" .priority -3
expect "$t3" .key '"build"'
expect "$t3" .workdir "\"$(realpath "$tmp/real")\""
before=$(($(date +%s) * 1000))
ok add --in 1h -- true
t4=$out
due=$(B show "$t4" --json | jq .next_due_ms)
[ "$due" -ge $((before + 3600000 - 1000)) ] && [ "$due" -le $((before + 3600000 + 60000)) ] ||
	fail "--in 1h: next_due_ms $due, now $before"
ok add --every 10m -- true
expect "$out" .every_ms 600000
ok add --after "$t1,$t2" -- true
t6=$out
expect "$t6" .after "[\"$t1\",\"$t2\"]"
expect "$t6" .state '"blocked"'
ok add --hold -- true
t7=$out
expect "$t7" .state '"held"'

# --- list
ok list --json
[ "$(echo "$out" | jq length)" = 8 ] || fail "list --json: $(echo "$out" | jq -c 'map(.id)')"
echo "$out" | jq -e "map(.id) | index(\"$t1\") != null" >/dev/null || fail "list lacks $t1"
ok list --state held --json
[ "$(echo "$out" | jq -c 'map(.id)')" = "[\"$t7\"]" ] || fail "list --state held: $out"
ok list
echo "$out" | head -1 | grep -q '^ID *STATE' || fail "list header: $out"
echo "$out" | grep -q "^$t3 .*nightly" || fail "list lacks the name of $t3: $out"
echo "$out" | grep "^$t4 " | grep -q 'in 59m\|in 1h' || fail "list: $t4 not 'in 1h': $out"

# --- hold / release / cancel / retry
ok hold "$t1"
[ "$out" = "$t1 held" ] || fail "hold printed '$out'"
expect "$t1" .state '"held"'
ok hold "$t1" # idempotent
ok release "$t1"
expect "$t1" .state '"ready"'
ok cancel "$t1"
expect "$t1" .state '"cancelled"'
run hold "$t1"
[ "$rc" -ne 0 ] && [ -z "$out" ] && [ -n "$err" ] || fail "hold of cancelled: rc=$rc out=$out"
ok retry "$t1"
expect "$t1" .state '"ready"'
run show T999999
[ "$rc" -ne 0 ] && [ -z "$out" ] || fail "show T999999: rc=$rc out=$out"
echo "$err" | grep -q 'T999999' || fail "show T999999: stderr does not name it: $err"

# --- human show
ok show "$t3"
echo "$out" | grep -q "^$t3  ready  nightly" || fail "show header: $out"
echo "$out" | grep -Eq 'created: +20[0-9]{2}-[0-9]{2}-[0-9]{2} [0-9:]{8} \((now|[0-9]+s ago)\)' ||
	fail "show created: $out"
echo "$out" | grep -q 'runs: none yet' || fail "show runs: $out"

# --- batch: one request, ids in order
printf '# build\nmake -C a\n\n   echo "two words"  \n# end\nexit 4\n' >"$tmp/batch"
ok add --batch "$tmp/batch" --hold
[ "$(echo "$out" | wc -l)" = 3 ] || fail "batch printed: $out"
b1=$(echo "$out" | sed -n 1p)
b2=$(echo "$out" | sed -n 2p)
b3=$(echo "$out" | sed -n 3p)
expect "$b1" .argv '["sh","-c","make -C a"]'
expect "$b2" .argv '["sh","-c","echo \"two words\""]'
expect "$b3" .argv '["sh","-c","exit 4"]'
expect "$b3" .state '"held"'
out=$(printf 'true\nfalse\n' | B add --batch -) || fail "batch from stdin"
[ "$(echo "$out" | wc -l)" = 2 ] || fail "batch - printed: $out"

# --- wait: 1 when a ticket did not succeed, 124 on timeout, 2 on an unknown id
ok cancel "$t7"
run wait "$t7"
[ "$rc" = 1 ] || fail "wait on cancelled: rc=$rc ($err)"
[ "$out" = "$t7 cancelled" ] || fail "wait printed '$out'"
# --timeout 0 checks once: a settled ticket is not a timeout
run wait "$t7" --timeout 0
[ "$rc" = 1 ] && [ "$out" = "$t7 cancelled" ] || fail "wait --timeout 0: rc=$rc out='$out' ($err)"
run wait "$t4" --timeout 0
[ "$rc" = 124 ] && [ -z "$out" ] || fail "wait --timeout 0 unsettled: rc=$rc out='$out'"
# a timeout past the clock's range waits (it wrapped to a past deadline)
# (killed by timeout(1): 137; wait's own timeout would be 124)
timeout -s KILL 2 "$BIN/berth" wait "$t4" --timeout 9223372036854775807ms >/dev/null 2>&1
[ "$?" = 137 ] || fail "wait with a huge --timeout did not wait"
start=$(date +%s%N)
run wait "$t4" --timeout 700ms
[ "$rc" = 124 ] || fail "wait timeout: rc=$rc"
echo "$err" | grep -q "timed out" || fail "wait timeout stderr: $err"
[ -z "$out" ] || fail "wait timeout printed '$out'"
el=$((($(date +%s%N) - start) / 1000000))
[ "$el" -ge 600 ] && [ "$el" -lt 5000 ] || fail "wait --timeout 700ms took ${el}ms"
run wait T999999 --timeout 5s
[ "$rc" = 2 ] && [ -z "$out" ] || fail "wait unknown: rc=$rc out=$out"

# --- status
ok status --json
echo "$out" | jq -e '.coordinator.answering == true and (.tickets | type == "object")' >/dev/null ||
	fail "status --json: $out"
ok status
echo "$out" | grep -q "^coordinator: answering at $BERTH_HOME/coordinator.sock" || fail "status: $out"
echo "$out" | grep -q '^tickets:' || fail "status: $out"

echo "PASS test_cli_basic"
