#pragma once
// From mcp.servers to running MCP servers (mcp/fleet.h): each server's client settings with
// its secrets read by name (env_from, token_env; never logged), then started, waited for
// until each lists its tools or its startup timeout passes, and the catalog's mcp actions
// pinned. dispatchd refuses to start, and --check-config reports, when a server does not
// list its tools in time or an action is not pinned, naming the action, server, tool and
// field; once running, a pin that breaks only disables its action (fleet.h).

#include <chrono>
#include <expected>
#include <memory>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "config/config.h"
#include "mcp/fleet.h"
#include "net/http.h"

namespace boost::asio {
class io_context;
}

namespace dispatchd::daemon {

// The servers of `config`, secrets read; fails naming the first secret that is not set.
[[nodiscard]] std::expected<std::vector<mcp::FleetServer>, std::string> fleet_servers(const config::Config& config);

// The longest startup timeout of mcp.servers (0 without servers).
std::chrono::milliseconds mcp_startup_wait(const config::Config& config);

// Starts `fleet` bound to `catalog` and runs `io` until every server has listed its tools
// or `wait` has passed. REQUIRES: nothing else needs `io` to wait meanwhile (start-up).
// Returns one line per problem: a server that did not list (and why), an action not pinned.
std::vector<std::string> start_and_pin(mcp::Fleet& fleet, boost::asio::io_context& io,
                                       std::shared_ptr<const catalog::Catalog> catalog, std::chrono::milliseconds wait);

// --check-config's check: every catalog mcp action names a configured server, each server
// starts and lists its tools, every action is pinned; the servers are stopped afterwards.
std::vector<std::string> check_mcp(const config::Config& config, const catalog::Catalog& catalog);

}  // namespace dispatchd::daemon
