#!/usr/bin/env bash
# Text a job or a user wrote reaches the terminal escaped (DESIGN §12,
# issue 10): a ticket name, a progress label, a note and an id carrying
# ESC[2J (clear the screen), ESC[31m (colour), a newline (a forged row) and
# BEL come out of status, show, list, trace (timeline, SVG, Mermaid) and the
# error messages as \e[2J\e[31m...\n...\x07, never as the raw bytes.
set -u
source "$(dirname "$0")/lib.sh"
berth_test_init cli_escape
berth_launch

H=$(printf '\033[2J\033[31mred\nT9       ready\a')
want='\e[2J\e[31mred\nT9       ready\x07'
flag=$BERTH_TEST_DIR/go

# no_raw WHAT TEXT: TEXT holds no ESC, no BEL, and the escaped form.
no_raw() {
	[[ $2 != *$'\e'* ]] || fail "$1: a raw ESC byte reached the output"
	[[ $2 != *$'\a'* ]] || fail "$1: a raw BEL byte reached the output"
	[[ $2 == *"$want"* ]] || fail "$1: the escaped text is missing: $2"
}

t=$(berth add --name "$H" -- sh -c '
	berth progress 1/2 "$1" || exit 11
	berth note "$1" || exit 12
	while [ ! -e "$2" ]; do sleep 0.05; done' job "$H" "$flag") || fail "add"
has_label_and_note() {
	[[ $(berth show "$t" --json | jq -r '.runs[-1].progress.label // empty, (.runs[-1].notes | length)') == "$H"$'\n'1 ]]
}
wait_for 30 has_label_and_note

out=$(berth status) || fail "status: $out"
no_raw status "$out"
out=$(berth show "$t") || fail "show"
no_raw show "$out"
# The name, the command (it carries the text as an argument), the label
# and the note.
[[ $(grep -c -F "$want" <<<"$out") == 4 ]] || fail "show: want 4 escaped copies: $out"
out=$(berth list) || fail "list"
no_raw list "$out"
# One row per ticket: the newline in the name forged none.
[[ $(wc -l <<<"$out") == 2 ]] || fail "list: a forged row: $out"

# An id the user typed is quoted in the error (stderr); it is refused
# before anything is asked. A seat item is free text: its error reaches the
# trace.
err=$(berth show "$H" 2>&1 >/dev/null) && fail "show of a bad id succeeded"
no_raw "show error" "$err"
err=$(berth seat show "$H" 2>&1 >/dev/null) && fail "seat show of no seat succeeded"
no_raw "seat show error" "$err"
out=$(berth trace) || fail "trace"
no_raw trace "$out"
berth trace --svg "$BERTH_TEST_DIR/t.svg" 2>/dev/null || fail "trace --svg"
svg=$(cat "$BERTH_TEST_DIR/t.svg")
no_raw "trace --svg" "$svg"
LC_ALL=C grep -q -P '[\x00-\x09\x0b-\x1f\x7f]' "$BERTH_TEST_DIR/t.svg" &&
	fail "trace --svg: a control byte in the SVG"
out=$(berth trace --mermaid) || fail "trace --mermaid"
no_raw "trace --mermaid" "$out"

# JSON keeps the text itself, escaped as JSON escapes it.
[[ $(berth show "$t" --json) == *'\u001b[2J\u001b[31mred\nT9       ready\u0007'* ]] ||
	fail "show --json: the name is not escaped as JSON"

touch "$flag"
wait_for 30 ticket_is "$t" succeeded
check_invariants
pass "name, label, note and id come out escaped in status, show, list, trace and errors"
