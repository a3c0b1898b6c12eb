# exhaust_lib.bash: resource exhaustion tests (test_exhaust_*.sh), on top of
# lib.sh (sourced first).
#
#   exhaust_tmpfs_home 4m   # BERTH_HOME becomes a 4 MiB tmpfs (root only)
#   exhaust_fill            # fills it to the last block
#   exhaust_unfill          # frees it again
#
# The cleanup stops the group, keeps a copy of the home's logs and trace on
# failure (they are printed by lib.sh's cleanup), kills what a test left
# outside the home's environment (exhaust_track PID), and unmounts the tmpfs.

EXHAUST_MOUNTED=0
EXHAUST_PIDS=()

# exhaust_tmpfs_home SIZE: mounts a tmpfs of SIZE as BERTH_HOME. A test
# that is not root cannot: it says so and passes (CI runs as root).
exhaust_tmpfs_home() {
	if (($(id -u) != 0)); then
		echo "SKIP: ${BERTH_TEST_NAME}: mounting a tmpfs needs root"
		trap - EXIT
		rm -rf "$BERTH_TEST_DIR"
		exit 0
	fi
	mount -t tmpfs -o "size=$1,mode=0700" tmpfs "$BERTH_HOME" || fail "mount a tmpfs on $BERTH_HOME"
	EXHAUST_MOUNTED=1
	trap exhaust_cleanup EXIT
}

# exhaust_fill: writes zeros into the home until no block is left.
exhaust_fill() {
	dd if=/dev/zero of="$BERTH_HOME/filler" bs=4k >/dev/null 2>&1
	# A few more tries: a block freed meanwhile is taken too.
	local i
	for i in 1 2 3; do
		dd if=/dev/zero bs=4k count=64 >>"$BERTH_HOME/filler" 2>/dev/null
	done
	(($(stat -f -c %a "$BERTH_HOME") == 0)) || fail "the home is not full: $(df "$BERTH_HOME")"
}

exhaust_unfill() {
	rm -f "$BERTH_HOME/filler"
}

# exhaust_track PID...: processes a test made that carry no berth
# environment (env -i): killed by the cleanup if they are still there.
exhaust_track() {
	EXHAUST_PIDS+=("$@")
}

exhaust_cleanup() {
	local rc=$? p
	trap - EXIT
	exhaust_unfill
	"$BERTH_BIN/berth-launch" stop --home "$BERTH_HOME" --kill-jobs >/dev/null 2>&1
	for p in "${EXHAUST_PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	if ((EXHAUST_MOUNTED)); then
		kill_recorded_groups
		pids=$(berth_home_pids)
		[[ -n $pids ]] && kill -KILL $pids 2>/dev/null
		rm -rf "$BERTH_TEST_DIR/home.saved"
		local keep=0
		((rc != 0)) || [[ ${BERTH_TEST_KEEP:-0} == 1 ]] && keep=1
		((keep)) && cp -a "$BERTH_HOME" "$BERTH_TEST_DIR/home.saved" 2>/dev/null
		local i
		for i in $(seq 1 50); do
			umount "$BERTH_HOME" 2>/dev/null && break
			sleep 0.1
		done
		mountpoint -q "$BERTH_HOME" && echo "exhaust: could not unmount $BERTH_HOME" >&2
		if ((keep)) && [[ -d $BERTH_TEST_DIR/home.saved ]]; then
			cp -a "$BERTH_TEST_DIR/home.saved/." "$BERTH_HOME/" 2>/dev/null
			rm -rf "$BERTH_TEST_DIR/home.saved"
		fi
	fi
	(exit "$rc")
	berth_cleanup
}

# exhaust_trace_whole: every line of the trace is a JSON object with every
# required key, and seq is strictly increasing (so never reused).
exhaust_trace_whole() {
	local t=$BERTH_HOME/trace/trace.jsonl bad
	[[ -s $t ]] || fail "no trace"
	[[ $(tail -c 1 "$t" | od -An -c | tr -d ' ') == '\n' ]] || fail "the trace ends with a torn line"
	jq -e -c 'select(has("seq") and has("ts_ms") and has("from") and has("verb")
		and has("decision") and has("reason") and has("latency_us") | not)' "$t" \
		>"$BERTH_TEST_DIR/trace.bad" 2>&1 || true
	[[ -s $BERTH_TEST_DIR/trace.bad ]] && fail "trace lines that are not whole: $(head -3 "$BERTH_TEST_DIR/trace.bad")"
	jq -e . "$t" >/dev/null 2>&1 || fail "the trace is not valid JSON lines: $(jq . "$t" 2>&1 >/dev/null | head -2)"
	bad=$(jq -r .seq "$t" | awk 'NR > 1 && $1 <= prev { print prev " then " $1 } { prev = $1 }' | head -3)
	[[ -z $bad ]] || fail "seq not strictly increasing in the trace: $bad"
}

# exhaust_logs_whole FILE...: every line of an actor's log is one log line:
# it starts with a timestamp and holds no second one (a torn line would
# run into the next).
exhaust_logs_whole() {
	local f bad
	for f in "$@"; do
		[[ -f $f ]] || continue
		bad=$(grep -v -E '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{12}Z [a-z]+ (debug|info|warn|error) ' "$f" |
			grep -v -e '^berth-' -e '^$' | head -3)
		[[ -z $bad ]] || fail "$f: lines that are not whole log lines: $bad"
		bad=$(grep -E '[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{12}Z .*[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{12}Z [a-z]+ (debug|info|warn|error) ' "$f" | head -3)
		[[ -z $bad ]] || fail "$f: torn log lines run into the next: $bad"
	done
}
