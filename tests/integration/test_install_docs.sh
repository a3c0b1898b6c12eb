#!/usr/bin/env bash
# The installed man pages render with man -l without a warning, man finds
# them from the prefix (and from a build on PATH), and they describe every
# command and option the programs' --help names: each command of
# `berth --help` has its ".SS" section naming every long option of
# `berth CMD --help`, and the launcher's page every command and option of
# `berth-launch --help`. The bash completion loads and completes commands,
# options, option values and seat subcommands by driving _berth; the zsh
# completion passes zsh -n where zsh is installed.
set -u
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/install_lib.bash"
berth_test_init install_docs

P=$BERTH_TEST_DIR/prefix
install_into "$P"
command -v man >/dev/null || fail "no man (Debian man-db and groff-base; scripts/setup.sh installs them)"

# ------------------------------------------------------------------ man

for page in berth berth-launch; do
	f=$P/share/man/man1/$page.1
	out=$(MANWIDTH=80 man --warnings=all -l "$f" 2>"$BERTH_TEST_DIR/man.err")
	assert_eq 0 $? "man -l $page.1"
	[[ ! -s $BERTH_TEST_DIR/man.err ]] || fail "man -l $page.1 warns: $(cat "$BERTH_TEST_DIR/man.err")"
	grep -q "^NAME" <<<"$out" || fail "man -l $page.1 rendered no NAME section"
	grep -q "^       $page - " <<<"$out" || fail "man -l $page.1: no '$page - ...' line"
	assert_eq "$f" "$(MANPATH=$P/share/man man -w "$page")" "man -w $page with the prefix's MANPATH"
	# man-db maps a PATH entry .../bin to .../share/man: a build on PATH
	# has its pages too.
	assert_eq "$BERTH_BUILD/share/man/man1/$page.1" \
		"$(env -u MANPATH PATH="$BERTH_BIN:$SYS_PATH" man -w "$page")" "man -w $page with the build on PATH"
done
pass "the man pages render without warnings and are found"

# The long options a help text names, one a line.
help_opts() {
	grep -oE -- '(^|[][ ,|(])--[a-z][a-z0-9-]*' | sed -E 's/^[][ ,|(]//' | sort -u
}
# man_section PAGE SH|SS NAME: that section of the page's source, "\-" as "-".
man_section() {
	sed 's/\\-/-/g' "$1" | awk -v m=".$2 $3" '
		$0 == m || $0 == m " " { on = 1; next }
		/^\.SH / || (/^\.SS / && m ~ /^\.SS/) { on = 0 }
		on'
}
# man_tags PAGE SH|SS NAME: the tags of that section's .TP paragraphs (the
# line after each .TP): where an option is described, not only named.
man_tags() {
	man_section "$@" | awk 'tp { print; tp = 0 } /^\.TP/ { tp = 1 }'
}
# covers TEXT OPT: TEXT names OPT as a whole word.
covers() {
	grep -qE -- "(^|[^a-z0-9-])$2([^a-z0-9-]|\$)" <<<"$1"
}

