# lib.sh: sourced first by every integration test (tests/integration/test_*.sh);
# the specialised helpers build on it: coordinator_lib.bash (a bare
# coordinator), supervise_lib.bash (a bare coordinator and supervisor),
# crash_lib.bash (crash scenarios) and trace_lib.bash (observation).
#
# Sourcing only defines functions and BERTH_BIN / BERTH_SRC; a test calls
# berth_test_init to get its own BERTH_HOME and a cleanup on exit:
#
#   source "$(dirname "$0")/lib.sh"
#   berth_test_init launch_restart
#   berth_launch                       # the group, with short timings
#   t=$(berth add -- true)
#   wait_for 30 ticket_is "$t" succeeded
#   check_invariants
#   pass "a job ran"
#
# Every helper that fails calls fail, which exits the test with status 1;
# the cleanup then stops the group, kills what is left of this home, prints
# the launch logs and the trace's tail, and keeps the directory
# (BERTH_TEST_KEEP=1 keeps it on success too). A test that ends well is
# failed there all the same when its trace does not conform (berth-conform
# --final: docs/VERIFICATION.md, "Trace conformance"), and a home on
# PostgreSQL when its store's global trace does not (--global).

BERTH_SRC=${BERTH_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BERTH_BIN=${BERTH_BIN:-$BERTH_SRC/build/bin}
# The trace conformance checker (tests/conform/), built next to the unit tests.
BERTH_CONFORM=${BERTH_CONFORM:-$BERTH_BIN/../tests/berth-conform}
BERTH_TEST_DIR=
BERTH_TEST_NAME=

# ------------------------------------------------------------------ results

fail() {
	echo "FAIL: ${BERTH_TEST_NAME:+$BERTH_TEST_NAME: }$*" >&2
	exit 1
}

pass() {
	echo "PASS: ${BERTH_TEST_NAME:+$BERTH_TEST_NAME: }$*"
}

# assert_eq WANT GOT [WHAT]
assert_eq() {
	[[ $1 == "$2" ]] || fail "${3:-value}: got '$2', want '$1'"
}

# assert_ne UNWANTED GOT [WHAT]
assert_ne() {
	[[ $1 != "$2" ]] || fail "${3:-value}: got '$2', which it must not be"
}

# assert_match REGEX GOT [WHAT]
assert_match() {
	[[ $2 =~ $1 ]] || fail "${3:-value}: '$2' does not match /$1/"
}

# ------------------------------------------------------------------ setup

# berth_test_init [NAME]: a fresh directory holding BERTH_HOME (and room for
# the test's workdirs), the build's bin/ first on PATH, no inherited
# failpoints, and the cleanup trap.
berth_test_init() {
	BERTH_TEST_NAME=${1:-$(basename "$0" .sh)}
	[[ -x $BERTH_BIN/berth && -x $BERTH_BIN/berth-launch ]] ||
		fail "no berth build in $BERTH_BIN (set BERTH_BIN)"
	BERTH_TEST_DIR=$(mktemp -d "${TMPDIR:-/tmp}/berth-$BERTH_TEST_NAME.XXXXXX") ||
		fail "mktemp"
	export BERTH_HOME=$BERTH_TEST_DIR/home
	mkdir -p "$BERTH_HOME" && chmod 0700 "$BERTH_HOME"
	export PATH=$BERTH_BIN:$PATH
	berth_test_store
	unset BERTH_FAILPOINTS BERTH_FAILPOINTS_COORDINATOR BERTH_FAILPOINTS_SUPERVISOR \
		BERTH_FAILPOINTS_RECOVERY BERTH_FAILPOINTS_REAPER BERTH_TIMEOUT BERTH_OWNER \
		BERTH_RUN_ID BERTH_TOKEN BERTH_SOCKET
	trap berth_cleanup EXIT
}

# berth_test_store: with BERTH_TEST_PG set (the base URL of a server from
# tests/pg-server, postgresql:///postgres?host=...), this test's home keeps
# its store in a fresh database of that server: its URL goes into
# $BERTH_HOME/store, where every coordinator started on the home reads it
# (DESIGN §13), and the cleanup drops the database when the test passes.
BERTH_TEST_DB=
berth_test_store() {
	[[ -n ${BERTH_TEST_PG:-} ]] || return 0
	[[ $BERTH_TEST_PG == postgresql:///*\?* ]] ||
		fail "BERTH_TEST_PG must be postgresql:///DB?host=...: '$BERTH_TEST_PG'"
	BERTH_TEST_DB=t_${BERTH_TEST_NAME//[^a-zA-Z0-9_]/_}_$$
	psql -X -q -v ON_ERROR_STOP=1 "$BERTH_TEST_PG" -c "CREATE DATABASE $BERTH_TEST_DB" ||
		fail "cannot create the database $BERTH_TEST_DB on $BERTH_TEST_PG"
	store_url_for "$BERTH_TEST_DB" >"$BERTH_HOME/store"
	chmod 0600 "$BERTH_HOME/store"
}

# store_url_for DB: the test server's URL for database DB.
store_url_for() {
	local rest=${BERTH_TEST_PG#postgresql:///}
	echo "postgresql:///$1?${rest#*\?}"
}

# store_url: this home's PostgreSQL URL, or nothing for a sqlite home.
store_url() {
	[[ -f $BERTH_HOME/store ]] && head -n 1 "$BERTH_HOME/store"
}

# Pids of every process that belongs to this home: actors (--home HOME on
# their command line), shims (HOME as an argument), jobs and the test's own
# background commands (BERTH_HOME or BERTH_SOCKET in their environment).
# Never this shell.
berth_home_pids() {
	local d pid cmd env me=$$
	for d in /proc/[0-9]*; do
		pid=${d#/proc/}
		[[ $pid == "$me" || $pid == "$BASHPID" ]] && continue
		cmd=$({ tr '\0' ' ' <"$d/cmdline"; } 2>/dev/null) || continue
		if [[ $cmd == *"$BERTH_HOME "* || $cmd == *"$BERTH_HOME" ]]; then
			echo "$pid"
			continue
		fi
		env=$({ tr '\0' '\n' <"$d/environ"; } 2>/dev/null) || continue
		[[ $env == *"BERTH_SOCKET=ipc://$BERTH_HOME/"* || $env == *"BERTH_HOME=$BERTH_HOME"$'\n'* ]] &&
			echo "$pid"
	done
}

berth_cleanup() {
	local rc=$? pids f conformance_out fail_rc=0
	trap - EXIT
	[[ -n $BERTH_TEST_DIR ]] || exit "$rc"
	"$BERTH_BIN/berth-launch" stop --home "$BERTH_HOME" --kill-jobs >/dev/null 2>&1
	berth_stop_others
	kill_recorded_groups
	# The test's own background commands too (a `sleep 600` placed on a
	# pid, a follower): left running they would hold ctest's output pipe
	# and turn a failure into a timeout.
	pids=$(jobs -p)
	[[ -n $pids ]] && kill -KILL $pids 2>/dev/null
	pids=$(berth_home_pids)
	if [[ -n $pids ]]; then
		kill -KILL $pids 2>/dev/null
		wait_until 5 berth_pids_gone $pids
	fi
	# Every test that ends well ends with its trace checked against the
	# coordinator's transition relation and the database it left; the
	# group is down now, so every line must be in the database.
	# The file check is skipped for a home that shares its store with
	# other hosts' homes (BERTH_TEST_SHARED_STORE, the reason; the older
	# BERTH_TEST_NO_CONFORM says the same): the store's decisions are every
	# host's, and one home's trace file holds only its own.
	# A home on PostgreSQL is checked by the store's global trace as well
	# (berth-conform --global: every host's groups, in the store's order),
	# once, every home of the test being down by now (berth_stop_others).
	if ((rc == 0)) && [[ -z ${BERTH_TEST_SHARED_STORE:-${BERTH_TEST_NO_CONFORM:-}} ]] &&
		! conformance_out=$(berth_conformance --final 2>&1); then
		echo "FAIL: $BERTH_TEST_NAME: the trace does not conform:" >&2
		echo "$conformance_out" >&2
		fail_rc=1
	fi
	if ((rc == 0)) && [[ -n $(store_url) ]] &&
		! conformance_out=$(berth_conformance --global --final 2>&1); then
		echo "FAIL: $BERTH_TEST_NAME: the global trace does not conform:" >&2
		echo "$conformance_out" >&2
		fail_rc=1
	fi
	((fail_rc == 0)) || rc=1
	if ((rc == 0)) && [[ ${BERTH_TEST_KEEP:-0} != 1 ]]; then
		[[ -n $BERTH_TEST_DB ]] && psql -X -q "$BERTH_TEST_PG" \
			-c "DROP DATABASE IF EXISTS $BERTH_TEST_DB WITH (FORCE)" >/dev/null 2>&1
		rm -rf "$BERTH_TEST_DIR"
		berth_finally
		exit 0
	fi
	[[ -n $BERTH_TEST_DB ]] && echo "(kept the database $BERTH_TEST_DB)" >&2
	if ((rc != 0)); then
		for f in "$BERTH_HOME"/launch/*.log "$BERTH_HOME"/launch/*.err; do
			echo "---- ${f#"$BERTH_HOME"/} (last 30 lines)" >&2
			tail -n 30 "$f" >&2
		done
		if [[ -f $BERTH_HOME/trace/trace.jsonl ]]; then
			echo "---- trace/trace.jsonl (last 30 lines)" >&2
			tail -n 30 "$BERTH_HOME/trace/trace.jsonl" >&2
		fi
	fi
	echo "(kept $BERTH_TEST_DIR)" >&2
	berth_finally
	exit "$rc"
}

# berth_pg_server DB: a PostgreSQL server of this test's own, for a test
# that crashes its server or shares one store among several homes: started
# by tests/pg-server in a temporary directory (with the caller's
# environment: BERTH_PG_LISTEN=ADDR for TCP) and stopped at the very end of
# the cleanup, with an empty database DB. Sets pg_dir and pg_url (the
# database's URL). This test's home is left without a store of its own:
# the test says which store each of its homes uses.
berth_pg_server() {
	local base
	pg_dir=$(mktemp -d /tmp/berth-pg.XXXXXX) || fail "mktemp"
	berth_at_exit "$BERTH_SRC/tests/pg-server" stop "$pg_dir"
	base=$("$BERTH_SRC/tests/pg-server" start "$pg_dir") || fail "cannot start a PostgreSQL server"
	psql -X -q -v ON_ERROR_STOP=1 "$base" -c "CREATE DATABASE $1" ||
		fail "cannot create the database $1"
	pg_url=$("$BERTH_SRC/tests/pg-server" url "$pg_dir" "$1")
	rm -f "$BERTH_HOME/store"
	BERTH_TEST_DB=
}

# berth_also_home HOME: another home this test runs a group in (a second
# host): the cleanup stops it and kills what is left of it, with the
# test's own home, before anything else.
BERTH_TEST_HOMES=()
berth_also_home() {
	BERTH_TEST_HOMES+=("$1")
}

berth_stop_others() {
	local h pids
	for h in "${BERTH_TEST_HOMES[@]}"; do
		"$BERTH_BIN/berth-launch" stop --home "$h" --kill-jobs >/dev/null 2>&1
		pids=$(BERTH_HOME=$h berth_home_pids)
		[[ -n $pids ]] && kill -KILL $pids 2>/dev/null
	done
	return 0
}

# berth_at_exit CMD...: runs CMD at the very end of the cleanup, after the
# conformance check (a server the store lives on is stopped there).
BERTH_TEST_FINALLY=()
berth_at_exit() {
	BERTH_TEST_FINALLY+=("$(printf '%q ' "$@")")
}

berth_finally() {
	local c
	for c in "${BERTH_TEST_FINALLY[@]}"; do
		eval "$c" >/dev/null 2>&1
	done
}

# berth_pids_gone PID...: none of them is a live process (a zombie is gone).
berth_pids_gone() {
	local p s
	for p in "$@"; do
		s=$(cat "/proc/$p/stat" 2>/dev/null) || continue
		s=${s##*) }
		[[ ${s:0:1} == Z ]] || return 1
	done
}

# berth_launch [ARGS...]: starts the group for this home with short timings;
# later arguments override them (e.g. berth_launch --lease-ms 3000).
berth_launch() {
	"$BERTH_BIN/berth-launch" start --home "$BERTH_HOME" --lease-ms 1000 --tick-ms 100 \
		--grace-ms 500 "$@" >"$BERTH_TEST_DIR/launch.out" 2>&1 ||
		fail "berth-launch start $*: $(cat "$BERTH_TEST_DIR/launch.out")"
}

berth_stop() {
	"$BERTH_BIN/berth-launch" stop --home "$BERTH_HOME" "$@" >"$BERTH_TEST_DIR/stop.out" 2>&1 ||
		fail "berth-launch stop $*: $(cat "$BERTH_TEST_DIR/stop.out")"
}

# ------------------------------------------------------------------ waiting

# wait_until DEADLINE_S CMD...: runs CMD every 50 ms until it succeeds; 1
# when DEADLINE_S seconds pass first (the caller says what it waited for).
wait_until() {
	local secs=$1 deadline
	shift
	deadline=$((${EPOCHREALTIME/./} / 1000 + secs * 1000))
	until "$@"; do
		((${EPOCHREALTIME/./} / 1000 < deadline)) || return 1
		sleep 0.05
	done
}

# wait_for DEADLINE_S CMD...: the same, quietly, failing the test on timeout.
wait_for() {
	local secs=$1
	shift
	wait_until "$secs" "$@" >/dev/null 2>&1 || fail "timed out after ${secs}s waiting for: $*"
}

# never_within SECS CMD...: CMD stays false for SECS seconds (checked every
# 50 ms, so a violation is seen when it happens); 1 as soon as it holds.
# For what must not happen, where no event says "it was considered".
never_within() {
	! wait_until "$@"
}

# trace_count JQ: how many lines of this home's trace match the jq
# condition JQ.
trace_count() {
	jq -c "select($1)" "$BERTH_HOME/trace/trace.jsonl" 2>/dev/null | wc -l
}

# recovery_passes_after MS N: recovery has begun N passes (its scans) after
# MS (ms since the epoch): it looked N times at what it found then.
recovery_passes_after() {
	(($(trace_count ".from == \"recovery\" and .verb == \"scan\" and .ts_ms > $1") >= $2))
}

# ------------------------------------------------------------------ facts

# B ARGS...: the CLI of this build.
B() {
	"$BERTH_BIN/berth" "$@"
}

# expect ID EXPR WANT: a jq expression over `berth show ID --json` prints
# WANT (compact JSON).
expect() {
	local id=$1 expr=$2 want=$3 got
	got=$(B show "$id" --json | jq -c "$expr") || fail "show $id --json"
	[[ $got == "$want" ]] || fail "show $id: $expr = $got, want $want"
}

# db_query SQL: SQL on this home's store ('|'-separated rows): sqlite3 on
# berth.db, or psql on its PostgreSQL database.
db_query() {
	local url
	if url=$(store_url); then
		psql -X -q -A -t -F '|' -v ON_ERROR_STOP=1 "$url" -c "$1"
	else
		sqlite3 -batch -noheader -cmd '.timeout 5000' "$BERTH_HOME/berth.db" "$@"
	fi
}

ticket_state() {
	"$BERTH_BIN/berth" show "$1" --json | jq -r .state
}

# ticket_is ID STATE: for wait_for.
ticket_is() {
	[[ $(ticket_state "$1" 2>/dev/null) == "$2" ]]
}

# run_field TICKET INDEX FIELD: a field of the ticket's INDEX-th run (0 is the
# first attempt; -1 the latest) from `berth show --json`.
run_field() {
	"$BERTH_BIN/berth" show "$1" --json | jq -r ".runs[$2].$3"
}

# run_is TICKET INDEX STATE: for wait_for.
run_is() {
	[[ $(run_field "$1" "$2" state 2>/dev/null) == "$3" ]]
}

# Pid of a running actor as the launcher recorded it.
actor_pid() {
	cat "$BERTH_HOME/launch/$1.pid" 2>/dev/null
}

# Restarts of an actor counted by the launcher.
actor_restarts() {
	cat "$BERTH_HOME/launch/$1.restarts" 2>/dev/null || echo 0
}

# actor_up ACTOR: the launcher's pid file names a live process of ACTOR.
actor_up() {
	local pid
	pid=$(actor_pid "$1") || return 1
	[[ -n $pid ]] && alive "$pid" &&
		[[ $({ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null) == *"berth-$1"* ]]
}

# start_time PID: field 22 of /proc/PID/stat (the start time that, with the
# pid, is a process's identity), or nothing.
start_time() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	set -- $s
	echo "${20}"
}

# kill_recorded_groups: SIGKILL to every job group this home's database
# recorded, only while its leader is still the recorded process (pid and
# start time): a reused pid belongs to a stranger.
kill_recorded_groups() {
	local pid st pg
	[[ -f $BERTH_HOME/berth.db || -f $BERTH_HOME/store ]] || return 0
	while IFS='|' read -r pid st pg; do
		[[ -n $pid && $pid -gt 1 && -n $pg && $pg -gt 1 ]] || continue
		[[ $(start_time "$pid") == "$st" ]] && kill -KILL -- "-$pg" 2>/dev/null
	done < <(db_query "SELECT pid, start_time, pgid FROM runs WHERE pid > 1" 2>/dev/null)
	return 0
}

# sanitizer_reports FILE...: prints and returns 0 when a sanitizer build
# wrote a report into any of the files (each actor writes one as it exits).
sanitizer_reports() {
	grep -q -e 'ERROR: [A-Za-z]*Sanitizer' -e 'runtime error:' "$@" 2>/dev/null || return 1
	grep -h -A20 -e 'ERROR: [A-Za-z]*Sanitizer' -e 'runtime error:' "$@" >&2
	return 0
}

# alive PID: the process exists and is not a zombie.
alive() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	[[ ${s:0:1} != Z ]]
}

gone() {
	! alive "$1"
}

# group_gone PGID: no live (non-zombie) process is left in the group.
group_gone() {
	local pg=$1 d s
	for d in /proc/[0-9]*; do
		s=$(cat "$d/stat" 2>/dev/null) || continue
		s=${s##*) }
		set -- $s
		[[ $1 != Z && $3 == "$pg" ]] && return 1
	done
	return 0
}

# shm_base HOME: the status board's segment of HOME (common/shm.c: the first
# 16 hex of the SHA-256 of its real path); the trace ring is "$base-ring".
shm_base() {
	local h
	h=$(printf %s "$(realpath -m -- "$1")" | sha256sum | cut -c1-16)
	echo "/dev/shm/berth-$h"
}

# check_invariants: the shared invariant checker on this home, and the
# trace conformance checker, of its file and (a home on PostgreSQL) of its
# store's global trace (which the cleanup runs again at the end).
check_invariants() {
	local out
	out=$(bash "$BERTH_SRC/tests/integration/check_invariants.sh" "$BERTH_HOME" 2>&1) ||
		fail "invariants violated:"$'\n'"$out"
	out=$(berth_conformance 2>&1) || fail "the trace does not conform:"$'\n'"$out"
	if [[ -n $(store_url) ]]; then
		out=$(berth_conformance --global 2>&1) ||
			fail "the global trace does not conform:"$'\n'"$out"
	fi
}

# berth_conformance [--global] [--final]: berth-conform on this home
# (docs/VERIFICATION.md, "Trace conformance"; --global: its store's global
# trace, a home on PostgreSQL); safe while the group runs. A missing checker
# is a failure, never a pass.
berth_conformance() {
	if [[ ! -x $BERTH_CONFORM ]]; then
		echo "no trace conformance checker at $BERTH_CONFORM (build berth-conform)"
		return 2
	fi
	"$BERTH_CONFORM" "$@" "$BERTH_HOME"
}

# count_procs STRING: live processes whose command line contains STRING
# (fixed string, arguments joined by spaces).
count_procs() {
	local d n=0 cmd s
	for d in /proc/[0-9]*; do
		cmd=$({ tr '\0' ' ' <"$d/cmdline"; } 2>/dev/null) || continue
		[[ $cmd == *"$1"* ]] || continue
		s=$(cat "$d/stat" 2>/dev/null) || continue
		s=${s##*) }
		[[ ${s:0:1} != Z ]] && n=$((n + 1))
	done
	echo "$n"
}

# The number of live processes of one actor for this home.
actor_count() {
	count_procs "berth-$1 --home $BERTH_HOME"
}
