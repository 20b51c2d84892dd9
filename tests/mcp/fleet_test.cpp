// The configured servers together (mcp/fleet.h): the catalog's mcp actions pinned to their
// tools as a pure table (pin_actions), then against tests/fakes/mcp_script_server.py: calls
// only for pinned actions, a schema that becomes incompatible and compatible again through
// `list_changed` (the action disabled, then called again), a tool that disappears, and at
// most max_in_flight calls at once per server.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "mcp/fleet.h"
#include "tests/io_run.h"
#include "tests/test_util.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using mcp::PinState;

namespace {

// Fields: message (string, at most 50), times (integer 1..3, optional).
const char* const k_fleet_catalog = R"({"name":"t","action_field":"action","fields":{
    "message":{"type":"string","maxLength":50},"times":{"type":"integer","minimum":1,"maximum":3}},
  "actions":[
    {"name":"say","description":"echo","kind":"mcp","required":["message"],"optional":["times"],
     "mcp":{"server":"script","tool":"echo","use":"lookup"}},
    {"name":"wait","description":"hang","kind":"mcp","required":[],
     "mcp":{"server":"script","tool":"hang","use":"lookup"}},
    {"name":"elsewhere","description":"x","kind":"mcp","required":[],
     "mcp":{"server":"nowhere","tool":"echo","use":"lookup"}}]})";

std::shared_ptr<const catalog::Catalog> fleet_catalog() {
  auto parsed = catalog::Catalog::parse(k_fleet_catalog, "fleet.json");
  REQUIRE(parsed);
  return std::make_shared<const catalog::Catalog>(std::move(*parsed));
}

mcp::Tool tool(std::string name, std::string schema) { return {std::move(name), "", std::move(schema)}; }

