#!/usr/bin/env bash
# Isolated jobs (DESIGN §6, issue 10): under `berth-launch start --isolate`
# (and for a ticket added with `berth add --isolate`) a job runs in its own
# user and mount namespace where $BERTH_HOME
# holds only worker.sock. The attacks of a job that is not trusted fail:
# reading berth.db, another run's output, the launcher's logs, the trace;
# reaching coordinator.sock as an operator; unmounting the cover (even as
# root, even from a namespace of its own). Its own output is still
# captured. Where namespaces cannot be made, the run fails with the reason
# and the job never runs.
set -u
source "$(dirname "$0")/lib.sh"
berth_test_init isolate
berth_launch --isolate

# A first job leaves output another job must not be able to read.
t1=$(berth add -- sh -c 'echo secret-of-t1') || fail "add t1"
wait_for 30 ticket_is "$t1" succeeded
r1=$(run_field "$t1" -1 id)
[[ -s $BERTH_HOME/runs/$r1/output.log ]] || fail "t1 left no output to steal"

# The attacker: every line is one attempt, "ok" when it worked.
t2=$(berth add -- sh -c '
	h=$BERTH_HOME
	echo "entries: $(ls -A "$h" | tr "\n" " ")"
	for f in berth.db berth.db-wal trace/trace.jsonl launch/coordinator.log "runs/$1/output.log"; do
		if cat "$h/$f" >/dev/null 2>&1; then echo "read $f: ok"; else echo "read $f: refused"; fi
	done
	if berth list >/dev/null 2>&1; then echo "operator list: ok"; else echo "operator list: refused"; fi
	if BERTH_SOCKET=ipc://$h/coordinator.sock berth heartbeat >/dev/null 2>&1; then
		echo "coordinator.sock: ok"; else echo "coordinator.sock: refused"; fi
	if umount -l "$h" 2>/dev/null; then echo "umount: ok"; else echo "umount: refused"; fi
	if unshare -Urm sh -c "umount -l \"$h\" && cat \"$h/berth.db\"" >/dev/null 2>&1; then
		echo "nested umount: ok"; else echo "nested umount: refused"; fi
	if touch "$h/planted" 2>/dev/null; then echo "plant: ok"; else echo "plant: refused"; fi
	echo "done"' job "$r1") || fail "add t2"
wait_for 30 ticket_is "$t2" succeeded
out=$(berth logs "$t2") || fail "logs t2"
[[ $out == *"done"* ]] || fail "the isolated job's output was not captured: $out"
if grep -q ': ok$' <<<"$out"; then
	fail "an isolated job got through:"$'\n'"$out"
fi
[[ -S $BERTH_HOME/worker.sock ]] || fail "the coordinator does not listen on worker.sock"
grep -qx "entries: worker.sock " <<<"$out" || fail "the home an isolated job sees: $out"
[[ $(berth logs "$t2" | grep -c ': refused$') == 10 ]] || fail "not every attempt was made: $out"
[[ ! -e $BERTH_HOME/planted ]] || fail "the isolated job planted a file in the home"
[[ $(berth show "$t1" --json | jq -r .state) == succeeded ]] || fail "t1 changed"

# The job's worker verbs still work, through worker.sock.
t3=$(berth add -- sh -c 'berth progress 2/3 isolated && berth note inside') || fail "add t3"
wait_for 30 ticket_is "$t3" succeeded
assert_eq "isolated" "$(run_field "$t3" -1 progress.label)" "an isolated job's progress"
assert_eq '["inside"]' "$(berth show "$t3" --json | jq -c '.runs[-1].notes')" "its note"
check_invariants

# No user namespaces (the failpoint makes the shim's unshare fail): the
# run fails with the reason, and the job never ran, not even unisolated.
berth_stop
BERTH_FAILPOINTS_SHIM=shim.unshare=error berth_launch --isolate
marker=$BERTH_TEST_DIR/ran
t4=$(berth add -- touch "$marker") || fail "add t4"
wait_for 30 ticket_is "$t4" failed
[[ ! -e $marker ]] || fail "the job ran without its namespace"
reason=$(run_field "$t4" -1 reason)
[[ $reason == *"isolation: unshare(CLONE_NEWUSER|CLONE_NEWNS)"*"the job was not run"* ]] ||
	fail "the run's reason: $reason"
assert_eq 126 "$(run_field "$t4" -1 exit_code)" "exit code of a run that could not be isolated"
check_invariants

# berth add --isolate under a group that does not isolate by default: the
# ticket keeps the wish and the claim hands it to the supervisor. Its
# neighbour, queued without it, can read the database: that is what a job
# of the same user can do (docs/THREATS.md).
berth_stop
berth_launch
probe='if cat "$BERTH_HOME/berth.db" >/dev/null 2>&1; then echo read; else echo refused; fi'
t5=$(berth add --isolate -- sh -c "$probe") || fail "add --isolate"
t6=$(berth add -- sh -c "$probe") || fail "add"
wait_for 30 ticket_is "$t5" succeeded
wait_for 30 ticket_is "$t6" succeeded
assert_eq refused "$(berth logs "$t5")" "a ticket added with --isolate"
assert_eq read "$(berth logs "$t6")" "a ticket added without it"
assert_eq true "$(berth show "$t5" --json | jq .isolate)" "show --json of the isolated ticket"
assert_eq false "$(berth show "$t6" --json | jq .isolate)" "show --json of the other"
berth show "$t5" | grep -q '^  isolated:  yes' || fail "show does not say the ticket is isolated"
check_invariants

# CI runs as root, where user namespaces always work and the job is root in
# its namespace: the same attacks from a group run by an ordinary user.
if ((EUID == 0)) && [[ -z ${BERTH_ISOLATE_AS_USER:-} ]] && command -v runuser >/dev/null &&
	runuser -u nobody -- test -x "$BERTH_BIN/berth" -a -r "$0"; then
	self=$(realpath "$0")
	out=$(cd / && runuser -u nobody -- env BERTH_ISOLATE_AS_USER=1 PATH=/usr/local/bin:/usr/bin:/bin \
		TMPDIR=/tmp BERTH_BIN="$BERTH_BIN" bash "$self" 2>&1) ||
		fail "as user nobody:"$'\n'"$out"
	grep '^PASS' <<<"$out"
fi
pass "isolated jobs see only worker.sock; without namespaces they never run${BERTH_ISOLATE_AS_USER:+ (as $(id -un))}"
