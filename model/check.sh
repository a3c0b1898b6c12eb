#!/usr/bin/env bash
# model/check.sh: checks berth's coordination protocol with spin
# (docs/VERIFICATION.md). Generates the model's transition guards from
# proto/run_moves.def, then runs every check:
#   safety   every assertion of model/berth.pml, full search: must pass;
#   liveness the LTL formula `settled` under weak fairness: must pass;
#   witness  each event of the model must be reachable (spin must find it);
#   mutant   each weakened model must be rejected, with a counterexample
#            that violates the property the mutant is about.
# Prints a line per check (states stored, transitions, depth, seconds) and
# exits 1 on any surprise: a failing check of the real model, a witness not
# reached, a mutant that passes (or fails for another reason), a search that
# did not complete.
#
#   model/check.sh [-j N] [--keep] [--only REGEX] [--full]
#
# -j N: checks run at once (default 2); --keep: keep the work directory;
# --full: also the safety search with every fault at once (about 11 million
# states, 2 GB and a minute of CPU: not in the test suite);
# --only: run the checks whose name matches REGEX. SPIN and CC override the
# tools; RUN_MOVES_DEF another table than proto/run_moves.def.
set -uo pipefail

MODEL=$(cd "$(dirname "$(realpath "${BASH_SOURCE[0]}")")" && pwd)
ROOT=$(dirname "$MODEL")
SPIN=${SPIN:-spin}
CC=${CC:-cc}
jobs=2
keep=0
full=0
only=
while (($#)); do
	case $1 in
	-j)
		jobs=${2:?-j needs a number}
		shift
		;;
	--keep) keep=1 ;;
	--full) full=1 ;;
	--only)
		only=${2:?--only needs a pattern}
		shift
		;;
	-h | --help)
		sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "check.sh: unknown argument '$1'" >&2
		exit 2
		;;
	esac
	shift
done
[[ $jobs =~ ^[1-9][0-9]*$ ]] || {
	echo "check.sh: -j wants a positive number, not '$jobs'" >&2
	exit 2
}
for tool in "$SPIN" "$CC" awk; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "check.sh: '$tool' not found (spin is Debian's 'spin': scripts/setup.sh installs it)" >&2
		exit 1
	}
done
DEF=${RUN_MOVES_DEF:-$ROOT/proto/run_moves.def}
[[ -r $DEF ]] || {
	echo "check.sh: no $DEF to take the transition guards from" >&2
	exit 1
}

