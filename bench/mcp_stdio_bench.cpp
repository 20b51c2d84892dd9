// mcp_stdio_bench: lookup round trips through the MCP client over stdio (mcp/stdio_client.h)
// against a server child process: `echo` calls with K in flight until N are answered; prints
// one JSON line with the calls, the concurrency, calls per second and the nearest-rank
// p50/p99 of a call's time (call() to its answer on the loop). A benchmark: it fails only
// when the server cannot be started or a call fails.
//
//   mcp_stdio_bench [--calls N] [--concurrency K] -- COMMAND [ARGS...]
// e.g. mcp_stdio_bench --calls 2000 --concurrency 8 -- /usr/bin/python3 tests/fakes/mcp_script_server.py
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "mcp/stdio_client.h"

namespace {

using Clock = std::chrono::steady_clock;

int usage() {
  std::fputs("usage: mcp_stdio_bench [--calls N] [--concurrency K] -- COMMAND [ARGS...]\n", stderr);
  return 2;
}

double nearest_rank_ms(std::vector<double> values, double quantile) {
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(quantile * static_cast<double>(values.size()) + 0.999999);
  return values[std::clamp<std::size_t>(rank, 1, values.size()) - 1];
}

}  // namespace

int main(int argc, char** argv) {
  long calls = 1000;
  long concurrency = 1;
  std::vector<std::string> command;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--calls" && i + 1 < argc) {
      calls = std::strtol(argv[++i], nullptr, 10);
    } else if (arg == "--concurrency" && i + 1 < argc) {
      concurrency = std::strtol(argv[++i], nullptr, 10);
    } else if (arg == "--") {
      command.assign(argv + i + 1, argv + argc);
      break;
    } else {
      return usage();
    }
  }
  if (command.empty() || calls < 1 || concurrency < 1) return usage();

  boost::asio::io_context io;
  dispatchd::mcp::StdioClientSettings settings;
  settings.name = "bench";
  settings.command.argv = command;
  settings.command.env = {{"PATH", "/usr/bin:/bin"}};
  settings.session.client = {"dispatchd", "bench"};
  std::optional<std::string> failure;
  dispatchd::mcp::StdioClient client(
      io, settings,
      [&](const dispatchd::mcp::ServerStatus& status) {
        if (!status.up) failure = "the server is down: " + status.why;
      },
      [](const std::string&) {});
  client.start();
  while (!client.status().up && !failure) io.run_one();
  if (failure) {
    std::fprintf(stderr, "mcp_stdio_bench: %s\n", failure->c_str());
    return 1;
  }

  std::vector<double> latencies_ms;
  latencies_ms.reserve(static_cast<std::size_t>(calls));
  long started = 0;
  long answered = 0;
  const auto begin = Clock::now();
  std::function<void()> next = [&] {
    if (started >= calls || failure) return;
    ++started;
    const auto sent = Clock::now();
    client.call("echo", R"({"message":"PED-2291"})", "", [&, sent](dispatchd::mcp::StdioClient::CallResult result) {
      ++answered;
      if (!result) failure = "a call failed: " + result.error().message;
      latencies_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - sent).count());
      next();
    });
  };
  for (long i = 0; i < concurrency; ++i) next();
  while (answered < started && !failure) io.run_one();
  const double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  client.stop();
  if (failure) {
    std::fprintf(stderr, "mcp_stdio_bench: %s\n", failure->c_str());
    return 1;
  }
  std::printf("{\"calls\":%ld,\"concurrency\":%ld,\"calls_per_s\":%.0f,\"p50_ms\":%.3f,\"p99_ms\":%.3f}\n", calls,
              concurrency, static_cast<double>(calls) / seconds, nearest_rank_ms(latencies_ms, 0.50),
              nearest_rank_ms(latencies_ms, 0.99));
  return 0;
}
