# coordinator_lib.bash: helpers of the coordinator's integration tests
# (test_coordinator_*.sh), on top of lib.sh (sourced first). They start berth-coordinator
# alone, without the launcher, to crash and restart it at will.

# The raw REQ client (tests/integration/sendraw.c), built next to the unit
# tests.
SENDRAW=${SENDRAW:-$BERTH_BIN/../tests/berth-sendraw}
coord=

# coord_test_init NAME: berth_test_init plus the removal of this home's
# status board and trace ring (shm_base) on exit, whichever way the
# coordinator ended.
coord_test_init() {
	berth_test_init "$1"
	[[ -x $SENDRAW ]] || fail "no $SENDRAW (build the berth-sendraw target)"
	trap coord_cleanup EXIT
}

coord_cleanup() {
	local rc=$? h
	if ((rc != 0)) && [[ -f $BERTH_TEST_DIR/coord.log ]]; then
		echo "---- coord.log (last 30 lines)" >&2
		tail -n 30 "$BERTH_TEST_DIR/coord.log" >&2
	fi
	h=$(shm_base "$BERTH_HOME")
	rm -f "$h" "$h-ring"
	(exit "$rc")
	berth_cleanup
}

# sendraw ARGS...: one raw request on this home's socket.
sendraw() {
	"$SENDRAW" "ipc://$BERTH_HOME/coordinator.sock" "$@"
}

coord_answers() {
	sendraw version 1 >/dev/null 2>&1
}

# coord_start [ARGS...]: a coordinator for this home in the background
# (pid in $coord, log in coord.log), once it answers.
coord_start() {
	"$BERTH_BIN/berth-coordinator" --home "$BERTH_HOME" "$@" \
		>>"$BERTH_TEST_DIR/coord.log" 2>&1 &
	coord=$!
	wait_for 30 coord_answers
}

# coord_stop SIGNAL: a clean stop, exit status 0.
coord_stop() {
	local rc=0
	kill "-$1" "$coord"
	wait "$coord" || rc=$?
	coord=
	assert_eq 0 "$rc" "exit status after SIG$1"
}
