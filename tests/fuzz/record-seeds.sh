#!/usr/bin/env bash
# record-seeds.sh BUILD OUTDIR: records the real messages of a group as
# seeds of the coordinator harness. A copy of the launcher starts the real
# supervisor, recovery, reaper and shim from BUILD/bin, with
# BUILD/tests/seed_coord in the coordinator's place (it decides with the
# real store and writes each request down); the real CLI then queues jobs
# that succeed, fail and retry, time out, are held, released, cancelled,
# and one that uses every worker verb from inside its job, plus seats. Each
# scenario is its own seed, OUTDIR/real-<name>, replayable from an empty
# database.
set -euo pipefail

build=$(realpath "$1") outdir=$(realpath "$2")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/berth-seeds.XXXXXX")
cleanup() {
	local h
	for h in "$tmp"/home-*; do
		[[ -d $h ]] && "$tmp/bin/berth-launch" stop --home "$h" --kill-jobs >/dev/null 2>&1
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir "$tmp/bin"
cp "$build/bin/berth-launch" "$tmp/bin/"
for b in berth berth-supervisor berth-recovery berth-reaper berth-shim; do
	ln -s "$build/bin/$b" "$tmp/bin/$b"
done
ln -s "$build/tests/seed_coord" "$tmp/bin/berth-coordinator"
B=$tmp/bin/berth

wait_settled() { "$B" wait "$@" --timeout 60s >/dev/null || true; }

scenario() {
	local name=$1
	export BERTH_HOME=$tmp/home-$name BERTH_SEED_OUT=$tmp/seed-$name
	"$tmp/bin/berth-launch" start --home "$BERTH_HOME" --slots 2 --lease-ms 3000 \
		--tick-ms 200 --grace-ms 300 >/dev/null
	"scenario_$name"
	"$tmp/bin/berth-launch" stop --home "$BERTH_HOME" --kill-jobs >/dev/null || true
	cp "$BERTH_SEED_OUT" "$outdir/real-$name"
	echo "$outdir/real-$name: $(stat -c %s "$outdir/real-$name") bytes"
}

scenario_life() {
	local a b c
	a=$("$B" add --name ok -- true)
	b=$("$B" add --name fails --retries 1 -- sh -c 'exit 3')
	c=$("$B" add --name worker -- sh -c 'berth progress 1/3 compiling; berth note "half way";
		berth heartbeat; berth should-stop; berth progress 3/3 done; exit 0')
	wait_settled "$a" "$b" "$c"
	"$B" show "$b" --json >/dev/null
	"$B" retry "$b" >/dev/null || true
	wait_settled "$b"
	"$B" list --json >/dev/null
}

scenario_control() {
	local h t s
	h=$("$B" add --hold --key k -- true)
	"$B" add --after "$h" -- true >/dev/null
	"$B" release "$h" >/dev/null || true
	"$B" hold "$h" >/dev/null || true
	t=$("$B" add --name slow --timeout 1s -- sleep 30)
	s=$("$B" add --name stopped -- sleep 30)
	sleep 1
	"$B" cancel "$s" >/dev/null || true
	"$B" cancel "$h" >/dev/null || true
	wait_settled "$t" "$s"
	"$B" add --in 1h --priority 5 --env A=b -- true >/dev/null
	"$B" add --every 2h -- true >/dev/null
	"$B" status --json >/dev/null || true
}

scenario_seats() {
	"$B" seat acquire build --key k --owner o1 --ttl 30s >/dev/null || true
	"$B" seat acquire build --key k --owner o2 --ttl 30s >/dev/null || true
	"$B" seat acquire tree --workdir "$tmp" --owner o1 >/dev/null || true
	"$B" seat acquire tree2 --workdir "$tmp" --owner o2 >/dev/null 2>&1 || true
	"$B" seat heartbeat build --owner o1 >/dev/null || true
	"$B" seat activity build 2/5 linking >/dev/null 2>&1 || true
	"$B" seat stop build --reason done >/dev/null || true
	"$B" seat list --json >/dev/null || true
	"$B" seat release build --owner o1 >/dev/null || true
	"$B" seat force-release tree >/dev/null || true
	a=$("$B" add --key k --workdir "$tmp" -- true)
	wait_settled "$a"
}

scenario life
scenario control
scenario seats
