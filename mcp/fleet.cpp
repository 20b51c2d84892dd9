#include "mcp/fleet.h"

#include <utility>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

namespace dispatchd::mcp {

namespace asio = boost::asio;

struct Fleet::Server {
  std::string name;
  std::size_t max_in_flight = 4;
  std::unique_ptr<ServerHandle> handle;
  std::size_t in_flight = 0;
  struct Waiting {
    std::string tool;
    std::string arguments;
    std::string key;
    Done done;
  };
  std::deque<Waiting> waiting;
};

Fleet::Fleet(asio::io_context& io, net::Transport& http, std::vector<FleetServer> servers,
             std::function<void(std::string)> log)
    : m_io(io), m_log(std::move(log)) {
  for (auto& config : servers) {
    auto server = std::make_unique<Server>();
    server->max_in_flight = std::max<std::size_t>(1, config.max_in_flight);
    Server* raw = server.get();
    std::weak_ptr<bool> alive = m_alive;
    auto on_status = [this, raw, alive](const ServerStatus&) {
      if (alive.lock()) changed(*raw);
    };
    auto on_log = [this, alive](std::string line) {
      if (alive.lock() && m_log) m_log(std::move(line));
    };
    if (auto* stdio = std::get_if<StdioClientSettings>(&config.client)) {
      server->name = stdio->name;
      server->handle = std::make_unique<StdioClient>(io, std::move(*stdio), on_status, on_log);
    } else {
      auto& over_http = std::get<HttpClientSettings>(config.client);
      server->name = over_http.name;
      server->handle = std::make_unique<HttpClient>(io, http, std::move(over_http), on_status, on_log);
    }
    m_servers.emplace(server->name, std::move(server));
  }
}

Fleet::~Fleet() { *m_alive = false; }

void Fleet::bind(std::shared_ptr<const catalog::Catalog> catalog) {
  m_catalog = std::move(catalog);
  repin();
}

void Fleet::start() {
  for (auto& [_, server] : m_servers) server->handle->start();
}

void Fleet::stop() {
  for (auto& [_, server] : m_servers) {
    auto waiting = std::exchange(server->waiting, {});
    for (auto& call : waiting) {
      asio::post(m_io, [done = std::move(call.done)]() mutable {
        done(std::unexpected(CallError{CallErrorKind::not_sent, "dispatchd is stopping"}));
      });
    }
    server->handle->stop();
  }
}

bool Fleet::all_listed() const {
  for (const auto& [_, server] : m_servers) {
    if (!server->handle->status().up) return false;
  }
  return true;
}

void Fleet::when_listed(std::chrono::milliseconds timeout, std::function<void()> done) {
  if (all_listed()) {
    asio::post(m_io, std::move(done));
    return;
  }
  // Whichever comes first, the last listing or the timer, runs `done`; the other finds it gone.
  auto once = std::make_shared<std::function<void()>>(std::move(done));
  auto timer = std::make_shared<asio::steady_timer>(m_io, timeout);
  timer->async_wait([once, timer](const boost::system::error_code&) {
    if (auto run = std::exchange(*once, nullptr)) run();
  });
  m_listed_waiters.push_back([once, timer] {
    timer->cancel();
    if (auto run = std::exchange(*once, nullptr)) run();
  });
}

void Fleet::on_change(std::function<void()> callback) { m_on_change = std::move(callback); }

void Fleet::changed(Server& server) {
  const ServerStatus& status = server.handle->status();
  if (!status.up && m_log) m_log("mcp server " + server.name + " is down: " + status.why);
  repin();
  if (all_listed()) {
    for (auto& waiter : std::exchange(m_listed_waiters, {})) waiter();
  }
  pump(server);  // calls that waited for a slot of a server now gone fail at once
}

void Fleet::repin() {
  if (!m_catalog) return;
  ServerTools tools;
  for (const auto& [name, server] : m_servers) {
    const ServerStatus& status = server->handle->status();
    tools.emplace(name, status.up ? std::optional(status.tools) : std::nullopt);
  }
  auto pins = pin_actions(*m_catalog, tools);
  if (pins == m_pins) return;
  if (m_log) {
    for (const auto& pin : pins) {
      const auto before =
          std::find_if(m_pins.begin(), m_pins.end(), [&](const ActionPin& p) { return p.action == pin.action; });
      // A server not listed yet at the first pinning is no news: it is starting.
      const bool first = before == m_pins.end();
      if ((first && pin.state != PinState::server_down) || (!first && *before != pin)) m_log("mcp " + describe(pin));
    }
  }
  m_pins = std::move(pins);
  if (m_on_change) m_on_change();
}

void Fleet::call(const std::string& action, std::string arguments_json, std::string idempotency_key, Done done) {
  const auto pin = std::find_if(m_pins.begin(), m_pins.end(), [&](const ActionPin& p) { return p.action == action; });
  if (pin == m_pins.end()) return refuse("action `" + action + "` is not an MCP tool of the catalog", std::move(done));
  call_tool(action, pin->server, pin->tool, std::move(arguments_json), std::move(idempotency_key), std::move(done));
}

void Fleet::call_tool(const std::string& action, const std::string& server, const std::string& tool,
                      std::string arguments_json, std::string idempotency_key, Done done) {
  const auto pin = std::find_if(m_pins.begin(), m_pins.end(), [&](const ActionPin& p) { return p.action == action; });
  if (pin == m_pins.end()) return refuse("action `" + action + "` is not an MCP tool of the catalog", std::move(done));
  if (pin->server != server || pin->tool != tool)
    return refuse("action `" + action + "` now calls tool `" + pin->tool + "` of server `" + pin->server +
                      "`, not tool `" + tool + "` of server `" + server + "` as when it was decided",
                  std::move(done));
  if (pin->state != PinState::pinned) return refuse(describe(*pin), std::move(done));
  const auto found = m_servers.find(server);
  if (found == m_servers.end()) return refuse(describe(*pin), std::move(done));
  found->second->waiting.push_back({tool, std::move(arguments_json), std::move(idempotency_key), std::move(done)});
  pump(*found->second);
}

void Fleet::refuse(std::string why, Done done) {
  asio::post(m_io, [done = std::move(done), why = std::move(why)]() mutable {
    done(std::unexpected(CallError{CallErrorKind::disabled, std::move(why)}));
  });
}

void Fleet::pump(Server& server) {
  while (server.in_flight < server.max_in_flight && !server.waiting.empty()) {
    auto next = std::move(server.waiting.front());
    server.waiting.pop_front();
    ++server.in_flight;
    std::weak_ptr<bool> alive = m_alive;
    Server* raw = &server;
    server.handle->call(next.tool, next.arguments, next.key,
                        [this, raw, alive, done = std::move(next.done)](ServerCore::CallResult result) mutable {
                          if (alive.lock()) {
                            --raw->in_flight;
                            pump(*raw);
                          }
                          done(std::move(result));
                        });
  }
}

std::vector<Fleet::ServerView> Fleet::servers() const {
  std::vector<ServerView> out;
  for (const auto& [name, server] : m_servers)
    out.push_back({name, server->handle->status(), server->in_flight, server->waiting.size()});
  return out;
}

}  // namespace dispatchd::mcp
