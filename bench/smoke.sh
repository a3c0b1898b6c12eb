#!/bin/sh
# ctest bench_smoke_coord: keeps the benchmark code from rotting. Runs the
# in-process coordination bench (a few hundred lives) and the claim-at-scale
# bench on a temporary home, and the in-process bench on a throw-away
# PostgreSQL server (tests/pg-server; what bench/run --store postgresql
# measures), and checks that every life completed. It never judges speed.
set -eu
BENCH=$1
PGSERVER=$(dirname "$0")/../tests/pg-server
dir=$(mktemp -d /tmp/berth-bench-smoke.XXXXXX)
# The server's own directory: as root it runs as user postgres, who cannot
# enter $dir.
pg=$(mktemp -d /tmp/berth-bench-smoke-pg.XXXXXX)
trap '"$PGSERVER" stop "$pg" >/dev/null 2>&1; rm -rf "$dir" "$pg"' EXIT
trap 'exit 130' INT TERM

mkdir "$dir/life" "$dir/claim" "$dir/pg"
"$BENCH" --home "$dir/life" --sync normal --runs 300 --deadline-s 40 >"$dir/life.out"
cat "$dir/life.out"
grep -qx 'runs=300' "$dir/life.out"
grep -qx 'complete=1' "$dir/life.out"
"$BENCH" --home "$dir/claim" --what claim --sync normal --queued 500 --runs 50 --deadline-s 40 >"$dir/claim.out"
cat "$dir/claim.out"
grep -qx 'claims=50' "$dir/claim.out"
grep -q '^claim_p50_us=[0-9]' "$dir/claim.out"

base=$("$PGSERVER" start "$pg")
psql -X -q -v ON_ERROR_STOP=1 "$base" -c 'CREATE DATABASE smoke'
"$BENCH" --home "$dir/pg" --store "$("$PGSERVER" url "$pg" smoke)" --runs 100 --fused \
	--deadline-s 40 >"$dir/pg.out"
cat "$dir/pg.out"
grep -qx 'store=postgresql' "$dir/pg.out"
grep -qx 'runs=100' "$dir/pg.out"
grep -qx 'complete=1' "$dir/pg.out"
# The life really went through that database.
[ "$(psql -X -At "$("$PGSERVER" url "$pg" smoke)" -c "SELECT count(*) FROM runs WHERE state = 'succeeded'")" = 100 ]
