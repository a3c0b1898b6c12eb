#!/usr/bin/env bash
# setup.sh: makes this machine able to build and test berth, then builds
# build/. Idempotent: installs only the Debian packages that are missing
# (as root, or through sudo), and an up-to-date build does nothing.
#
#   scripts/setup.sh [--no-build]
#
# Works from any directory and without stdin (CI runs it as root with no
# terminal). BERTH_JOBS overrides the build's parallelism (default: nproc).
set -euo pipefail

ROOT=$(cd "$(dirname "$(realpath "${BASH_SOURCE[0]}")")/.." && pwd)
build=1
for a in "$@"; do
	case $a in
	--no-build) build=0 ;;
	-h | --help)
		sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "setup.sh: unknown argument '$a'" >&2
		exit 2
		;;
	esac
done

# What each package is for:
#   cmake gcc make pkg-config   the build
#   libsqlite3-dev              the coordinator's database
#   libpq-dev                   the coordinator's other store: PostgreSQL (DESIGN §13)
#   postgresql                  the tests start a throw-away PostgreSQL server of
#                               their own (initdb, pg_ctl) and run the store on it
#   libnng-dev                  req/rep messaging between the actors
#   libprotobuf-c-dev, protobuf-c-compiler   the one message schema
#   libcmocka-dev               unit tests
#   sqlite3                     integration tests read berth.db
#   jq                          integration tests read --json output
#   procps util-linux           ps, pgrep, setsid, flock (launcher and tests)
#   libxml2-utils               xmllint: tests check that trace SVGs are well-formed XML
#   man-db groff-base           man -l: tests render the installed man pages and
#                               check that groff has no warning about them
#   clang libclang-rt-dev       the fuzz harnesses (tests/fuzz/): clang and its
#                               compiler-rt, which holds libFuzzer (-fsanitize=fuzzer)
#   librsvg2-bin                rsvg-convert: the trace tests draw their SVGs to PNG
#                               (a picture librsvg renders, not only well-formed
#                               XML), and a person looks at them the same way
#   spin                        model/check.sh model-checks the protocol (ctest -L model)
#   clang-format                scripts/format --check: the sources in the one house style
PKGS=(cmake gcc make pkg-config libsqlite3-dev sqlite3 libpq-dev postgresql libnng-dev libcmocka-dev
	protobuf-c-compiler libprotobuf-c-dev procps util-linux jq libxml2-utils
	man-db groff-base clang libclang-rt-dev librsvg2-bin spin clang-format)

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
	for p in "${PKGS[@]}"; do
		st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
		[[ $st == *"install ok installed"* ]] || missing+=("$p")
	done
else
	# Not Debian: say what is missing by the commands we use, install nothing.
	for c in cmake cc make pkg-config protoc-c sqlite3 jq ps setsid flock; do
		command -v "$c" >/dev/null 2>&1 || missing+=("$c")
	done
	if ((${#missing[@]})); then
		echo "setup.sh: not a Debian system and missing: ${missing[*]}" >&2
		echo "setup.sh: install them (and the nng, sqlite3, cmocka, protobuf-c headers) by hand" >&2
		exit 1
	fi
fi

if ((${#missing[@]})); then
	if [[ $(id -u) == 0 ]]; then
		as_root=()
	elif command -v sudo >/dev/null 2>&1; then
		as_root=(sudo)
		# Without a terminal sudo cannot ask for a password: fail clearly.
		[[ -t 0 ]] || as_root=(sudo -n)
	else
		echo "setup.sh: missing packages (${missing[*]}) and neither root nor sudo" >&2
		exit 1
	fi
	echo "setup.sh: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q </dev/null
	"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends "${missing[@]}" </dev/null
fi

((build)) || exit 0

jobs=${BERTH_JOBS:-$(nproc 2>/dev/null || echo 2)}
if [[ ! -f $ROOT/build/CMakeCache.txt ]]; then
	cmake -S "$ROOT" -B "$ROOT/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build "$ROOT/build" -j"$jobs"
