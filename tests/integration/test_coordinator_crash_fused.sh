#!/usr/bin/env bash
# The fused forms of the fast path (DESIGN §4 "One decision, fewer trips")
# through a real coordinator, and the crash window they leave: a claim
# carrying its waiting shim is created running in one decision; a
# record_exit carrying its settle checkpoints and settles in one. A
# coordinator killed after that COMMIT and before its reply
# (coordinator.after_commit=1*crash) has settled the run; the sender's retry
# of the same request, to the restarted coordinator, gets the stored reply
# (replayed), the fused settle's answer inside it, and nothing is decided
# twice. The trace conforms (check_invariants), fused lines included.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/coordinator_lib.bash"
coord_test_init coordinator_crash_fused
trace=$BERTH_HOME/trace/trace.jsonl
out=$BERTH_TEST_DIR/client.out
# berth-sendraw plays the supervisor: the coordinator counts it as one of
# the group's actors (started by the same parent: this shell).
allow=(--allow-actor-exe "$(realpath "$SENDRAW")")
inst=5f5f5f5f5f5f5f5f
rstate() { db_query "SELECT state FROM runs WHERE id = '$1'"; }

coord_start "${allow[@]}"
t=$(berth add -- true) || fail "berth add"

# The fused claim + start: granted, its start granted inside it, the run
# running with the shim's identity. A sleep in a process group of its own
# stands for the waiting shim (the cleanup ends the groups runs record).
setsid sleep 600 &
shim=$!
sendraw send claim ticket="$t" shim=$shim instance=$inst req_id=1 >"$out" ||
	fail "claim: no reply"
grep -q '^req_id=1 granted.* run=[0-9a-f]* .* fused=granted' "$out" ||
	fail "the fused claim: $(cat "$out")"
run=$(grep -o ' run=[0-9a-f]*' "$out" | cut -d= -f2)
[[ $(rstate "$run") == running ]] || fail "the run is $(rstate "$run"), want running"
assert_eq "$shim" "$(db_query "SELECT pid FROM runs WHERE id = '$run'")" "the run's shim pid"
assert_eq 1 "$(grep -c '"verb":"start".*"fused":"claim"' "$trace")" "fused start lines"
coord_stop TERM

# The fused record_exit + settle, and a crash between its COMMIT and its
# reply. The sender waits, resending the same request on every new
# connection (a stored reply is answered only to the process that made the
# request, DESIGN §5).
BERTH_FAILPOINTS='coordinator.after_commit=1*crash' coord_start "${allow[@]}"
# Started straight from this shell (a function in the background would be
# a subshell's child, not the coordinator's sibling).
"$SENDRAW" "ipc://$BERTH_HOME/coordinator.sock" send record_exit run="$run" code=0 settle=- \
	instance=$inst req_id=2 timeout_ms=60000 >"$out" 2>&1 &
sender=$!
wait_for 30 gone "$coord"
rc=0
wait "$coord" 2>/dev/null || rc=$?
coord=
assert_eq 137 "$rc" "the coordinator's exit status (SIGKILL)"
# Decided before the crash: checkpointed and settled, in one COMMIT.
assert_eq succeeded "$(rstate "$run")" "the run's state after the crash"
assert_eq succeeded "$(db_query "SELECT state FROM tickets WHERE n = ${t#T}")" \
	"the ticket's state after the crash"
grep -q '"verb":"record_exit".*"decision":"granted"' "$trace" ||
	fail "the record_exit was not decided before the crash"
grep -q '"verb":"settle".*"decision":"granted".*"fused":"record_exit"' "$trace" ||
	fail "the fused settle was not decided before the crash"
alive "$sender" || fail "the sender gave up while the coordinator was down: $(cat "$out")"

# Its retry gets the stored reply, with the fused settle's answer; nothing
# is decided again.
coord_start "${allow[@]}"
rc=0
wait "$sender" || rc=$?
assert_eq 0 "$rc" "the sender's exit status"
grep -q '^req_id=2 granted replayed fused=granted' "$out" || fail "the retry: $(cat "$out")"
assert_eq 1 "$(grep '"verb":"record_exit"' "$trace" | grep -c '"decision":"granted"')" \
	"granted record_exits"
assert_eq 1 "$(grep '"verb":"settle"' "$trace" | grep -c '"decision":"granted"')" \
	"granted settles"
grep '"verb":"record_exit"' "$trace" | grep '"decision":"replayed"' |
	grep -q "\"instance\":\"$inst\",\"req_id\":2" || fail "no replayed record_exit line"
assert_eq 2 "$(db_query "SELECT count(*) FROM events WHERE run = '$run' AND verb IN ('record_exit', 'settle')")" \
	"the run's exit and settle events"

# The old unfused verbs stay valid: a second ticket's life in four requests.
t2=$(berth add -- true) || fail "second add"
sendraw send claim ticket="$t2" instance=$inst req_id=3 >"$out" || fail "claim: no reply"
run2=$(grep -o ' run=[0-9a-f]*' "$out" | cut -d= -f2)
[[ -n $run2 ]] || fail "the unfused claim: $(cat "$out")"
grep -q 'fused=' "$out" && fail "an unfused claim got a fused answer: $(cat "$out")"
[[ $(rstate "$run2") == claimed ]] || fail "the unfused claim's run is $(rstate "$run2")"
sendraw send start run="$run2" instance=$inst req_id=4 >"$out" && grep -q granted "$out" ||
	fail "start: $(cat "$out")"
sendraw send record_exit run="$run2" code=3 instance=$inst req_id=5 >"$out" &&
	grep -q granted "$out" || fail "record_exit: $(cat "$out")"
[[ $(rstate "$run2") == aftercare ]] || fail "the unfused record_exit left $(rstate "$run2")"
sendraw send settle run="$run2" instance=$inst req_id=6 >"$out" && grep -q granted "$out" ||
	fail "settle: $(cat "$out")"
[[ $(rstate "$run2") == failed ]] || fail "the unfused settle left $(rstate "$run2")"
# The stand-in shim ends, as a shim does once its run's exit is recorded.
kill "$shim"
wait "$shim" 2>/dev/null
check_invariants
coord_stop TERM
pass "the fused forms decide once through a crash between COMMIT and reply, and the old verbs stay valid"
