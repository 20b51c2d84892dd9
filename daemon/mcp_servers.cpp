#include "daemon/mcp_servers.h"

#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <boost/asio/io_context.hpp>

#include "config/secrets.h"
#include "net/curl_transport.h"
#include "net/threaded_transport.h"

namespace dispatchd::daemon {

std::expected<std::vector<mcp::FleetServer>, std::string> fleet_servers(const config::Config& config) {
  std::vector<mcp::FleetServer> out;
  for (const auto& [name, server] : config.mcp_servers) {
    mcp::SessionSettings session;
    session.client = {"dispatchd", DISPATCHD_VERSION};
    session.startup_timeout = std::chrono::seconds(server.startup_timeout_s);
    session.call_timeout = std::chrono::seconds(server.call_timeout_s);
    session.max_result_bytes = static_cast<std::size_t>(server.max_result_bytes);
    const auto max_in_flight = static_cast<std::size_t>(server.max_in_flight);
    if (!server.command.empty()) {
      mcp::StdioClientSettings s;
      s.name = name;
      s.command.argv = server.command;
      s.command.env = server.env;
      for (const auto& [variable, secret] : server.env_from) {
        auto value = config::read_secret(secret);
        if (!value) return std::unexpected("mcp.servers." + name + ".env_from." + variable + ": " + value.error());
        s.command.env[variable] = std::move(*value);
      }
      s.command.cwd = server.cwd;
      s.session = session;
      out.push_back({std::move(s), max_in_flight});
    } else {
      mcp::HttpClientSettings s;
      s.name = name;
      s.endpoint.url = server.url;
      // The whole exchange of one request: a call's answer may take its timeout.
      s.endpoint.timeout = std::max(session.call_timeout, session.startup_timeout) + std::chrono::seconds(5);
      if (!server.token_env.empty()) {
        auto token = config::read_secret(server.token_env);
        if (!token) return std::unexpected("mcp.servers." + name + ".token_env: " + token.error());
        s.endpoint.token = std::move(*token);
      }
      s.session = session;
      out.push_back({std::move(s), max_in_flight});
    }
  }
  return out;
}

std::chrono::milliseconds mcp_startup_wait(const config::Config& config) {
  std::chrono::milliseconds longest{0};
  for (const auto& [_, server] : config.mcp_servers)
    longest = std::max<std::chrono::milliseconds>(longest, std::chrono::seconds(server.startup_timeout_s));
  return longest;
}

std::vector<std::string> start_and_pin(mcp::Fleet& fleet, boost::asio::io_context& io,
                                       std::shared_ptr<const catalog::Catalog> catalog,
                                       std::chrono::milliseconds wait) {
  fleet.bind(std::move(catalog));
  fleet.start();
  bool waited = false;
  fleet.when_listed(wait, [&waited] { waited = true; });
  while (!waited) {
    io.restart();
    io.run_one_for(std::chrono::milliseconds(100));
  }
  std::vector<std::string> problems;
  for (const auto& server : fleet.servers()) {
    if (!server.status.up)
      problems.push_back("mcp server `" + server.name + "` did not list its tools within " +
                         std::to_string(wait.count() / 1000) + " s" +
                         (server.status.why.empty() ? std::string() : ": " + server.status.why));
  }
  for (const auto& pin : fleet.pins()) {
    if (pin.state != mcp::PinState::pinned && pin.state != mcp::PinState::server_down)
      problems.push_back("mcp " + mcp::describe(pin));
  }
  return problems;
}

std::vector<std::string> check_mcp(const config::Config& config, const catalog::Catalog& catalog) {
  std::vector<std::string> problems;
  bool named = false;
  for (const auto& action : catalog.actions()) {
    if (!action.mcp) continue;
    named = true;
    if (!config.mcp_servers.contains(action.mcp->server))
      problems.push_back("catalog action `" + action.name + "` names mcp server `" + action.mcp->server +
                         "`, which mcp.servers does not configure");
  }
  if (!problems.empty() || (!named && config.mcp_servers.empty())) return problems;
  auto servers = fleet_servers(config);
  if (!servers) return {servers.error()};
  boost::asio::io_context io(1);
  net::ThreadedTransport transport(io, {});
  {
    mcp::Fleet fleet(io, transport, std::move(*servers), nullptr);
    problems = start_and_pin(fleet, io, std::make_shared<const catalog::Catalog>(catalog), mcp_startup_wait(config));
    fleet.stop();
    // A stopped stdio server is given its exit_wait and term_wait, then killed and reaped.
    io.restart();
    io.run_for(std::chrono::milliseconds(500));
  }
  return problems;
}

}  // namespace dispatchd::daemon
