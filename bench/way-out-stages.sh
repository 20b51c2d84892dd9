#!/usr/bin/env bash
# Where the way out (model answer -> Graph request) spends its time, stage by stage: builds
# REV (default HEAD) in a temporary worktree with bench/way-out-stages.patch applied (timing
# points around the loop's queue, the round's COMMIT and sync, and the hand-offs between
# threads; never part of the daemon), runs one bench/daemon_bench.py --overhead run on it
# and prints each stage's percentiles beside the way out's own. A measurement, not a test.
#
# Usage: bench/way-out-stages.sh [REV]   Environment: COUNT (20000), RATE (500),
# INTERVAL (database_commit_interval_ms, 0), EXTRA (more daemon_bench.py options, e.g.
# "--tmpdir /dev/shm"). Each call builds afresh in a temporary directory (minutes).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$ROOT/bench/daemon-build.sh"
REV="${1:-HEAD}"
WORK="$(mktemp -d)"
BUILD="$WORK/build"

echo "== build $REV ($(git -C "$ROOT" rev-parse --short "$REV")) with bench/way-out-stages.patch (Release)"
rev_worktree "$ROOT" "$REV" "$WORK"
# The patch names lines of the daemon's sources: a REV it no longer fits says so here.
git -C "$WORK/src" apply "$ROOT/bench/way-out-stages.patch"
daemon_build "$WORK/src" "$BUILD" "$WORK/build.log"

machine_line
DISPATCHD_STAGE_TRACE="$WORK/stages.txt" python3 "$ROOT/bench/daemon_bench.py" "$BUILD" "$WORK/src" --runs 1 --starts 1 \
  --count "${COUNT:-20000}" --concurrency 256 --model-concurrency 2000 --model-latency-ms 2000 \
  --model-latency-spread-ms 1000 --webhook-rate "${RATE:-500}" --commit-interval-ms "${INTERVAL:-0}" --overhead \
  ${EXTRA:-} --json "$WORK/run.json" >/dev/null
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["runs"][0]; print("way out (answer -> Graph): p50 {answer_to_graph_ms_p50} p99 {answer_to_graph_ms_p99} max {answer_to_graph_ms_max} ms; CPU {cpu_ms_per_message} ms/message; dispatchd waiting for a CPU {dispatchd_waiting_for_cpu_ms_per_message} ms/message".format(**r))' "$WORK/run.json"
cat "$WORK/stages.txt"
