#!/usr/bin/env bash
# Runs one fuzz target (fuzz/<target>.cpp) under libFuzzer with ASan and UBSan:
#   scripts/fuzz.sh TARGET SECONDS [libFuzzer args...]
#   scripts/fuzz.sh all SECONDS [libFuzzer args...]    each target in turn
#   scripts/fuzz.sh list                                the targets
# Builds build-fuzz/ with clang-16 (installs clang-16 and libclang-rt-16-dev from Debian when
# missing). The fuzzer starts from a scratch copy of fuzz/corpus/TARGET and the inputs it finds
# go to build-fuzz/corpus/TARGET, never into the repository; crashes to
# build-fuzz/artifacts/TARGET/. Ends with one summary line per target:
#   fuzz TARGET: executions N, cov C, ft F, S s, DATE, findings K (artifacts DIR)
# Exit status: 0 when no target found anything.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-fuzz
targets=(validator whatsapp_webhook mime config catalog http_request staff_api_body imap_protocol media_info media_sniff gmail_attachment)

usage() {
  echo "usage: scripts/fuzz.sh TARGET|all SECONDS [libFuzzer args...]; targets: ${targets[*]}" >&2
  exit 2
}

[ "${1:-}" = list ] && { printf '%s\n' "${targets[@]}"; exit 0; }
[ $# -ge 2 ] || usage
target=$1
seconds=$2
shift 2
[[ $seconds =~ ^[0-9]+$ ]] || usage
if [ "$target" != all ] && [[ ! " ${targets[*]} " =~ " $target " ]]; then usage; fi

ensure_clang() {
  if command -v clang++-16 >/dev/null && [ -n "$(ls /usr/lib/llvm-16/lib/clang/16/lib/linux/libclang_rt.fuzzer-*.a 2>/dev/null)" ]; then
    return
  fi
  echo "fuzz: installing clang-16 and libclang-rt-16-dev" >&2
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get install -y --no-install-recommends clang-16 libclang-rt-16-dev >&2
}

configure() {
  CXX=clang++-16 cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDISPATCHD_FUZZ=ON \
    -DDISPATCHD_TESTS=OFF >/dev/null
}

# One target: build, fuzz for `seconds`, print the summary line. Returns 1 on a finding.
run_one() {
  local name=$1
  shift
  cmake --build "$build" -j2 --target "fuzz_$name" >&2
  local corpus=$build/corpus/$name artifacts=$build/artifacts/$name log=$build/logs/$name.log
  mkdir -p "$corpus" "$artifacts" "$build/logs"
  # The scratch corpus: what earlier runs found plus the repository's seeds.
  cp -n "$root/fuzz/corpus/$name/"* "$corpus/" 2>/dev/null || true
  local dict=()
  [ -f "$root/fuzz/$name.dict" ] && dict=(-dict="$root/fuzz/$name.dict")
  local before
  before=$(find "$artifacts" -type f | wc -l)
  local started=$SECONDS status=0
  # halt_on_error: UBSan's reports abort, so libFuzzer keeps the input as a crash; the
  # suppressions name third-party code only (fuzz/ubsan.supp says why).
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:suppressions="$root/fuzz/ubsan.supp" \
    "$build/fuzz/fuzz_$name" -max_total_time="$seconds" -print_final_stats=1 -rss_limit_mb=2048 -timeout=10 \
    -artifact_prefix="$artifacts/" "${dict[@]}" "$@" "$corpus" >"$log" 2>&1 || status=$?
  local elapsed=$((SECONDS - started))
  local execs cov ft findings
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -1 | grep -Eo '[0-9]+' || true)
  ft=$(grep -Eo 'ft: [0-9]+' "$log" | tail -1 | grep -Eo '[0-9]+' || true)
  findings=$(($(find "$artifacts" -type f | wc -l) - before))
  [ "$status" -ne 0 ] && [ "$findings" -eq 0 ] && findings=1  # died without an artifact: see the log
  printf 'fuzz %s: executions %s, cov %s, ft %s, %s s, %s, findings %s (log %s, artifacts %s)\n' \
    "$name" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$elapsed" "$(date -u +%Y-%m-%dT%H:%MZ)" "$findings" "$log" "$artifacts"
  [ "$findings" -eq 0 ]
}

ensure_clang
configure
failed=0
if [ "$target" = all ]; then
  for name in "${targets[@]}"; do run_one "$name" "$@" || failed=1; done
else
  run_one "$target" "$@" || failed=1
fi
exit "$failed"
