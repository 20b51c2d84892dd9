#!/usr/bin/env bash
# Validator benchmark: dispatchd's C++ validator vs the common Node.js pipeline (regex
# fence strip + JSON.parse + ajv + recipient check) on the same 10,000-reply corpus.
# Runs from any directory. A benchmark, not a test: it fails only when something does not
# build or a verdict differs from the generator's intent, never on timing.
#
# Environment: RUNS (7), COUNT (10000), BUILD_DIR (<repo>/build-bench), KEEP=1 keeps the
# scratch folder (corpus, schema, node_modules) and prints its path.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD_DIR:-$ROOT/build-bench}"
RUNS="${RUNS:-7}"
COUNT="${COUNT:-10000}"
CATALOG="$ROOT/catalog/examples/support.en.json"

SCRATCH="$(mktemp -d)"
if [[ "${KEEP:-0}" == 1 ]]; then
  echo "scratch: $SCRATCH"
else
  trap 'rm -rf "$SCRATCH"' EXIT
fi

echo "== build (Release, $BUILD)"
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DDISPATCHD_TESTS=OFF >"$SCRATCH/cmake.log" 2>&1 ||
  { cat "$SCRATCH/cmake.log"; exit 1; }
cmake --build "$BUILD" --target validator_bench dispatchctl -j"$(nproc)" >>"$SCRATCH/cmake.log" 2>&1 ||
  { cat "$SCRATCH/cmake.log"; exit 1; }

echo "== ajv from the npm registry (scratch folder, not committed)"
npm install --prefix "$SCRATCH/npm" --no-audit --no-fund --no-save --silent ajv@8 >/dev/null
export NODE_PATH="$SCRATCH/npm/node_modules"

"$BUILD/cli/dispatchctl" catalog schema --dialect jsonschema --catalog "$CATALOG" >"$SCRATCH/schema.json"
"$BUILD/bench/validator_bench" --count "$COUNT" --write-corpus "$SCRATCH/corpus.jsonl"

# One CPU for each side, when taskset exists: single-threaded, and helper threads (V8's
# GC and compiler) share that CPU instead of running for free on another one.
PIN=()
if command -v taskset >/dev/null 2>&1; then PIN=(taskset -c "$(( $(nproc) - 1 ))"); fi

echo
echo "== C++ (dispatchd)"
"${PIN[@]}" "$BUILD/bench/validator_bench" --catalog "$CATALOG" --corpus "$SCRATCH/corpus.jsonl" --runs "$RUNS" |
  tee "$SCRATCH/cpp.out"
echo
echo "== Node.js"
"${PIN[@]}" node "$ROOT/bench/node/pipeline.js" --schema "$SCRATCH/schema.json" --catalog "$CATALOG" \
  --corpus "$SCRATCH/corpus.jsonl" --runs "$RUNS" | tee "$SCRATCH/node.out"

field() { sed -n "s/^result .*$2=\([0-9.]*\).*/\1/p" "$1"; }
CPP_RATE="$(field "$SCRATCH/cpp.out" replies_per_s)"
NODE_RATE="$(field "$SCRATCH/node.out" replies_per_s)"
echo
echo "== summary"
printf 'C++:   %s replies/s  %s ns/reply\n' "$CPP_RATE" "$(field "$SCRATCH/cpp.out" ns_per_reply)"
printf 'Node:  %s replies/s  %s ns/reply\n' "$NODE_RATE" "$(field "$SCRATCH/node.out" ns_per_reply)"
awk -v c="$CPP_RATE" -v n="$NODE_RATE" 'BEGIN { printf "ratio: %.2fx (C++ replies/s / Node replies/s; target >= 3x)\n", c / n }'
echo "machine: nproc $(nproc); $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "pinned: ${PIN[*]:-no (taskset not found)}; $(node --version); $(g++ --version | head -1)"
