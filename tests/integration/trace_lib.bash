# trace_lib.bash: the observability tests (tests/integration/test_trace_*.sh),
# on top of lib.sh (sourced first).
#
# Each test gets lib.sh's directory: $T (= BERTH_TEST_DIR) with $H
# (= BERTH_HOME) and $T/w for workdirs; lib.sh's cleanup stops the group and
# kills whatever is left of this home (actors, jobs, background followers).

BIN=$BERTH_BIN

T= H=

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

# The SVG drawn to a PNG by librsvg (scripts/setup.sh installs it): a
# picture a viewer can render, not only well-formed XML. PNG=FILE keeps it.
tr_renders() {
	local png=${2:-$T/$(basename "$1" .svg).png}
	command -v rsvg-convert >/dev/null 2>&1 || {
		echo "(no rsvg-convert: the SVG was not drawn)" >&2
		return 0
	}
	rsvg-convert -o "$png" "$1" && [[ -s $png ]]
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
