#pragma once
// The configured MCP servers together, as the daemon and the agent use them: each server's
// client (stdio or Streamable HTTP) kept started, the catalog's mcp actions pinned to their
// tools (pinning.h) again after every listing and every `list_changed`, calls made only for
// a pinned action and at most `max_in_flight` at once per server (the rest wait their
// turn, in order).
//
// A call for an action that is not pinned (its server unknown or down, its tool missing
// or its schema incompatible) is never sent: it ends CallErrorKind::disabled at once with
// the pin's description. A tool a server lists and no action names is never called.
// Everything runs on the io_context's thread.

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "catalog/catalog.h"
#include "mcp/http_client.h"
#include "mcp/pinning.h"
#include "mcp/server_core.h"
#include "mcp/stdio_client.h"
#include "net/http.h"

namespace dispatchd::mcp {

// The calls the agent makes: an interface so that its tests use a fake.
class ToolCaller {
 public:
  using Done = ServerCore::Done;
  virtual ~ToolCaller() = default;
  // Calls the tool the action named `action` (kind mcp) is pinned to with `arguments_json`
  // (an object); `done` runs once, on the loop, never inside call().
  virtual void call(const std::string& action, std::string arguments_json, std::string idempotency_key, Done done) = 0;
};

struct FleetServer {
  std::variant<StdioClientSettings, HttpClientSettings> client;  // its name and SessionSettings inside
  std::size_t max_in_flight = 4;
};

class Fleet : public ToolCaller {
 public:
  // REQUIRES: `http` outlives the fleet. `log` gets one line per event worth a log line
  // (a server's stderr, a restart, a pin that changed).
  Fleet(boost::asio::io_context& io, net::Transport& http, std::vector<FleetServer> servers,
        std::function<void(std::string)> log);
  ~Fleet() override;
  Fleet(const Fleet&) = delete;
  Fleet& operator=(const Fleet&) = delete;

  // The catalog whose mcp actions are pinned (again now, and after each listing).
  void bind(std::shared_ptr<const catalog::Catalog> catalog);
  void start();
  // Ends every server for good (calls waiting or in flight fail unavailable).
  void stop();
  // `done` runs once: when every server has listed its tools, or after `timeout`.
  void when_listed(std::chrono::milliseconds timeout, std::function<void()> done);
  // Called after every change of a server's status or of a pin.
  void on_change(std::function<void()> callback);

  void call(const std::string& action, std::string arguments_json, std::string idempotency_key, Done done) override;
  // The same for a call decided earlier (an outbox row): made only while the action is still
  // pinned to that very server and tool.
  void call_tool(const std::string& action, const std::string& server, const std::string& tool,
                 std::string arguments_json, std::string idempotency_key, Done done);

  const std::vector<ActionPin>& pins() const { return m_pins; }
  struct ServerView {
    std::string name;
    ServerStatus status;
    std::size_t in_flight = 0;
    std::size_t waiting = 0;
  };
  std::vector<ServerView> servers() const;
  bool all_listed() const;

 private:
  struct Server;
  void changed(Server& server);
  void repin();
  void pump(Server& server);
  // Ends a call that is not made (CallErrorKind::disabled), on the loop.
  void refuse(std::string why, Done done);

  boost::asio::io_context& m_io;
  std::function<void(std::string)> m_log;
  std::map<std::string, std::unique_ptr<Server>, std::less<>> m_servers;
  std::shared_ptr<const catalog::Catalog> m_catalog;
  std::vector<ActionPin> m_pins;
  std::function<void()> m_on_change;
  std::vector<std::function<void()>> m_listed_waiters;
  std::shared_ptr<bool> m_alive = std::make_shared<bool>(true);
};

}  // namespace dispatchd::mcp