work=$(mktemp -d "${TMPDIR:-/tmp}/berth-model.XXXXXX") || exit 1
cleanup() {
	if ((keep)); then
		echo "check.sh: work directory kept: $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cp "$MODEL/berth.pml" "$work/" || exit 1
if ! awk -f "$MODEL/gen_moves.awk" "$DEF" >"$work/moves.pml"; then
	echo "check.sh: cannot generate the guards from $DEF" >&2
	exit 1
fi

# The bounds (docs/VERIFICATION.md "Bounds"): two tickets, two slots, two
# attempts, three runs per ticket in every configuration.
FAULTS="-DCRASHES=1 -DUNV=1 -DFORGED=1 -DCANCELS=1"
CRASH2="-DCRASHES=2 -DUNV=1 -DFORGED=1 -DCANCELS=0"
LIVE="-DCRASHES=1 -DUNV=1 -DFORGED=0 -DCANCELS=1"
ALL="-DCRASHES=2 -DUNV=1 -DFORGED=1 -DCANCELS=1"
SAFE_CC="-O2 -DSAFETY -DNOCLAIM"
LIVE_CC="-O2 -DNFAIR=3 -DNOREDUCE"
MUT_CC="-O0 -DSAFETY -DNOCLAIM"
MUTL_CC="-O0 -DNFAIR=3 -DNOREDUCE"

# The longest first, so that with -j 2 they run beside the short ones.
# name | kind | spin -D flags | cc flags | pan flags | expected violation
# (a regular expression matched against pan's error line; a witness or a
# liveness check names its claim)
checks=(
	"liveness|pass|$LIVE|$LIVE_CC|-a -f|"
	"safety-crash2|pass|$CRASH2|$SAFE_CC||"
	"safety-faults|pass|$FAULTS|$SAFE_CC||"
	"witnesses|witness|$FAULTS -DWITNESSES|-O0 -DSAFETY||"
	"mutant-abandon-any|mutant|$FAULTS -DMUT_ABANDON_ANY|$MUT_CC||P_ABORTED|P_ONE_RUN|P_EXIT_OF_EXEC"
	"mutant-lease-takeover|mutant|$FAULTS -DMUT_LEASE_TAKEOVER|$MUT_CC||P_OWNER"
	"mutant-settle-any|mutant|$FAULTS -DMUT_SETTLE_ANY|$MUT_CC||P_OWNER|P_CODE|P_ONE_RUN|P_EXIT_OF_EXEC|P_UNSTARTED"
	"mutant-rx-any|mutant|$FAULTS -DMUT_RX_ANY|$MUT_CC||P_ONE_EXIT"
	"mutant-trust-label|mutant|$FAULTS -DMUT_TRUST_LABEL|$MUT_CC||P_ABORTED|P_ONE_RUN|P_OWNER|P_CODE"
	"mutant-no-confirm|mutant|$FAULTS -DMUT_NO_CONFIRM|$MUT_CC||P_ABORTED"
	"mutant-marker-late|mutant|$FAULTS -DMUT_MARKER_LATE|$MUT_CC||P_ABORTED"
	"mutant-go-early|mutant|$FAULTS -DMUT_GO_EARLY|$MUT_CC||P_RUNNING"
	"mutant-unv-dead|mutant|$FAULTS -DMUT_UNV_DEAD|$MUT_CC||P_CODE|P_ONE_RUN"
	"mutant-read-early|mutant|$FAULTS -DMUT_READ_EARLY|$MUT_CC||P_CODE"
	"mutant-no-takeover|mutant|$LIVE -DMUT_NO_TAKEOVER|$MUTL_CC|-a -f|acceptance cycle"
)

((full)) && checks=("safety-all|pass|$ALL|$SAFE_CC -DMEMLIM=4096||" "${checks[@]}")

# The witnesses: ltl w_<name> in berth.pml (under WITNESSES).
witnesses=$(sed -n 's/^ltl \(w_[a-z_]*\) .*/\1/p' "$MODEL/berth.pml")

# The numbers of one pan run's output, as "states transitions depth".
numbers() {
	local st tr dp
	st=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$1" | head -1)
	tr=$(sed -n 's/^ *\([0-9.e+]*\) transitions.*/\1/p' "$1" | head -1)
	dp=$(sed -n 's/.*depth reached \([0-9]*\).*/\1/p' "$1" | head -1)
	printf '%s %s %s' "${st:-?}" "${tr:-?}" "${dp:-?}"
}

# The CPU seconds (user + system) the calling shell's children have used,
# from what `times` printed into file $1 (its second line).
cpu() {
	tail -1 "$1" | awk '{
		n = split($0, f, /[ ms]+/); t = 0
		for (i = 1; i + 1 <= n; i += 2) t += f[i] * 60 + f[i + 1]
		printf "%.1f", t }'
}

# A search that did not cover everything it should have.
incomplete() {
	grep -qE 'max search depth too small|out of memory|MEMLIM|search not completed|too many processes' "$1"
}

