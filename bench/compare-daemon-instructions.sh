#!/usr/bin/env bash
# Before/after for the daemon benchmark in instructions rather than time: builds REV (a
# commit, default HEAD~1) in a temporary worktree and this tree, runs bench/daemon_bench.py
# once on each with dispatchd under callgrind (--callgrind), and prints the instructions
# dispatchd ran per message during the load and their ratio. A count of instructions does
# not drift with the machine's load as CPU time does (a quarter and more between minutes
# here), so two builds compare to the percent even while something else runs; it does not
# see what instructions cost (cache misses, system calls waiting), which CPU time does: the
# two scripts answer different questions. Each callgrind file is kept in OUT for
# `callgrind_annotate --inclusive=yes`.
#
# Usage: bench/compare-daemon-instructions.sh [REV]   Environment: COUNT (2000), CONCURRENCY
# (16), BUILD_DIR (<repo>/build-bench-daemon), OUT (a new temporary folder), EXTRA (more
# daemon_bench.py options for both sides). Needs valgrind.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$ROOT/bench/daemon-build.sh"
REV="${1:-HEAD~1}"
BUILD="${BUILD_DIR:-$ROOT/build-bench-daemon}"
OUT="${OUT:-$(mktemp -d)}"
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
OLD="$(mktemp -d)"
build_both "$ROOT" "$REV" "$OLD" "$BUILD"
one() {  # BUILD SOURCE NAME
  python3 "$ROOT/bench/daemon_bench.py" "$1" "$2" --runs 1 --starts 1 --count "${COUNT:-2000}" \
    --concurrency "${CONCURRENCY:-16}" ${EXTRA:-} --callgrind "$OUT/$3.callgrind" --json "$OUT/$3.json" >/dev/null
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["runs"][0]["instructions_per_message"])' \
    "$OUT/$3.json"
}
before="$(one "$OLD/build" "$OLD/src" before)"
after="$(one "$BUILD" "$ROOT" after)"
python3 - "$before" "$after" <<'PY'
import sys
b, a = map(int, sys.argv[1:])
print(f"instructions per message: before {b:,}, after {a:,}: {a / b:.3f}x")
PY
echo "callgrind files and results: $OUT (callgrind_annotate --inclusive=yes $OUT/after.callgrind)"
