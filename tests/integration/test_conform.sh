#!/usr/bin/env bash
# Trace conformance is part of every test (lib.sh): a child test that runs
# a job through the real group passes; the same child with its database or
# its trace damaged fails, from check_invariants while the group runs and
# from its cleanup once it has ended well otherwise. A decision whose line
# a crash kept out of the file is no damage (trace_tail has it); two lost
# lines are. On PostgreSQL the store's global trace (trace_log) is checked
# too: a decision altered there, or a group's row gone, fails the child
# whose file is whole.
set -u
source "$(dirname "$0")/lib.sh"
berth_test_init conform

child=$BERTH_TEST_DIR/child.sh
cat >"$child" <<'EOF'
source "$BERTH_SRC/tests/integration/lib.sh"
berth_test_init conform_child
berth_launch
t=$(B add -- true) || fail "add"
wait_for 30 ticket_is "$t" succeeded
trace=$BERTH_HOME/trace/trace.jsonl
case $DAMAGE in
none) ;;
live-db)
	db_query "UPDATE runs SET started_ms = NULL"
	check_invariants
	;;
db)
	berth_stop
	db_query "UPDATE runs SET started_ms = NULL"
	;;
trace)
	berth_stop
	sed -i '/"verb":"start"/s/"granted"/"denied"/' "$trace"
	;;
lost-line | lost-lines)
	# The coordinator killed after the COMMIT of its last decision,
	# before writing the line (and every line after it).
	berth_stop
	s=$(db_query "SELECT max(seq) FROM (SELECT seq FROM trace_tails UNION ALL SELECT seq FROM trace_tail) AS t")
	[[ $DAMAGE == lost-lines ]] && s=$((s - 1))
	sed -i "/^{\"seq\":$s,/,\$d" "$trace"
	;;
global)
	berth_stop
	db_query "UPDATE trace_log SET lines = regexp_replace(lines, '(\"verb\":\"start\"[^}]*\"decision\":)\"granted\"', '\\1\"denied\"', 'g')"
	;;
global-row)
	berth_stop
	db_query "DELETE FROM trace_log WHERE lines LIKE '%\"verb\":\"claim\"%\"decision\":\"granted\"%'"
	;;
esac
pass "child ($DAMAGE)"
EOF

# child DAMAGE WANT_RC: runs the child; its output in $out.
child() {
	local rc
	out=$(DAMAGE=$1 TMPDIR=$BERTH_TEST_DIR bash "$child" 2>&1)
	rc=$?
	[[ $rc == "$2" ]] || fail "child ($1) exited $rc, want $2: $out"
}

child none 0
[[ $out == *"PASS: conform_child: child (none)"* ]] || fail "clean child: $out"
pass "a test whose trace conforms passes"

child live-db 1
[[ $out == *"FAIL: conform_child: the trace does not conform:"*"has started_ms NULL, but the trace granted a start"* ]] ||
	fail "live-db: $out"
child db 1
[[ $out == *"PASS: conform_child: child (db)"*"FAIL: conform_child: the trace does not conform:"*"has started_ms NULL, but the trace granted a start"* ]] ||
	fail "db: $out"
child trace 1
[[ $out == *"FAIL: conform_child: the trace does not conform:"*"start T1 "*" denied from supervisor "*"the database's event #"*" is another decision: start T1 "*" granted"* ]] ||
	fail "trace: $out"
pass "a test that ends well fails when its database or trace does not conform"

child lost-line 0
child lost-lines 1
[[ $out == *"FAIL: conform_child: the trace does not conform:"*"trace.jsonl ends at seq "*", the database's last decision is seq "* ]] ||
	fail "lost-lines: $out"
pass "a line lost between COMMIT and its write is taken from trace_tail; two lost lines fail"

if [[ -n ${BERTH_TEST_PG:-} ]]; then
	child global 1
	[[ $out == *"PASS: conform_child: child (global)"* && $out != *"FAIL: conform_child: the trace does not conform:"* &&
		$out == *"FAIL: conform_child: the global trace does not conform:"*"start T1 "*" denied from supervisor "*"the database's event #"*" is another decision: start T1 "*" granted"* ]] ||
		fail "global: $out"
	child global-row 1
	[[ $out == *"FAIL: conform_child: the global trace does not conform:"*"the database's event #"*" is another decision: "* ]] ||
		fail "global-row: $out"
	pass "on PostgreSQL a decision altered in the global trace, or a group's row gone, fails"
fi