page=$P/share/man/man1/berth.1
cmds=$("$BERTH_BIN/berth" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
[[ $(wc -w <<<"$cmds") -ge 18 ]] || fail "berth --help lists too few commands: $cmds"
opts=$(man_tags "$page" SH OPTIONS)
for o in $("$BERTH_BIN/berth" --help | help_opts); do
	covers "$opts" "$o" || fail "berth.1 OPTIONS does not describe $o"
done
# up and down take the launcher's options: berth-launch.1 describes them.
launch_opts=$(man_tags "$P/share/man/man1/berth-launch.1" SH OPTIONS)
n=0
for c in $cmds; do
	[[ -n $(man_section "$page" SS "$c") ]] ||
		fail "berth.1 has no '.SS $c' section (berth --help lists $c)"
	tags=$(man_tags "$page" SS "$c")
	[[ $c == up || $c == down ]] && tags=$launch_opts
	for o in $("$BERTH_BIN/berth" "$c" --help | help_opts); do
		covers "$tags" "$o" || fail "berth.1 section $c has no .TP for $o (berth $c --help names it)"
		n=$((n + 1))
	done
done
pass "berth.1 describes every command and $n options of --help"

page=$P/share/man/man1/berth-launch.1
lhelp=$("$BERTH_BIN/berth-launch" --help)
for c in $(sed -n 's/^usage: berth-launch \([a-z|]*\).*/\1/p' <<<"$lhelp" | tr '|' ' '); do
	[[ -n $(man_section "$page" SS "$c") ]] || fail "berth-launch.1 has no '.SS $c' section"
done
opts=$(man_tags "$page" SH OPTIONS)
for o in $(help_opts <<<"$lhelp"); do
	covers "$opts" "$o" || fail "berth-launch.1 OPTIONS does not describe $o"
done
env=$(man_tags "$page" SH ENVIRONMENT)
for v in $(grep -oE '^  BERTH_[A-Z_]+' <<<"$lhelp"); do
	covers "$env" "$v" || fail "berth-launch.1 ENVIRONMENT does not describe $v"
done
pass "berth-launch.1 describes every command, option and variable of --help"

# ------------------------------------------------------------------ bash

bc=$P/share/bash-completion/completions
cmp -s "$bc/berth" "$bc/berth-launch" || fail "the two bash completion files differ"
out=$(bash -c 'source "$1" && complete -p berth && complete -p berth-launch' _ "$bc/berth" 2>&1)
assert_eq 0 $? "loading the bash completion: $out"
assert_eq $'complete -F _berth berth\ncomplete -F _berth_launch berth-launch' "$out" "complete -p"

# complete FUNC WORD...: COMPREPLY of FUNC for the words (the last is the
# one being completed), sorted, on one line.
complete_words() {
	PATH=$P/bin:$SYS_PATH bash -c 'source "$1"; f=$2; shift 2
		COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
		"$f"; ((${#COMPREPLY[@]})) && printf "%s\n" "${COMPREPLY[@]}" | LC_ALL=C sort | tr "\n" " "' _ "$bc/berth" "$@"
}
mkdir -p "$BERTH_TEST_DIR/dirs/alpha" "$BERTH_TEST_DIR/dirs/beta"
touch "$BERTH_TEST_DIR/dirs/afile"
d=$BERTH_TEST_DIR/dirs
while IFS='|' read -r want words; do
	# shellcheck disable=SC2086
	got=$(complete_words $words)
	assert_eq "$want" "$got" "completion of '${words#* }'"
done <<EOF
should-stop show |_berth berth sh
seat |_berth berth se
--help --home --timeout --version |_berth berth --
--timeout |_berth berth --home /tmp --ti
--workdir |_berth berth add --wo
$d/alpha |_berth berth add --workdir $d/al
|_berth berth add --priority 1
sqlite3 |_berth berth add --name x sqlite
sqlite3 |_berth berth add -- sqlite
acquire activity |_berth berth seat ac
--help --owner |_berth berth seat release x --
--slots |_berth berth up --sl
--follow |_berth berth logs --fo
$d/afile $d/alpha |_berth berth trace --svg $d/a
heartbeat |_berth berth help heart
start status stop |_berth_launch berth-launch st
--kill-jobs |_berth_launch berth-launch stop --ki
$d/alpha |_berth_launch berth-launch start --home $d/al
EOF
pass "the bash completion completes commands, options, values and subcommands"

# ------------------------------------------------------------------ zsh

zf=$P/share/zsh/site-functions/_berth
[[ $(head -n 1 "$zf") == "#compdef berth berth-launch" ]] || fail "_berth does not start with #compdef"
if command -v zsh >/dev/null; then
	zsh -n "$zf" || fail "zsh -n $zf"
	pass "the zsh completion parses (zsh -n)"
else
	echo "SKIP: zsh is not installed: the zsh completion was not parsed (zsh -n)"
fi
