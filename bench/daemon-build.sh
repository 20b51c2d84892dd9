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

# rev_worktree ROOT REV DIR: checks REV out in a detached worktree at DIR/src; the worktree
# and DIR are removed when the script exits.
rev_worktree() {
  # shellcheck disable=SC2064  # the paths are fixed now, on purpose
  trap "git -C '$1' worktree remove --force '$3/src' >/dev/null 2>&1 || true; rm -rf '$3'" EXIT
  git -C "$1" worktree add --detach --quiet "$3/src" "$2"
}

# build_both ROOT REV OLD BUILD: REV built in OLD/build (sources in OLD/src, removed at exit)
# and ROOT's tree in BUILD, both Release; then the machine line.
build_both() {
  echo "== build $2 ($(git -C "$1" rev-parse --short "$2")) and this tree (Release)"
  rev_worktree "$1" "$2" "$3"
  daemon_build "$3/src" "$3/build" "$3/build.log"
  daemon_build "$1" "$4" "$3/build.log"
  machine_line
}
