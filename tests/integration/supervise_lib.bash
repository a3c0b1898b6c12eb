# supervise_lib.bash: the supervisor's tests (test_supervise_*.sh), on top of
# lib.sh (sourced first). A bare coordinator and supervisor, no launcher:
#
#   source "$(dirname "$0")/lib.sh"
#   source "$(dirname "$0")/supervise_lib.bash"
#   supervise_init exit          # $tmp, $BIN, BERTH_HOME=$tmp/home
#   start_coord
#   start_sup --tick-ms 200
#
# The cleanup stops them, the supervisor first. An actor that does not stop
# within 15 s of SIGTERM fails the test (a graceful stop must never hang),
# and so does a sanitizer build's report in any actor's log; then lib.sh's
# cleanup kills this home's job groups and keeps the directory on failure.

coord= sup= extra= tmp= BIN=

supervise_init() {
	berth_test_init "supervise_$1"
	tmp=$BERTH_TEST_DIR
	BIN=$BERTH_BIN
	unset BERTH_FAILPOINTS_SHIM
	trap supervise_cleanup EXIT
}

supervise_cleanup() {
	local rc=$? p i
	kill_recorded_groups
	for p in $sup $extra $coord; do
		kill "$p" 2>/dev/null || continue
		for i in $(seq 1 300); do
			alive "$p" || break
			sleep 0.05
		done
		if alive "$p"; then
			echo "FAIL: $p ($(tr '\0' ' ' < "/proc/$p/cmdline")) did not stop on SIGTERM;" \
				"wchan $(cat "/proc/$p/wchan" 2>/dev/null)" >&2
			kill -KILL "$p"
			rc=1
		fi
		wait "$p" 2>/dev/null
	done
	if sanitizer_reports "$tmp"/*.log; then
		echo "FAIL: sanitizer report (above)" >&2
		rc=1
	fi
	(exit "$rc")
	berth_cleanup
}

# fail MSG: as lib.sh's, with the tail of every actor's log.
fail() {
	local f
	echo "FAIL: $*" >&2
	for f in "$tmp"/*.log; do
		echo "--- $f" >&2
		tail -n 40 "$f" >&2
	done
	exit 1
}

jqshow() { B show "$1" --json | jq -r "$2"; }

start_coord() {
	"$BIN/berth-coordinator" --home "$BERTH_HOME" "$@" 2>>"$tmp/coordinator.log" &
	coord=$!
	wait_until 30 B list >/dev/null 2>&1 || fail "coordinator did not come up"
}

start_sup() {
	"$BIN/berth-supervisor" --home "$BERTH_HOME" "$@" 2>>"$tmp/supervisor.log" &
	sup=$!
}

# berth wait with a generous deadline; the status is returned.
bwait() { B wait "$@" --timeout 120s >/dev/null; }
