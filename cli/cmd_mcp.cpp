// dispatchctl mcp list: what each configured MCP server offers, which catalog actions bind
// to which of its tools, and each action's pinning verdict. It starts the servers as
// dispatchd would (daemon/mcp_servers.h), waits for their tool lists, and stops them.
#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <boost/asio/io_context.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "cli/args.h"
#include "common/json_out.h"
#include "config/config.h"
#include "daemon/mcp_servers.h"
#include "mcp/fleet.h"
#include "net/threaded_transport.h"

namespace dispatchd::cli {
namespace {

// The catalog's actions bound to `tool` of `server`.
std::vector<const mcp::ActionPin*> bound(const std::vector<mcp::ActionPin>& pins, const std::string& server,
                                         const std::string& tool) {
  std::vector<const mcp::ActionPin*> out;
  for (const auto& pin : pins)
    if (pin.server == server && pin.tool == tool) out.push_back(&pin);
  return out;
}

void print_text(const std::vector<mcp::Fleet::ServerView>& servers, const std::vector<mcp::ActionPin>& pins) {
  for (const auto& server : servers) {
    const auto& s = server.status;
    if (s.up)
      std::printf("server %s: up, revision %s, \"%s\", %zu tool(s)\n", server.name.c_str(), s.protocol_version.c_str(),
                  s.server_name.c_str(), s.tools.size());
    else
      std::printf("server %s: down: %s\n", server.name.c_str(), s.why.c_str());
    for (const auto& tool : s.tools) {
      const auto actions = bound(pins, server.name, tool.name);
      if (actions.empty()) std::printf("  tool %s: no catalog action (never called)\n", tool.name.c_str());
      for (const auto* pin : actions)
        std::printf("  tool %s: action %s, %s\n", tool.name.c_str(), pin->action.c_str(),
                    std::string(mcp::to_string(pin->state)).c_str());
    }
  }
  for (const auto& pin : pins) std::printf("%s\n", mcp::describe(pin).c_str());
}

std::string to_json(const std::vector<mcp::Fleet::ServerView>& servers, const std::vector<mcp::ActionPin>& pins) {
  JsonOut out;
  out.begin_object().begin_array("servers");
  for (const auto& server : servers) {
    const auto& s = server.status;
    out.begin_object().field("name", server.name).field("up", s.up);
    if (!s.up) out.field("why", s.why);
    if (s.up) out.field("protocol_version", s.protocol_version).field("server_name", s.server_name);
    out.begin_array("tools");
    for (const auto& tool : s.tools) {
      out.begin_object().field("name", tool.name).field("description", tool.description);
      out.raw("input_schema", tool.input_schema).begin_array("actions");
      for (const auto* pin : bound(pins, server.name, tool.name)) out.value(pin->action);
      out.end_array().end_object();
    }
    out.end_array().end_object();
  }
  out.end_array().begin_array("actions");
  for (const auto& pin : pins) {
    out.begin_object().field("action", pin.action).field("server", pin.server).field("tool", pin.tool);
    out.field("state", mcp::to_string(pin.state)).begin_array("problems");
    for (const auto& problem : pin.problems) out.value(problem);
    out.end_array().end_object();
  }
  return out.end_array().end_object().str();
}

}  // namespace

int cmd_mcp(int argc, char** argv) {
  auto args = parse_args(argc, argv, 2, {{"config", true}, {"server", true}, {"json", false}});
  if (!args) return usage_error(args.error());
  if (args->positional.size() != 1 || args->positional.front() != "list")
    return usage_error("usage: dispatchctl mcp list --config FILE [--server NAME] [--json]");
  const auto config_path = args->get("config");
  if (!config_path) return usage_error("mcp list needs --config FILE (its mcp.servers and catalog)");
  auto config = config::load(*config_path);
  if (!config) return usage_error("bad configuration: " + config.error().front());
  auto catalog = catalog::Catalog::load_file(config->catalog);
  if (!catalog) return usage_error("bad catalog: " + catalog.error().front().to_string());
  const auto only = args->get("server");
  if (only) {
    if (!config->mcp_servers.contains(*only)) return usage_error("mcp.servers has no server " + *only);
    // Only that server is started; the catalog's other actions are left out.
    std::erase_if(config->mcp_servers, [&](const auto& entry) { return entry.first != *only; });
  }
  auto servers = daemon::fleet_servers(*config);
  if (!servers) {
    std::fprintf(stderr, "dispatchctl: %s\n", servers.error().c_str());
    return k_exit_rejected;
  }
  boost::asio::io_context io(1);
  net::ThreadedTransport transport(io, {});
  std::vector<mcp::Fleet::ServerView> views;
  std::vector<mcp::ActionPin> pins;
  {
    mcp::Fleet fleet(io, transport, std::move(*servers), nullptr);
    const auto problems = daemon::start_and_pin(fleet, io, std::make_shared<const catalog::Catalog>(*catalog),
                                                daemon::mcp_startup_wait(*config));
    views = fleet.servers();
    for (const auto& pin : fleet.pins())
      if (!only || pin.server == *only) pins.push_back(pin);
    fleet.stop();
    io.restart();
    io.run_for(std::chrono::milliseconds(500));
  }
  if (args->has("json"))
    std::printf("%s\n", to_json(views, pins).c_str());
  else
    print_text(views, pins);
  bool all_well = true;
  for (const auto& view : views) all_well = all_well && view.status.up;
  for (const auto& pin : pins) all_well = all_well && pin.state == mcp::PinState::pinned;
  return all_well ? k_exit_ok : k_exit_rejected;
}

}  // namespace dispatchd::cli
