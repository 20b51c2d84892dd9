#!/usr/bin/env bash
# Before/after for the daemon benchmark: builds REV (a commit, default HEAD~1) in a
# temporary worktree and this tree, then alternates single runs of bench/daemon_bench.py
# on the two (before, after, before, after, ...) so that both see the same machine, which
# drifts by a quarter or more between minutes here. Prints each pair and the medians.
# A benchmark, not a test: it fails only when something does not build or a message is not
# answered.
#
# Usage: bench/compare-daemon-bench.sh [REV]   Environment: PAIRS (3), COUNT (20000),
# CONCURRENCY (64), BUILD_DIR (<repo>/build-bench-daemon), EXTRA (more daemon_bench.py
# options for both sides, e.g. "--model-concurrency 2000 --model-latency-ms 2000
# --webhook-rate 1000": the latency-bound run; with --overhead each pair also shows the way
# out's p50 and p99).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$ROOT/bench/daemon-build.sh"
REV="${1:-HEAD~1}"
BUILD="${BUILD_DIR:-$ROOT/build-bench-daemon}"
OLD="$(mktemp -d)"
build_both "$ROOT" "$REV" "$OLD" "$BUILD"
# Both sides run this tree's daemon_bench.py, each with its own build and source (config,
# scenario, migrations).
one() {  # BUILD SOURCE JSON
  python3 "$ROOT/bench/daemon_bench.py" "$1" "$2" --runs 1 --starts 1 --count "${COUNT:-20000}" \
    --concurrency "${CONCURRENCY:-64}" ${EXTRA:-} --json "$3" >/dev/null
  # With --overhead in EXTRA, also the way out (model answer -> Graph request) p50 and p99.
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["runs"][0]; print(r["messages_per_s"], r["cpu_ms_per_message"], r["peak_rss_mib"], *(r[k] for k in ("answer_to_graph_ms_p50", "answer_to_graph_ms_p99") if k in r))' "$3"
}
before=()
after=()
printf '%-6s %22s %22s\n' pair "before msg/s cpu_ms rss [out p50 p99]" "after msg/s cpu_ms rss [out p50 p99]"
for pair in $(seq 1 "${PAIRS:-3}"); do
  b="$(one "$OLD/build" "$OLD/src" "$OLD/before.json")"
  a="$(one "$BUILD" "$ROOT" "$OLD/after.json")"
  before+=("$b")
  after+=("$a")
  printf '%-6s %22s %22s\n' "$pair" "$b" "$a"
done
python3 - "${before[@]}" -- "${after[@]}" <<'PY'
import statistics, sys
args = sys.argv[1:]
cut = args.index("--")
def med(rows):
    cols = list(zip(*(map(float, r.split()) for r in rows)))
    return [statistics.median(c) for c in cols]
b, a = med(args[:cut]), med(args[cut + 1:])
print(f"median before: {b[0]:.0f} msg/s, {b[1]:.3f} ms CPU/msg, peak {b[2]:.1f} MiB")
print(f"median after:  {a[0]:.0f} msg/s, {a[1]:.3f} ms CPU/msg, peak {a[2]:.1f} MiB")
print(f"after/before:  {a[0] / b[0]:.2f}x messages/s, {a[1] / b[1]:.2f}x CPU per message")
if len(a) > 3:
    print(f"answer -> Graph p50 / p99: before {b[3]:.2f} / {b[4]:.2f} ms, after {a[3]:.2f} / {a[4]:.2f} ms")
PY
