#!/usr/bin/env bash
# long-run.sh BUILD OUT [COORD_SECS [PARSER_SECS]]: the long fuzzing run
# recorded in docs/VERIFICATION.md. Two harnesses at a time, at nice 19 so
# that other work on the machine goes first: fuzz_coord for COORD_SECS
# (default 4200) alongside fuzz_exitrec, fuzz_trace and fuzz_cli one after
# the other for PARSER_SECS each (default 1200). Each starts from the tree's
# corpus (copied into OUT/corpus-<name>, which keeps what it finds); the
# harnesses are copied first, so rebuilding BUILD meanwhile changes nothing.
# OUT/summary.txt gets one line per harness: executions, exec/s, coverage
# (edges) and features, corpus size, time, and the number of crashes,
# timeouts and sanitizer reports (any of them is also left in OUT/art-<name>/).
set -uo pipefail

build=$1 out=$2 coord_secs=${3:-4200} parser_secs=${4:-1200}
src=$(cd "$(dirname "$(realpath "${BASH_SOURCE[0]}")")" && pwd)
mkdir -p "$out"
for h in coord exitrec trace cli; do
	cp "$build/fuzz/fuzz_$h" "$out/" || exit 1
	mkdir -p "$out/corpus-$h" "$out/art-$h"
	cp -n "$src/corpus/$h/"* "$out/corpus-$h/"
done

one() {
	local h=$1 secs=$2 t0 t1
	t0=$(date +%s)
	nice -n 19 "$out/fuzz_$h" -max_total_time="$secs" -timeout=30 -rss_limit_mb=2048 \
		-max_len=16384 -print_final_stats=1 -artifact_prefix="$out/art-$h/" \
		"$out/corpus-$h" >"$out/$h.log" 2>&1
	echo "$?" >"$out/$h.rc"
	t1=$(date +%s)
	echo $((t1 - t0)) >"$out/$h.secs"
}

one coord "$coord_secs" &
(one exitrec "$parser_secs"; one trace "$parser_secs"; one cli "$parser_secs") &
wait

{
	printf '%-8s %12s %8s %6s %7s %13s %6s %4s %s\n' harness executions exec/s cov ft corpus secs rc failures
	for h in coord exitrec trace cli; do
		last=$(grep -E '^#[0-9]+' "$out/$h.log" | tail -1)
		execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$h.log")
		eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$out/$h.log")
		cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
		ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
		corp=$(sed -n 's/.* corp: \([^ ]*\).*/\1/p' <<<"$last")
		fails=$(grep -cE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|SUMMARY: ' "$out/$h.log")
		printf '%-8s %12s %8s %6s %7s %13s %6s %4s %s\n' "$h" "${execs:-?}" "${eps:-?}" \
			"${cov:-?}" "${ft:-?}" "${corp:-?}" "$(cat "$out/$h.secs")" "$(cat "$out/$h.rc")" \
			"$fails (artifacts: $(find "$out/art-$h" -type f | wc -l))"
	done
} | tee "$out/summary.txt"