const mcp::ActionPin& pin_of(const std::vector<mcp::ActionPin>& pins, const std::string& action) {
  for (const auto& pin : pins)
    if (pin.action == action) return pin;
  FAIL("no pin for " << action);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("pin_actions: each mcp action's verdict from what its server listed", "[mcp][fleet]") {
  const auto catalog = fleet_catalog();
  const std::string loose =
      R"({"type":"object","properties":{"message":{"type":"string"},"times":{"type":"integer"}}})";
  struct Row {
    const char* what;
    std::optional<std::vector<mcp::Tool>> script;  // nullopt: down
    PinState say;
    const char* problem;  // a substring of say's description
  };
  const Row rows[] = {
      {"listed, compatible", std::vector{tool("echo", loose), tool("hang", "{\"type\":\"object\"}")}, PinState::pinned,
       "pinned"},
      {"down", std::nullopt, PinState::server_down, "has not listed its tools"},
      {"the tool missing", std::vector{tool("hang", "{\"type\":\"object\"}")}, PinState::missing_tool,
       "does not list the tool"},
      {"a stricter length",
       std::vector{tool("echo", R"({"type":"object","properties":{"message":{"type":"string","maxLength":10}}})")},
       PinState::incompatible, "field `message`"},
      {"times required", std::vector{tool("echo", R"({"type":"object","required":["times"]})")}, PinState::incompatible,
       "times"},
      {"an unresolved $ref", std::vector{tool("echo", R"({"type":"object","properties":{"message":{"$ref":"#/x"}}})")},
       PinState::incompatible, "$ref"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    const auto pins = mcp::pin_actions(*catalog, {{"script", row.script}});
    REQUIRE(pins.size() == 3);
    const auto& say = pin_of(pins, "say");
    CHECK(say.state == row.say);
    CHECK(say.server == "script");
    CHECK(say.tool == "echo");
    CHECK_THAT(mcp::describe(say), Catch::Contains(row.problem));
    CHECK_THAT(mcp::describe(say), Catch::Contains("action `say` (server `script`, tool `echo`)"));
    CHECK(pin_of(pins, "elsewhere").state == PinState::unknown_server);
  }
}

TEST_CASE("pinned_arguments: the fields an action sends, renamed, required ones always sent", "[mcp][fleet]") {
  auto parsed = catalog::Catalog::parse(
      R"({"name":"t","action_field":"a","fields":{"order_id":{"type":"string"},"note":{"type":"string"}},
          "actions":[{"name":"get","description":"d","kind":"mcp","required":["order_id"],"optional":["note"],
                      "mcp":{"server":"s","tool":"t","use":"lookup","arguments":{"order_id":"id"}}}]})",
      "c.json");
  REQUIRE(parsed);
  const auto args = mcp::pinned_arguments(*parsed, *parsed->find_action("get"));
  REQUIRE(args.size() == 2);
  CHECK(args[0].field == "order_id");
  CHECK(args[0].argument == "id");
  CHECK(args[0].always_sent);
  CHECK(args[1].argument == "note");
  CHECK_FALSE(args[1].always_sent);
}

namespace {

struct FleetFixture {
  boost::asio::io_context io;
  std::unique_ptr<net::Transport> no_http;  // unused: stdio only
  std::unique_ptr<mcp::Fleet> fleet;
  std::shared_ptr<const catalog::Catalog> catalog = fleet_catalog();
  std::string schema_file;
  std::vector<std::string> log;
  int changes = 0;

  explicit FleetFixture(const std::string& schema, std::size_t max_in_flight = 4) {
    schema_file =
        (std::filesystem::temp_directory_path() / ("fleet-schema-" + std::to_string(::getpid()) + ".json")).string();
    write_schema(schema);
    mcp::StdioClientSettings s;
    s.name = "script";
    s.command.argv = {"/usr/bin/python3", test::source_path("tests/fakes/mcp_script_server.py"), "-", schema_file};
    s.command.env = {{"PATH", "/usr/bin:/bin"}};
    s.limits.exit_wait = 300ms;
    s.limits.term_wait = 300ms;
    s.session.client = {"dispatchd", "test"};
    s.session.call_timeout = 2s;
    s.restart = {100ms, 400ms};
    std::vector<mcp::FleetServer> servers;
    servers.push_back({std::move(s), max_in_flight});
    fleet = std::make_unique<mcp::Fleet>(io, unused_transport(), std::move(servers),
                                         [this](std::string line) { log.push_back(std::move(line)); });
    fleet->on_change([this] { ++changes; });
    fleet->bind(catalog);
    fleet->start();
  }
  ~FleetFixture() {
    fleet.reset();
    std::filesystem::remove(schema_file);
  }
  static net::Transport& unused_transport() {
    struct Unused : net::Transport {
      void send(net::HttpRequest, net::HttpCallback) override { FAIL("no HTTP server in this test"); }
    };
    static Unused unused;
    return unused;
  }
  void write_schema(const std::string& schema) {
    // Written whole and renamed, so that the server's watcher never reads half a file.
    const std::string tmp = schema_file + ".tmp";
    std::ofstream(tmp) << schema;
    std::filesystem::rename(tmp, schema_file);
  }
  PinState say_state() const { return pin_of(fleet->pins(), "say").state; }
  mcp::ServerCore::CallResult call(const std::string& action, const std::string& args) {
    std::optional<mcp::ServerCore::CallResult> result;
    fleet->call(action, args, "key-1", [&](mcp::ServerCore::CallResult r) { result = std::move(r); });
    test::run_until(io, [&] { return result.has_value(); });
    return std::move(*result);
  }
};

const char* const k_compatible =
    R"({"type":"object","properties":{"message":{"type":"string"},"times":{"type":"integer"}}})";
const char* const k_narrower = R"({"type":"object","properties":{"message":{"type":"string","maxLength":5}}})";

}  // namespace

TEST_CASE("fleet: pinned actions call their tool, list_changed disables and re-enables", "[mcp][fleet]") {
  FleetFixture f(k_compatible);
  bool listed = false;
  f.fleet->when_listed(10s, [&] { listed = true; });
  test::run_until(f.io, [&] { return listed; });
  REQUIRE(f.fleet->all_listed());
  CHECK(f.say_state() == PinState::pinned);
  CHECK(pin_of(f.fleet->pins(), "elsewhere").state == PinState::unknown_server);

  const auto echoed = f.call("say", R"({"message":"hola"})");
  REQUIRE(echoed);
  CHECK(echoed->text == "hola");

  // A call decided earlier for another tool than the action's now is not made.
  std::optional<mcp::ServerCore::CallResult> moved;
  f.fleet->call_tool("say", "script", "fail", "{}", "k", [&](mcp::ServerCore::CallResult r) { moved = std::move(r); });
  test::run_until(f.io, [&] { return moved.has_value(); });
  REQUIRE_FALSE(*moved);
  CHECK(moved->error().kind == mcp::CallErrorKind::disabled);
  CHECK_THAT(moved->error().message, Catch::Contains("now calls tool `echo` of server `script`"));

  // An action whose server is not configured is never sent anywhere.
  const auto elsewhere = f.call("elsewhere", "{}");
  REQUIRE_FALSE(elsewhere);
  CHECK(elsewhere.error().kind == mcp::CallErrorKind::disabled);
  CHECK_THAT(elsewhere.error().message, Catch::Contains("no server of that name"));

  // The server narrows `message`: after its list_changed the action is disabled, not called.
  f.write_schema(k_narrower);
  test::run_until(f.io, [&] { return f.say_state() == PinState::incompatible; });
  const auto refused = f.call("say", R"({"message":"hola"})");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == mcp::CallErrorKind::disabled);
  CHECK_THAT(refused.error().message, Catch::Contains("field `message`"));
  bool logged = false;
  for (const auto& line : f.log) logged = logged || line.find("incompatible") != std::string::npos;
  CHECK(logged);

  // The tool disappears, then comes back compatible: called again.
  f.write_schema(R"({"drop":true})");
  test::run_until(f.io, [&] { return f.say_state() == PinState::missing_tool; });
  f.write_schema(k_compatible);
  test::run_until(f.io, [&] { return f.say_state() == PinState::pinned; });
  const auto again = f.call("say", R"({"message":"otra vez"})");
  REQUIRE(again);
  CHECK(again->text == "otra vez");
  CHECK(f.changes >= 4);
}

TEST_CASE("fleet: at most max_in_flight calls at once per server, the rest wait in order", "[mcp][fleet]") {
  FleetFixture f(k_compatible, /*max_in_flight=*/1);
  bool listed = false;
  f.fleet->when_listed(10s, [&] { listed = true; });
  test::run_until(f.io, [&] { return listed; });

  // The hanging call holds the only slot until its deadline (2 s); the echo waits its turn.
  std::optional<mcp::ServerCore::CallResult> hung, echoed;
  f.fleet->call("wait", "{}", "k1", [&](auto r) { hung = std::move(r); });
  f.fleet->call("say", R"({"message":"after"})", "k2", [&](auto r) { echoed = std::move(r); });
  test::run_until(f.io, [&] { return !f.fleet->servers().empty() && f.fleet->servers()[0].waiting == 1; });
  CHECK(f.fleet->servers()[0].in_flight == 1);
  test::run_until(f.io, [&] { return hung.has_value() && echoed.has_value(); });
  REQUIRE_FALSE(*hung);
  CHECK(hung->error().kind == mcp::CallErrorKind::timed_out);
  REQUIRE(*echoed);
  CHECK((*echoed)->text == "after");
}

TEST_CASE("fleet: when_listed gives up after its timeout when a server never lists", "[mcp][fleet]") {
  boost::asio::io_context io;
  mcp::StdioClientSettings s;
  s.name = "broken";
  s.command.argv = {"/nonexistent/mcp-server"};
  s.restart = {1s, 1s};
  std::vector<mcp::FleetServer> servers;
  servers.push_back({std::move(s), 2});
  mcp::Fleet fleet(io, FleetFixture::unused_transport(), std::move(servers), nullptr);
  fleet.bind(fleet_catalog());
  fleet.start();
  bool gave_up = false;
  fleet.when_listed(200ms, [&] { gave_up = true; });
  test::run_until(io, [&] { return gave_up; });
  CHECK_FALSE(fleet.all_listed());
  CHECK(fleet.servers()[0].status.up == false);
  CHECK_FALSE(fleet.servers()[0].status.why.empty());
}
