# Sourced by the daemon benchmark's scripts (run-daemon-bench.sh, compare-daemon-bench.sh,
# way-out-stages.sh): what each of them needs built, and the machine line every result
# names.

# daemon_build SOURCE BUILD LOG: configures and builds SOURCE's daemon, both fakes and the
# load generator in BUILD (Release), CMake's output in LOG; shows LOG and exits 1 on failure.
daemon_build() {
  cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release >"$3" 2>&1 || { cat "$3"; exit 1; }
  cmake --build "$2" --target dispatchd fake_model fake_graph webhook_load -j"$(nproc)" >>"$3" 2>&1 ||
    { cat "$3"; exit 1; }
}

# The CPUs, their model and the load average now.
machine_line() {
  echo "== machine: $(nproc) CPU ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), load $(cut -d' ' -f1-3 /proc/loadavg)"
}
