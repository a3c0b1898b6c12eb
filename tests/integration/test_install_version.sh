#!/usr/bin/env bash
# --version on every executable, in the build and installed, prints
# "<name> <version>" with the one version of project() in CMakeLists.txt,
# exits 0 and prints nothing else; the launcher run from the source tree
# reads the same version. A version nobody can read (stdout on /dev/full)
# is an error, not a silent success.
set -u
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/install_lib.bash"
berth_test_init install_version

v=$(source_version)
P=$BERTH_TEST_DIR/prefix
install_into "$P"

# check_version PATH NAME [ARGS...]: PATH [ARGS...] --version says "NAME v".
check_version() {
	local exe=$1 name=$2 out rc
	shift 2
	out=$(PATH=$SYS_PATH "$exe" "$@" --version 2>"$BERTH_TEST_DIR/err")
	rc=$?
	assert_eq 0 "$rc" "exit of $exe $* --version"
	assert_eq "$name $v" "$out" "$exe $* --version"
	[[ ! -s $BERTH_TEST_DIR/err ]] || fail "$exe --version wrote to stderr: $(cat "$BERTH_TEST_DIR/err")"
}

for exe in berth berth-launch "${INSTALL_ACTORS[@]}"; do
	check_version "$BERTH_BIN/$exe" "$exe"
done
check_version "$P/bin/berth" berth
check_version "$P/bin/berth-launch" berth-launch
for exe in "${INSTALL_ACTORS[@]}"; do
	check_version "$P/libexec/berth/$exe" "$exe"
done
# After the CLI's global options too; the launcher's source copy.
check_version "$BERTH_BIN/berth" berth --home "$BERTH_HOME" --timeout 1s
check_version "$BERTH_SRC/scripts/berth-launch" berth-launch
pass "every executable prints '<name> $v'"

# The man pages carry the same version.
for page in berth berth-launch; do
	grep -q "^\.TH .* \"berth $v\" " "$P/share/man/man1/$page.1" || fail "$page.1 does not say berth $v"
done
pass "the man pages say berth $v"

for exe in "$BERTH_BIN/berth" "$BERTH_BIN/berth-coordinator" "$BERTH_BIN/berth-shim"; do
	"$exe" --version >/dev/full 2>/dev/null
	assert_eq 1 $? "exit of $exe --version >/dev/full"
done
pass "--version into a full disk fails"