# Runs one check in its own directory; writes its summary line to
# $dir/result and returns 0 when it went as expected.
run_check() {
	local name=$1 kind=$2 dflags=$3 ccflags=$4 panflags=$5 expect=$6
	local dir=$work/$name t0 t1 secs errs st tr dp why prop w nw=0 missed=()

	mkdir -p "$dir" && cp "$work/berth.pml" "$work/moves.pml" "$dir/" && cd "$dir" || return 1
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086 # the flags are words
	if ! "$SPIN" -a $dflags berth.pml >spin.out 2>&1 || ! $CC $ccflags -w -o pan pan.c >cc.out 2>&1; then
		printf '%-24s SURPRISE: does not build (see %s)\n' "$name" "$dir" >result
		keep=1
		return 1
	fi
	case $kind in
	witness)
		# One build, one search per witness: each must be violated.
		for w in $witnesses; do
			nw=$((nw + 1))
			# shellcheck disable=SC2086
			./pan -m100000 -N "$w" >"$w.out" 2>&1
			grep -q 'errors: [1-9]' "$w.out" || missed+=("$w")
		done
		t1=$(date +%s.%N)
		times >times.out
		secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
		if ((${#missed[@]})); then
			printf '%-24s SURPRISE: %d of %d witnesses not reached: %s\n' "$name" \
				"${#missed[@]}" "$nw" "${missed[*]}" >result
			keep=1
			return 1
		fi
		printf '%-24s %-9s all %d witnesses reached %37s %6ss, cpu %ss\n' "$name" ok: "$nw" "" \
			"$secs" "$(cpu times.out)" >result
		return 0
		;;
	esac
	# shellcheck disable=SC2086
	./pan -m100000 $panflags >pan.out 2>&1
	t1=$(date +%s.%N)
	times >times.out
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	read -r st tr dp < <(numbers pan.out)
	errs=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.out | head -1)
	# say VERDICT [NOTE]: the check's line
	say() {
		printf '%-24s %-9s %10s states %10s transitions depth %4s %6ss, cpu %ss%s\n' \
			"$name" "$1" "$st" "$tr" "$dp" "$secs" "$(cpu times.out)" "${2:+  ($2)}"
	}
	if [[ $kind == pass ]]; then
		if [[ $errs == 0 ]] && ! incomplete pan.out; then
			say ok: >result
			return 0
		fi
		say SURPRISE >result
		{
			grep -E 'violated|acceptance cycle|error' pan.out | head -3 | sed 's/^/    /'
			echo "    counterexample: cd $dir && $SPIN -t -p $dflags berth.pml"
		} >>result
		keep=1
		return 1
	fi
	# A mutant: rejected, for the expected reason, with a trail that replays.
	why=$(grep -E 'assertion violated|acceptance cycle|claim violated' pan.out | head -1)
	# shellcheck disable=SC2086
	if [[ $errs =~ ^[1-9] ]] && [[ $why =~ $expect ]] &&
		"$SPIN" -t $dflags berth.pml >trail.out 2>&1 && [[ -s berth.pml.trail ]]; then
		prop=$(grep -oE 'P_[A-Z_]+|acceptance cycle' <<<"$why" | tail -1)
		say rejected "$prop" >result
		return 0
	fi
	say SURPRISE >result
	if [[ $errs == 0 ]]; then
		echo "    the mutant passed: spin found no counterexample" >>result
	else
		echo "    rejected, but not for $expect: $why" >>result
	fi
	keep=1
	return 1
}

echo "model: $(wc -l <"$MODEL/berth.pml") lines of Promela, guards from ${DEF#"$ROOT"/} ($(grep -c '^MOVE(' "$DEF") moves); $("$SPIN" -V)"
selected=()
for c in "${checks[@]}"; do
	name=${c%%|*}
	[[ -z $only || $name =~ $only ]] && selected+=("$c")
done
((${#selected[@]})) || {
	echo "check.sh: no check matches '$only'" >&2
	exit 2
}

start=$(date +%s.%N)
pids=()
for c in "${selected[@]}"; do
	IFS='|' read -r name kind dflags ccflags panflags expect <<<"$c"
	# the expected violation may itself hold '|': it is the rest
	expect=${c#"$name|$kind|$dflags|$ccflags|$panflags|"}
	while (($(jobs -rp | wc -l) >= jobs)); do
		wait -n
	done
	(run_check "$name" "$kind" "$dflags" "$ccflags" "$panflags" "$expect") &
	pids+=($!)
done
fail=0
for i in "${!pids[@]}"; do
	wait "${pids[$i]}" || fail=1
	name=${selected[$i]%%|*}
	cat "$work/$name/result" 2>/dev/null || {
		echo "$name: no result"
		fail=1
	}
done
total=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
if ((fail)); then
	keep=1
	echo "model: FAILED (${total}s)"
	exit 1
fi
echo "model: all ${#selected[@]} checks as expected (${total}s)"
