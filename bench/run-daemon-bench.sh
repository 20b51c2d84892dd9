#!/usr/bin/env bash
# Daemon benchmark: signed webhooks through the real dispatchd against the model and Graph
# fakes (bench/daemon_bench.py says what is measured). Runs from any directory. A
# benchmark, not a test: it fails only when something does not build or a message is not
# answered, never on timing.
#
# Environment: RUNS (3), COUNT (20000), CONCURRENCY (64), BUILD_DIR (<repo>/build-bench-daemon).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$ROOT/bench/daemon-build.sh"
BUILD="${BUILD_DIR:-$ROOT/build-bench-daemon}"
LOG="$(mktemp)"
trap 'rm -f "$LOG"' EXIT

echo "== build (Release, $BUILD)"
daemon_build "$ROOT" "$BUILD" "$LOG"

machine_line
python3 "$ROOT/bench/daemon_bench.py" "$BUILD" "$ROOT" --runs "${RUNS:-3}" --count "${COUNT:-20000}" \
  --concurrency "${CONCURRENCY:-64}" --json "$BUILD/daemon-bench.json"
echo "(all runs: $BUILD/daemon-bench.json)"
