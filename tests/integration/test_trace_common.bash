# Shared by the observability tests (tests/integration/test_trace_*.sh), on
# top of lib.sh. Sourced, never run: the test glob takes test_*.sh only.
#
# Each test gets lib.sh's directory: $T (= BERTH_TEST_DIR) with $H
# (= BERTH_HOME) and $T/w for workdirs; lib.sh's cleanup stops the group and
# kills whatever is left of this home (actors, jobs, background followers).

# shellcheck disable=SC1091
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
BIN=$BERTH_BIN

T= H=

tr_fail() {
	fail "$@"
}

# The shared-memory names of a home (common/board.c): the first 16 hex of
# the SHA-256 of its real path.
tr_shm_base() {
	local h
	h=$(printf %s "$(realpath "$1")" | sha256sum | cut -c1-16)
	echo "/dev/shm/berth-$h"
}

tr_setup() {
	berth_test_init "trace_$1"
	T=$BERTH_TEST_DIR
	H=$BERTH_HOME
	mkdir -p "$T/w"
	unset NO_COLOR
}

# The group with the given timings (lib.sh's defaults otherwise).
tr_start() {
	berth_launch "$@"
}

B() { "$BIN/berth" "$@"; }

# tr_wait SECONDS COMMAND...: polls until COMMAND succeeds; 1 on timeout,
# so the caller can say what it was waiting for.
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
