#!/usr/bin/env bash
# run.sh HARNESS CORPUS SECONDS ARTIFACTS: the short run of one libFuzzer
# harness in the test suite. It starts from the corpus in the tree (read
# only: what it finds new goes to a temporary directory) and runs for
# SECONDS; a crash, a sanitizer report, a broken check, a leak or a slow
# input fails the test, and the input that did it is left in ARTIFACTS/
# (reproduce with: HARNESS ARTIFACTS/crash-...).
set -uo pipefail

bin=$1 corpus=$2 secs=$3 art=$4
[[ -x $bin ]] || { echo "run.sh: $bin is not built (cmake --build build-fuzz --target fuzzers)" >&2; exit 1; }
[[ -d $corpus ]] || { echo "run.sh: no corpus $corpus" >&2; exit 1; }
new=$(mktemp -d "${TMPDIR:-/tmp}/berth-fuzz-new.XXXXXX")
trap 'rm -rf "$new"' EXIT
mkdir -p "$art"

"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
	-print_final_stats=1 -artifact_prefix="$art/" "$new" "$corpus"
rc=$?
if ((rc != 0)); then
	echo "run.sh: $(basename "$bin") failed (exit $rc); the input is in $art/:" >&2
	ls -l "$art" >&2
	exit 1
fi
echo "run.sh: $(basename "$bin"): no failure in ${secs}s, $(find "$new" -type f | wc -l) new inputs"
