// mcp.servers: a program over stdio or a Streamable HTTP URL per server; what the file may
// not say, each reported with its pointer.
#include <catch2/catch.hpp>

#include <algorithm>

#include "config/config.h"

using namespace dispatchd;

namespace {

std::expected<config::Config, std::vector<std::string>> with_mcp(const std::string& servers) {
  return config::parse(R"({"catalog": "c.json", "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1",
    "model": "m", "api_key_env": "K"}, "mcp": {"servers": )" +
                           servers + "}}",
                       "/etc/dispatchd/d.json");
}

}  // namespace

TEST_CASE("config: mcp.servers, stdio and HTTP, with their defaults", "[config][mcp]") {
  auto c = with_mcp(R"({
    "orders": {"command": ["/usr/bin/node", "server.js"], "env": {"PATH": "/usr/bin"},
               "env_from": {"API_KEY": "orders_key"}, "cwd": "orders", "call_timeout_s": 5},
    "crm": {"url": "http://127.0.0.1:3001/mcp", "token_env": "crm_token", "max_in_flight": 2,
            "max_result_bytes": 1024, "startup_timeout_s": 3}})");
  REQUIRE(c);
  REQUIRE(c->mcp_servers.size() == 2);
  const auto& orders = c->mcp_servers.at("orders");
  CHECK(orders.command == std::vector<std::string>{"/usr/bin/node", "server.js"});
  CHECK(orders.env == std::map<std::string, std::string>{{"PATH", "/usr/bin"}});
  CHECK(orders.env_from == std::map<std::string, std::string>{{"API_KEY", "orders_key"}});
  CHECK(orders.cwd == "/etc/dispatchd/orders");
  CHECK(orders.call_timeout_s == 5);
  CHECK(orders.startup_timeout_s == 30);
  CHECK(orders.max_result_bytes == 65536);
  CHECK(orders.max_in_flight == 4);
  const auto& crm = c->mcp_servers.at("crm");
  CHECK(crm.url == "http://127.0.0.1:3001/mcp");
  CHECK(crm.token_env == "crm_token");
  CHECK(crm.command.empty());
  CHECK(crm.cwd.empty());
  CHECK(crm.max_in_flight == 2);
  CHECK(crm.max_result_bytes == 1024);
  CHECK(crm.startup_timeout_s == 3);
  CHECK(with_mcp("{}")->mcp_servers.empty());
}

TEST_CASE("config: what mcp.servers may not say", "[config][mcp]") {
  struct Row {
    const char* servers;
    const char* expected;  // one whole problem line
  };
  const Row rows[] = {
      {R"([])",
       "/etc/dispatchd/d.json: /mcp/servers: must be an object: server name -> {\"command\": [...]} or "
       "{\"url\": ...}"},
      {R"({"a b": {"url": "http://127.0.0.1:1/mcp"}})",
       "/etc/dispatchd/d.json: /mcp/servers/a b: a server's name is letters, digits, '_' or '-' (at most 64)"},
      {R"({"s": {}})",
       "/etc/dispatchd/d.json: /mcp/servers/s: needs exactly one of \"command\" (a program over stdio) and \"url\" "
       "(Streamable HTTP)"},
      {R"({"s": {"command": ["x"], "url": "http://127.0.0.1:1/mcp"}})",
       "/etc/dispatchd/d.json: /mcp/servers/s: needs exactly one of \"command\" (a program over stdio) and \"url\" "
       "(Streamable HTTP)"},
      {R"({"s": {"command": []}})",
       "/etc/dispatchd/d.json: /mcp/servers/s/command: must be a non-empty array of strings (argv)"},
      {R"({"s": {"command": ["x", 1]}})",
       "/etc/dispatchd/d.json: /mcp/servers/s/command: must be a non-empty array of strings (argv)"},
      {R"({"s": {"command": [""]}})", "/etc/dispatchd/d.json: /mcp/servers/s/command/0: must name the program"},
      {R"({"s": {"url": "ftp://h/mcp"}})",
       "/etc/dispatchd/d.json: /mcp/servers/s/url: must be an http:// or https:// URL with a host, without spaces"},
      {R"({"s": {"url": "http://127.0.0.1:1/mcp", "env": {"A": "b"}}})",
       "/etc/dispatchd/d.json: /mcp/servers/s: env, env_from and cwd are for a \"command\"; a \"url\" server is not "
       "started by dispatchd"},
      {R"({"s": {"command": ["x"], "token_env": "T"}})",
       "/etc/dispatchd/d.json: /mcp/servers/s/token_env: is for a \"url\" server; give a command's secrets with "
       "env_from"},
      {R"({"s": {"command": ["x"], "env": {"A": "1"}, "env_from": {"A": "a_secret"}}})",
       "/etc/dispatchd/d.json: /mcp/servers/s/env_from/A: is also in env: one value per variable"},
      {R"({"s": {"command": ["x"], "env": {"A=B": "1"}}})",
       "/etc/dispatchd/d.json: /mcp/servers/s/env/A=B: an environment variable's name must not be empty or hold '='"},
      {R"({"s": {"command": ["x"], "env": {"A": 1}}})",
       "/etc/dispatchd/d.json: /mcp/servers/s/env/A: must be a string"},
      {R"({"s": {"command": ["x"], "call_timeout_s": 0}})",
       "/etc/dispatchd/d.json: /mcp/servers/s/call_timeout_s: must be an integer from 1 to 600"},
      {R"({"s": {"command": ["x"], "max_in_flight": 1000}})",
       "/etc/dispatchd/d.json: /mcp/servers/s/max_in_flight: must be an integer from 1 to 256"},
      {R"({"s": {"command": ["x"], "commands": ["y"]}})",
       "/etc/dispatchd/d.json: /mcp/servers/s/commands: unknown key"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.servers);
    auto c = with_mcp(row.servers);
    REQUIRE_FALSE(c);
    CAPTURE(c.error());
    CHECK(std::ranges::any_of(c.error(), [&](const std::string& line) { return line.starts_with(row.expected); }));
  }
}
