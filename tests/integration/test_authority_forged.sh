#!/usr/bin/env bash
# A job that misbehaves toward another run (DESIGN §1 "Who may ask what",
# issue 10): it sends every actor verb for a running victim, over its own
# BERTH_SOCKET and over coordinator.sock, under every actor name, with the
# supervisor's real instance and with one of its own; and it replays request
# ids 1..300 under the supervisor's instance to fish for stored replies.
# Nothing of it may change the victim (it runs once, exits 3, is settled
# failed with exit code 3) and no reply may carry a token.
source "$(dirname "$0")/lib.sh"
berth_test_init authority_forged
SENDRAW=$(cd "$BERTH_BIN/../tests" && pwd)/berth-sendraw
[[ -x $SENDRAW ]] || fail "no berth-sendraw next to the build's bin/"
berth_launch --slots 2
D=$BERTH_TEST_DIR

victim=$(berth add --name victim --key victim-area -- sh -c "echo ran >>'$D/victim.ran';
	while [ ! -e '$D/victim.go' ]; do sleep 0.05; done; exit 3") || fail "add victim"
wait_for 30 run_is "$victim" 0 running
run=$(run_field "$victim" 0 id)
owner=$(run_field "$victim" 0 owner)
[[ $run =~ ^[0-9a-f]{32}$ && -n $owner ]] || fail "victim run '$run' owner '$owner'"

cat >"$D/attack.sh" <<EOF
#!/bin/sh
n=1000
for sock in "\$BERTH_SOCKET" "ipc://$BERTH_HOME/coordinator.sock"; do
  for actor in supervisor recovery reaper cli worker; do
    for inst in $owner 0123456789abcdef; do
      for verb in start renew readopt record_exit abandon settle mark_stop hello scan seat_reap claim; do
        n=\$((n + 1))
        "$SENDRAW" "\$sock" send \$verb actor=\$actor instance=\$inst req_id=\$n \
          run=$run ticket=$victim code=0 new_owner=0123456789abcdef slots=0 outcome=succeeded \
          >>"$D/forged.out" 2>&1
      done
    done
  done
done
i=0
while [ \$i -lt 300 ]; do
  i=\$((i + 1))
  for verb in settle claim; do
    "$SENDRAW" "ipc://$BERTH_HOME/coordinator.sock" send \$verb actor=supervisor \
      instance=$owner req_id=\$i run=$run >>"$D/replay.out" 2>&1
  done
done
echo done >"$D/attack.done"
EOF
attacker=$(berth add --name attacker -- sh "$D/attack.sh") || fail "add attacker"
wait_for 240 test -e "$D/attack.done"
wait_for 30 ticket_is "$attacker" succeeded

# An operator may not take a live run's seat: that would let a second
# ticket into its area while it runs.
out=$(berth seat force-release victim-area 2>&1) && fail "force-release of a live run's seat: $out"
[[ $out == *"cancel the run instead"* ]] || fail "force-release refusal: $out"
[[ $(berth seat list --json | jq -r '.[].item') == *victim-area* ]] || fail "the seat went"

# The victim is untouched while it still runs...
assert_eq running "$(run_field "$victim" 0 state)" "victim's run after the attack"
assert_eq "$owner" "$(run_field "$victim" 0 owner)" "victim's owner after the attack"
# ...and ends with its real status, once.
touch "$D/victim.go"
wait_for 30 ticket_is "$victim" failed
json=$(berth show "$victim" --json)
assert_eq 1 "$(jq '.runs | length' <<<"$json")" "victim's runs"
assert_eq failed "$(jq -r '.runs[0].state' <<<"$json")" "victim's outcome"
assert_eq 3 "$(jq -r '.runs[0].exit_code' <<<"$json")" "victim's exit code"
assert_eq 1 "$(wc -l <"$D/victim.ran")" "victim executions"

# Every forged actor verb was refused, none replayed, and the trace says so.
[[ -s $D/forged.out ]] || fail "the attacker recorded no replies"
if grep -E 'granted|replayed' "$D/forged.out" >/dev/null; then
	fail "forged actor verbs were answered:"$'\n'"$(grep -E 'granted|replayed' "$D/forged.out" | head)"
fi
n=$(jq -r 'select(.reason == "not_permitted") | .seq' "$BERTH_HOME/trace/trace.jsonl" | wc -l)
((n >= 200)) || fail "the trace shows $n not_permitted denials, want at least 200"

# No reply, stored or fresh, handed anyone the victim's (or any) token.
if grep -E 'token=[0-9a-f]+' "$D/replay.out" "$D/forged.out" >/dev/null; then
	fail "a reply carried a token:"$'\n'"$(grep -hE 'token=[0-9a-f]+' "$D"/*.out | head -3)"
fi
if grep replayed "$D/replay.out" >/dev/null; then
	fail "another sender's stored replies were replayed:"$'\n'"$(grep replayed "$D/replay.out" | head -3)"
fi
check_invariants
pass "a job's forged actor verbs and replays changed nothing and leaked no token"
