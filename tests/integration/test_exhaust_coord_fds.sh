#!/usr/bin/env bash
# The coordinator out of descriptors keeps serving the connections it has
# and takes new ones again as soon as descriptors are free; it never stops
# (before: its listener's mend took the failed accepts for a broken
# listener, could not listen again for want of a descriptor and stopped the
# coordinator). A bare coordinator's descriptor limit is lowered (prlimit)
# to what it uses plus four; twelve `berth wait`s then hold or want
# connections at once, which takes it to the limit (checked, not assumed).
set -u
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/coordinator_lib.bash"
coord_test_init exhaust_coord_fds
command -v prlimit >/dev/null || fail "no prlimit (util-linux)"
coord_start
t=$(B add -- true) || fail "add" # never runs: no supervisor

# Descriptors open now: the highest number below 100 (anything higher was
# inherited from whoever runs the test; the kernel gives the lowest free
# numbers, so only those below the limit count).
top=0
for f in /proc/"$coord"/fd/*; do
	f=${f##*/}
	((f < 100 && f > top)) && top=$f
done
lim=$((top + 5))
# Only the soft limit is lowered, so that it can be raised back (raising a
# hard limit takes CAP_SYS_RESOURCE).
read -r soft hard < <(prlimit --pid "$coord" --nofile --raw --noheadings -o SOFT,HARD)
prlimit --pid "$coord" --nofile="$lim:$hard" || fail "prlimit"

# Out of descriptors: every number below the limit is taken (an open or
# accept then fails with EMFILE).
at_limit() {
	local i
	for ((i = 0; i < lim; i++)); do
		[[ -L /proc/$coord/fd/$i ]] || return 1
	done
}

waits=()
for i in $(seq 1 12); do
	B --timeout 30s wait "$t" --timeout 8s >/dev/null 2>&1 &
	waits+=($!)
done
clients_running() {
	local p
	for p in "${waits[@]}"; do
		kill -0 "$p" 2>/dev/null && return 0
	done
	return 1
}
# The shortage happens: every descriptor taken (accepts then fail with
# EMFILE). The clients live 8 s at least, so there is time to see it.
wait_until 30 at_limit || fail "the coordinator never used all of its $lim descriptors"
# While the clients come and go the coordinator runs out, and lives on.
while clients_running; do
	kill -0 "$coord" 2>/dev/null ||
		fail "the coordinator died out of descriptors: $(tail -5 "$BERTH_TEST_DIR/coord.log")"
	sleep 0.1
done
for p in "${waits[@]}"; do
	wait "$p"
done
kill -0 "$coord" 2>/dev/null || fail "the coordinator died"
grep -q "stopping so the launcher" "$BERTH_TEST_DIR/coord.log" &&
	fail "the coordinator gave up its listener"
# Descriptors free again (the limit back where it was): new connections are
# taken and served as before. (The clients' exits alone may not free them:
# nng 1.5.2 can keep connections it accepted while out of descriptors
# without ever reading them; see docs/DECISIONS.md.)
prlimit --pid "$coord" --nofile="$soft:$hard" || fail "prlimit back to $soft"
wait_for 60 B list
B show "$t" >/dev/null || fail "show after the shortage"
kill -0 "$coord" 2>/dev/null || fail "the coordinator died after the shortage"
pass "a coordinator limited to $lim descriptors (all taken) with 12 clients at once stayed up and served again"
