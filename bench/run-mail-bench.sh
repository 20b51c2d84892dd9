#!/usr/bin/env bash
# Mail decode benchmark: dispatchd::email::decode (C++) vs Python's email package
# (policy=default, get_body, get_content) on the same .eml files of tests/data/mail, the
# whole set decoded REPEAT times per run. Runs alternate (C++ run 1, Python run 1, C++ run 2,
# ...) so drift in the machine's load hits both sides alike. Runs from any directory.
# A benchmark, not a test: it fails only when something does not build or run, never on
# timing.
#
# Environment: RUNS (5), REPEAT (200), BUILD_DIR (<repo>/build-bench), MAIL_DIR
# (<repo>/tests/data/mail).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD_DIR:-$ROOT/build-bench}"
RUNS="${RUNS:-5}"
REPEAT="${REPEAT:-200}"
MAIL_DIR="${MAIL_DIR:-$ROOT/tests/data/mail}"

SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT

echo "machine at start: nproc $(nproc); $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'); load average $(cut -d' ' -f1-3 /proc/loadavg)"

echo "== build (Release, $BUILD)"
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DDISPATCHD_TESTS=OFF >"$SCRATCH/cmake.log" 2>&1 ||
  { cat "$SCRATCH/cmake.log"; exit 1; }
cmake --build "$BUILD" --target mail_decode_bench -j"$(nproc)" >>"$SCRATCH/cmake.log" 2>&1 ||
  { cat "$SCRATCH/cmake.log"; exit 1; }

# One CPU for each side, when taskset exists: both are single-threaded.
PIN=()
if command -v taskset >/dev/null 2>&1; then PIN=(taskset -c "$(( $(nproc) - 1 ))"); fi

CPP=("${PIN[@]}" "$BUILD/bench/mail_decode_bench" --dir "$MAIL_DIR" --repeat "$REPEAT" --runs 1)
PY=("${PIN[@]}" python3 "$ROOT/bench/mail_decode_bench.py" --dir "$MAIL_DIR" --repeat "$REPEAT" --runs 1)

# One timed run per invocation; the first prints what each side does and the corpus.
for ((run = 1; run <= RUNS; run++)); do
  "${CPP[@]}" >"$SCRATCH/cpp.$run"
  "${PY[@]}" >"$SCRATCH/py.$run"
  if ((run == 1)); then
    sed -n '/^impl\|^corpus/p' "$SCRATCH/cpp.1"
    sed -n '/^impl/p' "$SCRATCH/py.1"
  fi
  printf 'run %d  C++    %s\n' "$run" "$(sed -n 's/^run 1: *//p' "$SCRATCH/cpp.$run")"
  printf 'run %d  Python %s\n' "$run" "$(sed -n 's/^run 1: *//p' "$SCRATCH/py.$run")"
done

# Medians of the per-run results, side by side.
field() { sed -n "s/^result .*$2=\([0-9.]*\).*/\1/p" "$SCRATCH/$1".*; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
CPP_RATE="$(field cpp messages_per_s | median)"
PY_RATE="$(field py messages_per_s | median)"
CPP_MB="$(field cpp mb_per_s | median)"
PY_MB="$(field py mb_per_s | median)"
echo
echo "== median of $RUNS runs ($REPEAT x the corpus per run)"
printf '%-8s %14s %10s\n' "" "messages/s" "MB/s"
printf '%-8s %14.0f %10.2f\n' "C++" "$CPP_RATE" "$CPP_MB"
printf '%-8s %14.0f %10.2f\n' "Python" "$PY_RATE" "$PY_MB"
awk -v c="$CPP_RATE" -v p="$PY_RATE" -v cm="$CPP_MB" -v pm="$PY_MB" \
  'BEGIN { printf "%-8s %13.2fx %9.2fx   (C++ / Python; target >= 10x)\n", "ratio", c / p, cm / pm }'
echo "machine at end: load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "pinned: ${PIN[*]:-no (taskset not found)}; $(python3 --version); $(g++ --version | head -1)"
