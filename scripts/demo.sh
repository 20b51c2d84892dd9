#!/usr/bin/env bash
# The main job: builds dispatchd, dispatchctl and the two simulators (the test fakes of the
# model and the Graph API), then runs the whole pipeline on 127.0.0.1 with scripts/demo.py:
# signed WhatsApp webhooks in, the model's replies validated, re-asked or escalated, replies
# out at the fake Graph API, a staff member working the queue, the audit queries of docs/sql.md.
# It keeps serving until Ctrl-C; `scripts/demo.sh --exit` stops when done (for scripts).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
echo "== building dispatchd, dispatchctl, fake_model and fake_graph in build/ (the first build takes a few minutes)"
gen=()
[ -f "$root/build/CMakeCache.txt" ] || gen=(-G Ninja)
cmake -S "$root" -B "$root/build" "${gen[@]}" >/dev/null
cmake --build "$root/build" -j"$(nproc)" --target dispatchd dispatchctl fake_model fake_graph >/dev/null
exec python3 "$root/scripts/demo.py" "$root/build" "$root" "$@"
