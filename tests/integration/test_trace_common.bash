# Shared by the observability tests (tests/integration/test_trace_*.sh).
# Sourced, never run: the test glob takes test_*.sh only.
#
# Each test gets its own directory $T: $T/home is BERTH_HOME, $T/bin holds a
# copy of the launcher among links to the built actors (the launcher finds
# its actors next to itself and resolves symlinks, so it must be a copy).

set -u
BIN=${BERTH_BIN:-$(cd "$(dirname "$0")/../../build/bin" && pwd)}
SRC=${BERTH_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
unset BERTH_FAILPOINTS BERTH_TIMEOUT BERTH_FAILPOINTS_COORDINATOR BERTH_FAILPOINTS_SUPERVISOR \
	BERTH_FAILPOINTS_RECOVERY BERTH_FAILPOINTS_REAPER NO_COLOR

T= H=
keep=${BERTH_TEST_KEEP:-0}

tr_fail() {
	local f
	echo "FAIL: $*" >&2
	if [[ -n $H && -d $H/launch ]]; then
		for f in "$H"/launch/*.log; do
			echo "---- ${f##*/} (last 20 lines)" >&2
			tail -n 20 "$f" >&2
		done
	fi
	exit 1
}

# The shared-memory names of a home (common/board.c): the first 16 hex of
# the SHA-256 of its real path.
tr_shm_base() {
	local h
	h=$(printf %s "$(realpath "$1")" | sha256sum | cut -c1-16)
	echo "/dev/shm/berth-$h"
}

tr_setup() {
	local f launcher=$BIN/berth-launch
	[[ -x $launcher ]] || launcher=$SRC/scripts/berth-launch
	T=$(mktemp -d "/tmp/berth-trace-$1.XXXXXX")
	H=$T/home
	mkdir -p "$H" "$T/bin" "$T/w"
	export BERTH_HOME=$H
	cp "$launcher" "$T/bin/berth-launch"
	chmod +x "$T/bin/berth-launch"
	for f in "$BIN"/berth*; do
		[[ ${f##*/} == berth-launch ]] && continue
		ln -s "$f" "$T/bin/${f##*/}"
	done
	trap tr_cleanup EXIT
}

tr_cleanup() {
	local rc=$? f pid base
	if [[ -n $H ]]; then
		"$T/bin/berth-launch" stop --home "$H" --kill-jobs >/dev/null 2>&1
		# Actors left without their monitor (the status test kills it).
		for f in "$H"/launch/*.pid; do
			pid=$(cat "$f" 2>/dev/null) || continue
			[[ -n $pid ]] && kill -KILL "$pid" 2>/dev/null
		done
		base=$(tr_shm_base "$H")
		rm -f "$base" "$base-ring"
	fi
	if ((rc == 0)) && [[ $keep != 1 ]]; then
		rm -rf "$T"
	else
		echo "(kept $T)" >&2
	fi
	exit $rc
}

tr_start() {
	"$T/bin/berth-launch" start --home "$H" "$@" >"$T/launch.out" 2>&1 ||
		tr_fail "berth-launch start: $(cat "$T/launch.out")"
}

B() { "$BIN/berth" "$@"; }

# tr_wait SECONDS COMMAND...: polls until COMMAND succeeds.
tr_wait() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		((SECONDS < deadline)) || return 1
		sleep 0.1
	done
}

# XML well-formedness: xmllint when installed, else python3's parser.
tr_wellformed() {
	if command -v xmllint >/dev/null 2>&1; then
		xmllint --noout "$1"
	elif command -v python3 >/dev/null 2>&1; then
		python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$1"
	else
		echo "(no XML checker installed; well-formedness is covered by unit_trace_render)" >&2
	fi
}
