#!/usr/bin/env bash
# A job that leaves processes behind in its group: the shim kills them
# before it exits, so they are gone by the time the run has settled --
# both a plain background child and one orphaned by a subshell.
set -u
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/supervise_lib.bash"
supervise_init grandchild

start_coord
start_sup --tick-ms 200

t=$(B add -- sh -c '
	sleep 300 & echo $! > "$1/gc1.pid"
	(sleep 301 & echo $! > "$1/gc2.pid")
	exit 0' sh "$tmp") || fail "add"
bwait "$t" || fail "the job did not succeed"
expect "$t" '.runs[0].exit_code' 0

for f in gc1 gc2; do
	pid=$(cat "$tmp/$f.pid") || fail "no $f.pid"
	[ -n "$pid" ] || fail "empty $f.pid"
	# Settled means gone: the shim killed and reaped it before exiting.
	if kill -0 "$pid" 2>/dev/null; then
		fail "grandchild $f ($pid) still alive after the run settled: $(cat "/proc/$pid/stat" 2>/dev/null)"
	fi
done
echo PASS
