#!/usr/bin/env bash
# Output capture is byte for byte: 10 MB of random data and a binary stream
# with every byte value (NUL included) come back identical, and the run
# reports their size and a complete capture.
set -u
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/supervise_lib.bash"
supervise_init capture

start_coord
start_sup --tick-ms 200

head -c 10485760 /dev/urandom > "$tmp/big.src"
for i in $(seq 0 255); do printf "\\$(printf %03o "$i")"; done > "$tmp/bin.src"
cat "$tmp/bin.src" "$tmp/bin.src" > "$tmp/bin2.src"

t1=$(B add -- cat "$tmp/big.src") || fail "add"
# The binary stream twice: once through stdout, once through stderr.
t2=$(B add -- sh -c 'cat "$1"; cat "$1" >&2' sh "$tmp/bin.src") || fail "add"
bwait "$t1" "$t2" || fail "capture jobs did not succeed"

r1=$(jqshow "$t1" '.runs[0].id')
r2=$(jqshow "$t2" '.runs[0].id')
cmp "$tmp/big.src" "$BERTH_HOME/runs/$r1/output.log" || fail "10 MB output differs"
cmp "$tmp/bin2.src" "$BERTH_HOME/runs/$r2/output.log" || fail "binary output differs"
B logs "$t1-r1" > "$tmp/big.out" || fail "logs"
cmp "$tmp/big.src" "$tmp/big.out" || fail "berth logs differs from the 10 MB output"
B logs "$t2-r1" > "$tmp/bin.out" || fail "logs"
cmp "$tmp/bin2.src" "$tmp/bin.out" || fail "berth logs differs from the binary output"

expect "$t1" '.runs[0].output_bytes' 10485760
expect "$t1" '.runs[0].capture_complete' true
expect "$t2" '.runs[0].output_bytes' 512
expect "$t2" '.runs[0].capture_complete' true
echo PASS
