#!/bin/sh
# ctest bench_smoke_coord: keeps the benchmark code from rotting. Runs the
# in-process coordination bench (a few hundred lives) and the claim-at-scale
# bench on a temporary home and checks that every life completed. It never
# judges speed.
set -eu
BENCH=$1
dir=$(mktemp -d /tmp/berth-bench-smoke.XXXXXX)
trap 'rm -rf "$dir"' EXIT INT TERM

mkdir "$dir/life" "$dir/claim"
"$BENCH" --home "$dir/life" --sync normal --runs 300 --deadline-s 40 >"$dir/life.out"
cat "$dir/life.out"
grep -qx 'runs=300' "$dir/life.out"
grep -qx 'complete=1' "$dir/life.out"
"$BENCH" --home "$dir/claim" --what claim --sync normal --queued 500 --runs 50 --deadline-s 40 >"$dir/claim.out"
cat "$dir/claim.out"
grep -qx 'claims=50' "$dir/claim.out"
grep -q '^claim_p50_us=[0-9]' "$dir/claim.out"
