# install_lib.bash: helpers of the install tests (test_install_*.sh), on
# top of lib.sh: this build installed with `cmake --install` into a
# temporary prefix, and the installed programs run with a PATH that does
# not contain the build, so that nothing can quietly come from build/bin.

# The build tree BERTH_BIN belongs to.
BERTH_BUILD=${BERTH_BUILD:-$(cd "$BERTH_BIN/.." && pwd)}
# A PATH with the system's programs only.
SYS_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# The actors an install puts in PREFIX/libexec/berth.
INSTALL_ACTORS=(berth-coordinator berth-supervisor berth-recovery berth-reaper berth-shim)

# install_into PREFIX [VAR=VALUE...]: `cmake --install` of this build into
# PREFIX, with the given environment (DESTDIR=...). Its output is kept in
# $BERTH_TEST_DIR/install.out.
install_into() {
	local prefix=$1
	shift
	[[ -f $BERTH_BUILD/CMakeCache.txt ]] || fail "no CMake build in $BERTH_BUILD"
	env "$@" cmake --install "$BERTH_BUILD" --prefix "$prefix" >"$BERTH_TEST_DIR/install.out" 2>&1 ||
		fail "cmake --install --prefix $prefix: $(cat "$BERTH_TEST_DIR/install.out")"
}

# The version the source says, project(berth VERSION x.y.z) in CMakeLists.txt:
# read here on its own, so a test compares the programs with the source, not
# with what the build believes.
source_version() {
	local v
	v=$(sed -n 's/^project(berth VERSION \([0-9][0-9.]*\).*/\1/p' "$BERTH_SRC/CMakeLists.txt")
	[[ -n $v ]] || fail "no project(berth VERSION ...) in $BERTH_SRC/CMakeLists.txt"
	echo "$v"
}

# The executable a process runs (/proc/PID/exe).
proc_exe() {
	readlink "/proc/$1/exe" 2>/dev/null
}
