# supervise_lib.bash: sourced by tests/integration/test_supervise_*.sh after
# they set BIN and tmp. A bare coordinator and supervisor (no launcher), the
# cleanup that stops them and kills this home's job groups (identity-checked),
# and helpers: B (berth), fail, wait_until, expect, jqshow, alive, start_time,
# kill_jobs, start_coord, start_sup, bwait.

export BERTH_HOME=$tmp/home
unset BERTH_TIMEOUT BERTH_FAILPOINTS BERTH_FAILPOINTS_SHIM
mkdir -p "$BERTH_HOME"
coord= sup= extra=

# Start time (field 22 of /proc/PID/stat) of a live process, or nothing.
start_time() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	set -- $s
	echo "${20}"
}
# The job groups this test's runs left behind, killed only while their
# recorded leader (the shim) is still the same process.
kill_jobs() {
	local pgid st
	[ -f "$BERTH_HOME/berth.db" ] || return 0
	sqlite3 "file:$BERTH_HOME/berth.db?mode=ro" \
		"SELECT pgid, start_time FROM runs WHERE pgid IS NOT NULL" 2>/dev/null |
		while IFS='|' read -r pgid st; do
			[ "$(start_time "$pgid")" = "$st" ] && kill -KILL -- "-$pgid" 2>/dev/null
		done
}
# 0 while PID is a live process (not a zombie).
alive() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	[ "${s:0:1}" != Z ]
}
# Stops everything this test started, the supervisor first. An actor that
# does not stop within 15 s of SIGTERM fails the test (a graceful stop must
# never hang), and so does a sanitizer build's report in any actor's log
# (written as it exits).
cleanup() {
	local rc=$? p i
	kill_jobs
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
	if grep -q -e 'ERROR: [A-Za-z]*Sanitizer' -e 'runtime error:' "$tmp"/*.log 2>/dev/null; then
		echo "FAIL: sanitizer report:" >&2
		grep -h -A20 -e 'ERROR: [A-Za-z]*Sanitizer' -e 'runtime error:' "$tmp"/*.log >&2
		rc=1
	fi
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*" >&2
	for f in "$tmp"/*.log; do
		echo "--- $f" >&2
		tail -n 40 "$f" >&2
	done
	exit 1
}
B() { "$BIN/berth" "$@"; }
# wait_until SECONDS COMMAND...: polls until COMMAND succeeds.
wait_until() {
	local limit=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$limit" ] || return 1
		sleep 0.05
	done
}
# A jq expression over `show ID --json` must print the expected value.
expect() {
	local id=$1 expr=$2 want=$3 got
	got=$(B show "$id" --json | jq -c "$expr") || fail "show $id --json"
	[ "$got" = "$want" ] || fail "show $id: $expr = $got, want $want"
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
