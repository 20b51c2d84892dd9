// sync_probe: how long this disk takes to make one small write durable, the floor under any
// step that must be on disk before it acts. dispatchd sends nothing before the action's
// `sending` mark is synced (no duplicate sends after a crash), so a model answer cannot reach
// the Graph API sooner than one such sync after it is stored.
//
//   sync_probe [DIR] [SYNCS] [PAGES_PER_SYNC]   (defaults: /var/tmp 2000 20)
//
// Each round writes PAGES_PER_SYNC 4 KiB pages at the end of what the last round wrote in a
// file preallocated to 64 MiB (as the WAL, whose file is reused), then fdatasyncs it, as the
// round's syncer does. A benchmark: it prints the sync times' percentiles in microseconds and
// never fails on timing.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/probe_file.h"

using dispatchd::bench::k_page;
using dispatchd::bench::k_probe_file_size;
using dispatchd::bench::percentile;
using dispatchd::bench::ProbeFile;

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "/var/tmp";
  const int syncs = argc > 2 ? std::atoi(argv[2]) : 2000;
  const int pages = argc > 3 ? std::atoi(argv[3]) : 20;
  if (syncs < 1 || pages < 1 || static_cast<off_t>(pages) * static_cast<off_t>(k_page) > k_probe_file_size) {
    std::fprintf(stderr, "usage: sync_probe [DIR] [SYNCS >= 1] [PAGES_PER_SYNC 1..16384]\n");
    return 2;
  }
  ProbeFile file(dir, "sync_probe.tmp", static_cast<std::size_t>(pages));
  bool failed = !file.ok();
  std::vector<double> took;
  took.reserve(static_cast<std::size_t>(syncs));
  for (int i = 0; i < syncs && !failed; ++i) {
    if (!file.write()) {
      failed = true;
      break;
    }
    const auto start = std::chrono::steady_clock::now();
    if (!file.sync()) failed = true;
    took.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  if (failed) {
    std::fprintf(stderr, "sync_probe: %s/sync_probe.tmp: %s\n", dir.c_str(), std::strerror(errno));
    return 1;
  }
  std::sort(took.begin(), took.end());
  std::printf("%s: %d fdatasync of %d page(s) each: p50 %.0f us, p90 %.0f us, p99 %.0f us, max %.0f us\n", dir.c_str(),
              syncs, pages, percentile(took, 0.5), percentile(took, 0.9), percentile(took, 0.99), took.back());
  return 0;
}
