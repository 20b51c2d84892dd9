#!/usr/bin/env bash
# Builds dispatchd and runs the whole test suite (CTest over the Catch2 executables and
# the black-box CLI tests). Installs missing Debian packages first.
#   scripts/test.sh              build/ (RelWithDebInfo)
#   scripts/test.sh --sanitize   build-asan/ with AddressSanitizer + UndefinedBehaviorSanitizer
# Set DISPATCHD_WERROR=ON to turn warnings into errors (CI does).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"

build=$root/build
flags=()
if [ "${1:-}" = "--sanitize" ]; then
  build=$root/build-asan
  flags+=(-DDISPATCHD_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug)
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
# Ninja for a new build tree (a tree configured before keeps its generator).
[ -f "$build/CMakeCache.txt" ] || flags+=(-G Ninja)
cmake -S "$root" -B "$build" -DDISPATCHD_WERROR="${DISPATCHD_WERROR:-OFF}" "${flags[@]}" >/dev/null
cmake --build "$build" -j"$(nproc)"
cd "$build"
# Most tests wait (on sockets, processes, a model's latency) far more than they compute, so
# three per core keep the cores busy; the longest start first (COST, tests/CMakeLists.txt).
if ctest --output-on-failure -j"$(($(nproc) * 3))"; then exit 0; fi
# A log shows only its end: repeat each failed test's own output there (the last lines of
# its section of Testing/Temporary/LastTest.log), then run the failed ones again alone to
# tell a flaky test from a broken one. The run stays failed either way.
echo "== the output of each failed test =="
cut -d: -f2- Testing/Temporary/LastTestsFailed.log | while IFS= read -r name; do
  echo "---- $name"
  awk -v name="$name" '
    /^[0-9]+\/[0-9]+ Testing: / { on = (substr($0, index($0, "Testing: ") + 9) == name) }
    on' Testing/Temporary/LastTest.log | tail -n 120
done
echo "== the failed tests again, one at a time =="
ctest --rerun-failed --output-on-failure -j1 || true
exit 1
