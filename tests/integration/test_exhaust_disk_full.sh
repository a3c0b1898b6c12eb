#!/usr/bin/env bash
# A full disk costs output, never the exit status, never a second run
# (docs/RECOVERY.md, "Resource exhaustion"). The home is a 4 MiB tmpfs
# (root only; unmounted by the cleanup). Two jobs with --retries 2 are
# started, the home is filled to the last block, then they end: one
# succeeds, one exits 4. While the disk is full the group keeps trying;
# once space is freed both settle with their real exit: succeeded and exit
# 4, each first run executed once, none orphaned, capture incomplete and
# `show` saying the output was cut by a full disk. The trace stays valid
# JSON lines with seq strictly increasing, and the actors' logs hold only
# whole lines.
set -u
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/exhaust_lib.bash"

berth_test_init exhaust_disk_full
exhaust_tmpfs_home 4m
W=$BERTH_TEST_DIR/w
mkdir -p "$W/ok" "$W/four"
berth_launch --slots 4

job='echo ran >>"$0"; while [ ! -e "$1" ]; do sleep 0.05; done; echo bye; exit "$2"'
ok=$(B add --retries 2 --workdir "$W/ok" -- sh -c "$job" "$W/ok/ran" "$W/go" 0) || fail "add"
four=$(B add --retries 2 --workdir "$W/four" -- sh -c "$job" "$W/four/ran" "$W/go" 4) || fail "add"
ran_once() { [[ $(wc -l <"$W/$1/ran" 2>/dev/null) == 1 ]]; }
wait_for 60 ran_once ok
wait_for 60 ran_once four

exhaust_fill
# Both end on a full disk.
touch "$W/go"
# Their shims record the end (in the space reserved at the go) and exit.
# (Shims still waiting for a run, "berth-shim --ahead ...", have none.)
shims_gone() {
	local d cmd
	for d in /proc/[0-9]*; do
		[[ $(cat "$d/comm" 2>/dev/null) == berth-shim ]] || continue
		cmd=$(tr '\0' ' ' <"$d/cmdline" 2>/dev/null)
		[[ $cmd == *" $BERTH_HOME "* && $cmd != *" --ahead "* ]] && return 1
	done
	return 0
}
wait_for 60 shims_gone
# The group works on while the disk is full: requests fail with a storage
# error and are retried, decisions are traced (or wait to be), nothing is
# settled wrongly meanwhile. A few operator requests on top.
# Long enough for the supervisor to try again and again: its requests, as
# its trace ring (in /dev/shm, not on the full disk) records them.
sup_sent() {
	B trace --json --actor supervisor 2>/dev/null |
		jq -s '[.[] | select(.source == "ring" and (.event == "sent" or .event == "retry"))] | length'
}
sent0=$(sup_sent)
kept_trying() {
	B list >/dev/null 2>&1
	B show "$ok" >/dev/null 2>&1
	(($(sup_sent) >= sent0 + 10))
}
wait_until 60 kept_trying || fail "the supervisor sent no 10 requests in 60 s while the disk was full"
full_states=$(B show "$ok" --json 2>/dev/null | jq -r '[.runs[].state] | join(",")')
[[ $full_states != *orphaned* ]] || fail "settled orphaned while the disk was full: $full_states"

exhaust_unfill
wait_for 60 ticket_is "$ok" succeeded
wait_for 90 ticket_is "$four" failed

# The real exits, no run orphaned, and each run executed exactly once.
expect "$ok" '.attempts' 1
expect "$ok" '[.runs[] | {state, exit_code}]' '[{"state":"succeeded","exit_code":0}]'
ran_once ok || fail "the job that succeeded ran $(wc -l <"$W/ok/ran") times"
expect "$four" '.runs[0] | {state, exit_code, signal}' '{"state":"failed","exit_code":4,"signal":null}'
expect "$four" '[.runs[] | select(.state == "orphaned")] | length' 0
runs4=$(B show "$four" --json | jq '.runs | length')
[[ $(wc -l <"$W/four/ran") == "$runs4" ]] || fail "exit 4: $runs4 runs, $(wc -l <"$W/four/ran") executions"
# Output was cut by the full disk: said so, the exit kept all the same.
expect "$ok" '.runs[0] | {capture_complete, disk_full}' '{"capture_complete":false,"disk_full":true}'
expect "$four" '.runs[0] | {capture_complete, disk_full}' '{"capture_complete":false,"disk_full":true}'
B show "$ok" | grep -q 'cut by a full disk' || fail "show does not say the output was cut: $(B show "$ok")"

exhaust_trace_whole
exhaust_logs_whole "$BERTH_HOME"/launch/{coordinator,supervisor,recovery,reaper}.log
storage=$(jq -r 'select(.decision == "error" and (.reason | test("storage")))' \
	"$BERTH_HOME/trace/trace.jsonl" | grep -c '"seq"')
seqs=$(jq -r .seq "$BERTH_HOME/trace/trace.jsonl" | wc -l)
pass "exit 0 and exit 4 on a full disk recorded once each ($runs4 runs of the failing one, as its retries), output marked cut; trace whole ($seqs lines, $storage storage errors while full)"
