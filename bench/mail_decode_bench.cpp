// mail_decode_bench: single-threaded throughput of dispatchd::email::decode.
//
// Reads every *.eml file of a folder (default: the test corpus, tests/data/mail) into
// memory once, then decodes the whole set REPEAT times per run, RUNS runs. Prints, per run,
// messages/s and MB/s (MB = 10^6 bytes of raw input) and a checksum (total bytes of the
// decoded `text`, plus decode errors and defects), then the median run. The counterpart
// for Python's email package is mail_decode_bench.py, with the same options and output;
// run-mail-bench.sh runs both alternately.
//
//   mail_decode_bench [--dir DIR] [--repeat N] [--runs N]
//
// A benchmark, not a test: it fails (exit 1) only when the corpus cannot be read or a run
// does not decode the same as the first one, never on timing.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "connectors/email/email.h"

namespace {

namespace email = dispatchd::email;

struct Corpus {
  std::vector<std::string> messages;  // sorted by file name, so both sides see the same order
  std::size_t bytes = 0;
};

bool read_corpus(const std::filesystem::path& dir, Corpus& out) {
  std::error_code ec;
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".eml") paths.push_back(entry.path());
  if (ec) return false;
  std::sort(paths.begin(), paths.end());
  for (const auto& path : paths) {
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) return false;
    std::string raw(static_cast<std::size_t>(size), '\0');
    std::ifstream in(path, std::ios::binary);
    if (!in.read(raw.data(), static_cast<std::streamsize>(raw.size()))) return false;
    out.bytes += raw.size();
    out.messages.push_back(std::move(raw));
  }
  return !out.messages.empty();
}

// What one pass over the set produced; equal across runs, or the decoder is not deterministic.
struct Tally {
  std::uint64_t text_bytes = 0;
  std::uint64_t errors = 0;   // decode() returned an error (e.g. the empty message)
  std::uint64_t defects = 0;  // summed over the decoded messages
  bool operator==(const Tally&) const = default;
};

Tally decode_all(const Corpus& corpus, std::size_t repeat) {
  Tally t;
  for (std::size_t r = 0; r < repeat; ++r) {
    for (const auto& raw : corpus.messages) {
      const auto decoded = email::decode(raw);
      if (!decoded) {
        ++t.errors;
        continue;
      }
      t.text_bytes += decoded->text.size();
      t.defects += decoded->defects.size();
    }
  }
  return t;
}

[[noreturn]] void usage(const char* message) {
  std::fprintf(stderr,
               "mail_decode_bench: %s\n"
               "usage: mail_decode_bench [--dir DIR] [--repeat N] [--runs N]\n",
               message);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = DISPATCHD_MAIL_CORPUS;
  std::size_t repeat = 200, runs = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value for " + std::string(arg)).c_str());
      return argv[++i];
    };
    const auto number = [&]() -> std::size_t {
      const std::string v = value();
      char* end = nullptr;
      const auto n = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0') usage(("not a number: " + v).c_str());
      return static_cast<std::size_t>(n);
    };
    if (arg == "--dir")
      dir = value();
    else if (arg == "--repeat")
      repeat = number();
    else if (arg == "--runs")
      runs = number();
    else
      usage(("unknown option " + std::string(arg)).c_str());
  }
  if (repeat == 0 || runs == 0) usage("--repeat and --runs must be positive");

  Corpus corpus;
  if (!read_corpus(dir, corpus)) {
    std::fprintf(stderr, "mail_decode_bench: no readable .eml files in %s\n", dir.c_str());
    return 1;
  }
  const std::size_t n = corpus.messages.size() * repeat;
  const double mb = static_cast<double>(corpus.bytes) * static_cast<double>(repeat) / 1e6;
  std::printf("impl:     C++ dispatchd::email::decode (GMime, libxml2 for HTML-only; single thread)\n");
  std::printf("corpus:   %zu .eml files, %zu bytes, from %s; %zu x per run = %zu messages, %.2f MB\n",
              corpus.messages.size(), corpus.bytes, dir.c_str(), repeat, n, mb);

  const Tally expected = decode_all(corpus, 1);  // warm-up (GMime init, iconv tables)
  std::vector<double> rates, mbs;
  for (std::size_t run = 1; run <= runs; ++run) {
    const auto t0 = std::chrono::steady_clock::now();
    const Tally t = decode_all(corpus, repeat);
    const std::chrono::duration<double> s = std::chrono::steady_clock::now() - t0;
    if (t.text_bytes != expected.text_bytes * repeat || t.errors != expected.errors * repeat ||
        t.defects != expected.defects * repeat) {
      std::printf("FAIL: run %zu decoded differently from the warm-up pass\n", run);
      return 1;
    }
    rates.push_back(static_cast<double>(n) / s.count());
    mbs.push_back(mb / s.count());
    std::printf("run %zu:    %.3f s  %.0f messages/s  %.2f MB/s  checksum text_bytes=%" PRIu64 " errors=%" PRIu64
                " defects=%" PRIu64 "\n",
                run, s.count(), rates.back(), mbs.back(), t.text_bytes, t.errors, t.defects);
  }
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
  };
  const double rate = median(rates), mbps = median(mbs);
  std::printf("median:   %.0f messages/s  %.2f MB/s\n", rate, mbps);
  std::printf("result messages_per_s=%.0f mb_per_s=%.3f checksum=%" PRIu64 " errors_per_pass=%" PRIu64 "\n", rate, mbps,
              expected.text_bytes, expected.errors);
  return 0;
}
