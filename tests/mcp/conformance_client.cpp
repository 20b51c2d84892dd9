// The client under test for the official MCP conformance suite (tests/mcp/conformance/):
// dispatchd's mcp::HttpClient over net::CurlTransport, as the daemon runs it, against the
// scenario server whose URL the suite's runner appends to the command line (the scenario's
// name in MCP_CONFORMANCE_SCENARIO). It starts the client, waits for the tool listing, calls
// the tools the scenario's server offers for it, checks their answers, stops (DELETE) and
// exits 0; otherwise it says why on stderr and exits 1 (2: it was run wrongly). The suite
// itself judges what it saw on the wire; this program only has to speak MCP through the
// client.
//
//   mcp_conformance_client URL

#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mcp/http_client.h"
#include "net/curl_transport.h"
#include "tests/io_run.h"

using namespace dispatchd;
using namespace std::chrono_literals;

namespace {

// A call a scenario's server expects, and what its answer must say.
struct PlannedCall {
  std::string_view tool;
  std::string_view arguments;
  std::string_view answer_contains;
};

struct ScenarioPlan {
  std::string_view scenario;
  std::vector<PlannedCall> calls;
};

// What each scenario's server offers (the suite's scenario sources, version 0.1.13):
// initialize lists no tools (the handshake is the test); tools_call offers add_numbers(a, b)
// and answers "The sum of A and B is S"; sse-retry offers test_reconnection, whose answer
// comes only on the stream resumed after the server closed the first one.
const std::vector<ScenarioPlan>& plans() {
  static const std::vector<ScenarioPlan> k_plans = {
      {"initialize", {}},
      {"tools_call", {{"add_numbers", R"({"a":5,"b":3})", "is 8"}}},
      {"sse-retry", {{"test_reconnection", "{}", "Reconnection test completed successfully"}}},
  };
  return k_plans;
}

// The scenario servers listen on every address and name themselves "localhost"; the client
// goes to 127.0.0.1 (never ::1 or anything off the machine). Nothing but the loopback host
// is accepted.
std::optional<std::string> loopback_url(std::string url) {
  constexpr std::string_view k_scheme = "http://";
  if (!url.starts_with(k_scheme)) return std::nullopt;
  const auto host_end = url.find_first_of(":/", k_scheme.size());
  const std::string host = url.substr(k_scheme.size(), host_end - k_scheme.size());
  if (host == "localhost")
    url.replace(k_scheme.size(), host.size(), "127.0.0.1");
  else if (!host.starts_with("127."))
    return std::nullopt;
  return url;
}

int fail(const std::string& why) {
  std::cerr << "conformance client: " << why << "\n";
  return 1;
}

bool listed(const mcp::ServerStatus& status, std::string_view tool) {
  for (const auto& t : status.tools)
    if (t.name == tool) return true;
  return false;
}

int run(const ScenarioPlan& plan, const std::string& url) {
  boost::asio::io_context io;
  net::CurlTransport transport(io);
  mcp::HttpClientSettings settings;
  settings.name = "conformance";
  settings.endpoint = {url, "", 10s};
  settings.session.client = {"dispatchd-conformance-client", "1.0.0"};
  settings.session.startup_timeout = 10s;
  settings.session.call_timeout = 10s;
  std::optional<std::string> down;
  mcp::HttpClient client(
      io, transport, settings,
      [&](const mcp::ServerStatus& status) {
        if (!status.up) down = status.why;
      },
      [](std::string line) { std::cerr << line << "\n"; });
  client.start();
  test::run_until(
      io, [&] { return client.status().up || down.has_value(); }, 20s);
  if (down) return fail("the server is down: " + *down);
  std::cout << "up: " << client.status().server_name << ", revision " << client.status().protocol_version << ", "
            << client.status().tools.size() << " tools\n";

  for (const PlannedCall& planned : plan.calls) {
    if (!listed(client.status(), planned.tool)) return fail("the server does not list " + std::string(planned.tool));
    std::optional<mcp::ServerHandle::CallResult> result;
    client.call(planned.tool, planned.arguments, "", [&](mcp::ServerHandle::CallResult r) { result = std::move(r); });
    test::run_until(
        io, [&] { return result.has_value(); }, 20s);
    if (!*result)
      return fail(std::string(planned.tool) + " failed (" + std::string(mcp::to_string(result->error().kind)) +
                  "): " + result->error().message);
    const mcp::ToolResult& answer = **result;
    std::cout << planned.tool << ": " << answer.text << "\n";
    if (answer.is_error) return fail(std::string(planned.tool) + " answered with an error: " + answer.text);
    if (answer.text.find(planned.answer_contains) == std::string::npos)
      return fail(std::string(planned.tool) + "'s answer lacks \"" + std::string(planned.answer_contains) + "\"");
  }

  client.stop();
  // The DELETE goes out; the loop runs out of work once it is answered.
  io.restart();
  io.run_for(5s);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::span<char*> args(argv, static_cast<std::size_t>(argc));
  const char* scenario = std::getenv("MCP_CONFORMANCE_SCENARIO");
  if (args.size() < 2 || !scenario) {
    std::cerr << "usage: MCP_CONFORMANCE_SCENARIO=NAME mcp_conformance_client URL (run by the suite's runner)\n";
    return 2;
  }
  const auto url = loopback_url(args.back());
  if (!url) {
    std::cerr << "conformance client: refusing " << args.back() << ": only http:// on the loopback host\n";
    return 2;
  }
  for (const ScenarioPlan& plan : plans()) {
    if (plan.scenario != scenario) continue;
    try {
      return run(plan, *url);
    } catch (const std::exception& e) {
      return fail(e.what());  // run_until gave up waiting
    }
  }
  std::cerr << "conformance client: no plan for scenario " << scenario << "\n";
  return 2;
}
