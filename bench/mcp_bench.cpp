// mcp_bench: lookup round trips through the MCP client (mcp/server_core.h's ServerHandle)
// over stdio (a server child process) or Streamable HTTP (a server at a URL, through the
// daemon's net::ThreadedTransport): `echo` calls with K in flight until N are answered;
// prints one JSON line with the transport, the calls, the concurrency, calls per second and
// the nearest-rank p50/p99 of a call's time (call() to its answer on the loop). A benchmark:
// it fails only when the server cannot be reached or a call fails.
//
//   mcp_bench [--calls N] [--concurrency K] (--url URL | -- COMMAND [ARGS...])
// e.g. mcp_bench --calls 2000 --concurrency 8 -- /usr/bin/python3 tests/fakes/mcp_script_server.py
//      mcp_bench --calls 2000 --concurrency 8 --url http://127.0.0.1:3001/mcp
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "mcp/http_client.h"
#include "mcp/stdio_client.h"
#include "net/threaded_transport.h"

namespace {

using Clock = std::chrono::steady_clock;

int usage() {
  std::fputs("usage: mcp_bench [--calls N] [--concurrency K] (--url URL | -- COMMAND [ARGS...])\n", stderr);
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
  std::string url;
  std::vector<std::string> command;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--calls" && i + 1 < argc) {
      calls = std::strtol(argv[++i], nullptr, 10);
    } else if (arg == "--concurrency" && i + 1 < argc) {
      concurrency = std::strtol(argv[++i], nullptr, 10);
    } else if (arg == "--url" && i + 1 < argc) {
      url = argv[++i];
    } else if (arg == "--") {
      command.assign(argv + i + 1, argv + argc);
      break;
    } else {
      return usage();
    }
  }
  if (command.empty() == url.empty() || calls < 1 || concurrency < 1) return usage();

  boost::asio::io_context io;
  std::optional<std::string> failure;
  const auto on_status = [&](const dispatchd::mcp::ServerStatus& status) {
    if (!status.up) failure = "the server is down: " + status.why;
  };
  const dispatchd::mcp::SessionSettings session{.client = {"dispatchd", "bench"}};
  // Sized like the daemon's: a connection per call in flight.
  dispatchd::net::ThreadedTransport transport(io, {.max_idle_connections = concurrency + 4});
  std::unique_ptr<dispatchd::mcp::ServerHandle> server;
  if (url.empty()) {
    dispatchd::mcp::StdioClientSettings settings;
    settings.name = "bench";
    settings.command.argv = command;
    settings.command.env = {{"PATH", "/usr/bin:/bin"}};
    settings.session = session;
    server = std::make_unique<dispatchd::mcp::StdioClient>(io, settings, on_status, [](const std::string&) {});
  } else {
    dispatchd::mcp::HttpClientSettings settings;
    settings.name = "bench";
    settings.endpoint.url = url;
    settings.session = session;
    server =
        std::make_unique<dispatchd::mcp::HttpClient>(io, transport, settings, on_status, [](const std::string&) {});
  }
  server->start();
  while (!server->status().up && !failure) io.run_one();
  if (failure) {
    std::fprintf(stderr, "mcp_bench: %s\n", failure->c_str());
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
    server->call("echo", R"({"message":"PED-2291"})", "", [&, sent](dispatchd::mcp::ServerHandle::CallResult result) {
      ++answered;
      if (!result) failure = "a call failed: " + result.error().message;
      latencies_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - sent).count());
      next();
    });
  };
  for (long i = 0; i < concurrency; ++i) next();
  while (answered < started && !failure) io.run_one();
  const double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  server->stop();
  // The HTTP session's DELETE, and a stdio server's exit, finish before the loop is left.
  io.run_for(std::chrono::milliseconds(200));
  if (failure) {
    std::fprintf(stderr, "mcp_bench: %s\n", failure->c_str());
    return 1;
  }
  std::printf(
      "{\"transport\":\"%s\",\"calls\":%ld,\"concurrency\":%ld,\"calls_per_s\":%.0f,\"p50_ms\":%.3f,\"p99_ms\":%.3f}\n",
      url.empty() ? "stdio" : "http", calls, concurrency, static_cast<double>(calls) / seconds,
      nearest_rank_ms(latencies_ms, 0.50), nearest_rank_ms(latencies_ms, 0.99));
  return 0;
}
