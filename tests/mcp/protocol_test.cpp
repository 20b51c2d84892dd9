// The MCP client's messages: what it sends, byte for byte, and what it makes of what servers
// send, including what it refuses.
#include <catch2/catch.hpp>

#include <string>

#include "mcp/protocol.h"

using namespace dispatchd;
using mcp::MessageKind;

TEST_CASE("mcp: the revision is the one the server answered, when the client speaks it", "[mcp]") {
  CHECK(mcp::latest_protocol_version() == "2025-11-25");
  struct Row {
    const char* answered;
    std::optional<std::string_view> spoken;
  };
  const Row rows[] = {
      {"2025-11-25", "2025-11-25"}, {"2025-06-18", "2025-06-18"},
      {"2025-03-26", "2025-03-26"}, {"2024-11-05", std::nullopt},  // older than the client speaks: disconnect
      {"2026-07-28", std::nullopt},  // newer: the client offered 2025-11-25, the server must not answer this
      {"", std::nullopt},           {"2025-11-25 ", std::nullopt},
  };
  for (const auto& row : rows) {
    INFO(row.answered);
    CHECK(mcp::negotiate(row.answered) == row.spoken);
  }
}

TEST_CASE("mcp: the client's messages are one compact JSON-RPC object each", "[mcp]") {
  CHECK(mcp::initialize_request(1, {"dispatchd", "0.11.0"}) ==
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
        R"("capabilities":{},"clientInfo":{"name":"dispatchd","version":"0.11.0"}}})");
  CHECK(mcp::initialized_notification() == R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  CHECK(mcp::tools_list_request(2, std::nullopt) == R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})");
  CHECK(mcp::tools_list_request(3, "c\"2") ==
        R"({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"c\"2"}})");
  CHECK(
      mcp::tools_call_request(4, "get_order", R"({"order":"PED-1"})") ==
      R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_order","arguments":{"order":"PED-1"}}})");
  CHECK(mcp::tools_call_request(5, "create_ticket", "{}", "dispatchd-7-1") ==
        R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"create_ticket","arguments":{},)"
        R"("_meta":{"dispatchd/idempotency_key":"dispatchd-7-1"}}})");
  CHECK(mcp::cancelled_notification(6, "deadline passed") ==
        R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":6,"reason":"deadline passed"}})");
  CHECK(mcp::empty_result("\"p-1\"") == R"({"jsonrpc":"2.0","id":"p-1","result":{}})");
  CHECK(mcp::empty_result("17") == R"({"jsonrpc":"2.0","id":17,"result":{}})");
  CHECK(mcp::method_not_found("9", "sampling/createMessage") ==
        R"({"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"method not found: sampling/createMessage"}})");
  // A line break inside a value is escaped: every message stays on one line for stdio.
  CHECK(mcp::tools_call_request(8, "t", R"({"a":"x\ny"})").find('\n') == std::string::npos);
  CHECK(mcp::tools_list_request(8, "a\nb").find('\n') == std::string::npos);
}

TEST_CASE("mcp: a server's message is an answer, an error, a request or a notification", "[mcp]") {
  SECTION("an answer to the client's request, out of order or not") {
    const auto m = mcp::parse_message(R"({"jsonrpc":"2.0","id":7,"result":{"tools":[]}})");
    REQUIRE(m);
    CHECK(m->kind == MessageKind::result);
    CHECK(m->id == 7);
    CHECK(m->result == R"({"tools":[]})");
  }
  SECTION("an error answer, its message kept short") {
    const std::string long_text(2000, 'x');
    const auto m =
        mcp::parse_message(R"({"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":")" + long_text + R"("}})");
    REQUIRE(m);
    CHECK(m->kind == MessageKind::error);
    CHECK(m->id == 3);
    CHECK(m->error_code == -32602);
    CHECK(m->error_message.size() == 500);
  }
  SECTION("an answer whose id the client never sends (a string) matches nothing") {
    const auto m = mcp::parse_message(R"({"jsonrpc":"2.0","id":"7","result":{}})");
    REQUIRE(m);
    CHECK(m->kind == MessageKind::result);
    CHECK_FALSE(m->id.has_value());
  }
  SECTION("a request from the server keeps its id as it came, to answer it") {
    const auto ping = mcp::parse_message(R"({"jsonrpc":"2.0","id":"srv-1","method":"ping"})");
    REQUIRE(ping);
    CHECK(ping->kind == MessageKind::request);
    CHECK(ping->method == "ping");
    CHECK(ping->raw_id == R"("srv-1")");
    CHECK(mcp::empty_result(ping->raw_id) == R"({"jsonrpc":"2.0","id":"srv-1","result":{}})");
    const auto numbered = mcp::parse_message(R"({"jsonrpc":"2.0","id":0,"method":"roots/list","params":{}})");
    REQUIRE(numbered);
    CHECK(numbered->raw_id == "0");
    CHECK(numbered->params == "{}");
  }
  SECTION("a notification, before or after anything") {
    const auto m = mcp::parse_message(R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})");
    REQUIRE(m);
    CHECK(m->kind == MessageKind::notification);
    CHECK(m->method == "notifications/tools/list_changed");
    CHECK(m->params.empty());
  }
}

TEST_CASE("mcp: what is not a message is refused with the reason, never guessed", "[mcp]") {
  struct Row {
    std::string text;
    const char* reason;
  };
  const Row rows[] = {
      {"", "not JSON"},
      {"Server started on stdio", "not JSON"},
      {R"({"jsonrpc":"2.0","id":1,"result":{})", "not JSON"},
      {R"({"jsonrpc":"2.0","id":1,"result":{},"result":{}})", "not JSON"},  // duplicate key
      {R"([{"jsonrpc":"2.0","id":1,"result":{}}])", "batch"},
      {R"("hello")", "not a JSON object"},
      {R"({"id":1,"result":{}})", "not JSON-RPC 2.0"},
      {R"({"jsonrpc":"1.0","id":1,"result":{}})", "not JSON-RPC 2.0"},
      {R"({"jsonrpc":"2.0","id":1})", "neither"},
      {R"({"jsonrpc":"2.0"})", "neither a request"},
      {R"({"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1}})", "both or neither"},
      {R"({"jsonrpc":"2.0","id":1,"error":"bad"})", "not an object"},
      {R"({"jsonrpc":"2.0","method":7})", "not a string"},
      {R"({"jsonrpc":"2.0","id":{},"method":"ping"})", "neither a string nor an integer"},
      {R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})", "neither a string nor an integer"},
  };
  for (const auto& row : rows) {
    INFO(row.text);
    const auto m = mcp::parse_message(row.text);
    REQUIRE_FALSE(m);
    CHECK_THAT(m.error(), Catch::Contains(row.reason));
  }
  SECTION("a message over the limit is refused whole, and one too deep") {
    const std::string big = R"({"jsonrpc":"2.0","method":"x","params":{"a":")" + std::string(200, 'a') + R"("}})";
    CHECK_FALSE(mcp::parse_message(big, {.max_bytes = 100, .max_depth = 64}));
    CHECK(mcp::parse_message(big, {.max_bytes = 1000, .max_depth = 64}));
    std::string deep = R"({"jsonrpc":"2.0","method":"x","params":)";
    for (int i = 0; i < 100; ++i) deep += "[";
    for (int i = 0; i < 100; ++i) deep += "]";
    deep += "}";
    CHECK_FALSE(mcp::parse_message(deep));
  }
}

TEST_CASE("mcp: the initialize answer", "[mcp]") {
  const auto hello = mcp::read_initialize_result(
      R"({"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true},"logging":{}},)"
      R"("serverInfo":{"name":"orders","version":"1.2.0"},"instructions":"..."})");
  REQUIRE(hello);
  CHECK(hello->protocol_version == "2025-06-18");
  CHECK(hello->name == "orders");
  CHECK(hello->version == "1.2.0");
  CHECK(hello->tools);
  CHECK(hello->tools_list_changed);

  const auto bare = mcp::read_initialize_result(R"({"protocolVersion":"2025-11-25","capabilities":{}})");
  REQUIRE(bare);
  CHECK_FALSE(bare->tools);
  CHECK_FALSE(bare->tools_list_changed);
  CHECK(bare->name.empty());

  CHECK_THAT(mcp::read_initialize_result(R"({"capabilities":{}})").error(), Catch::Contains("protocolVersion"));
  CHECK_THAT(mcp::read_initialize_result("[]").error(), Catch::Contains("not an object"));
  CHECK_THAT(mcp::read_initialize_result("{").error(), Catch::Contains("not JSON"));
}

TEST_CASE("mcp: a tools/list page", "[mcp]") {
  const auto page =
      mcp::read_tools_list(R"({"tools":[{"name":"echo","description":"Echoes","inputSchema":{"type":"object",)"
                           R"("properties":{"message":{"type":"string"}},"required":["message"]}},)"
                           R"({"name":"get-sum","inputSchema":{"type":"object"}}],"nextCursor":"page-2"})");
  REQUIRE(page);
  REQUIRE(page->tools.size() == 2);
  CHECK(page->tools[0].name == "echo");
  CHECK(page->tools[0].description == "Echoes");
  CHECK(page->tools[0].input_schema ==
        R"({"type":"object","properties":{"message":{"type":"string"}},"required":["message"]})");
  CHECK(page->tools[1].description.empty());
  CHECK(page->next_cursor == "page-2");

  const auto last = mcp::read_tools_list(R"({"tools":[]})");
  REQUIRE(last);
  CHECK_FALSE(last->next_cursor.has_value());
  CHECK_FALSE(mcp::read_tools_list(R"({"tools":[],"nextCursor":""})")->next_cursor.has_value());

  struct Row {
    const char* result;
    const char* reason;
  };
  const Row rows[] = {
      {R"({})", "no tools array"},
      {R"({"tools":{}})", "no tools array"},
      {R"({"tools":[{"inputSchema":{}}]})", "tools[0] has no name"},
      {R"({"tools":[{"name":"","inputSchema":{}}]})", "tools[0] has no name"},
      {R"({"tools":[{"name":"a"}]})", "(a) has no inputSchema object"},
      {R"({"tools":[{"name":"a","inputSchema":"object"}]})", "(a) has no inputSchema object"},
      {R"({"tools":[{"name":"a","inputSchema":{}},{"name":"a","inputSchema":{}}]})", "two tools named a"},
  };
  for (const auto& row : rows) {
    INFO(row.result);
    const auto refused = mcp::read_tools_list(row.result);
    REQUIRE_FALSE(refused);
    CHECK_THAT(refused.error(), Catch::Contains(row.reason));
  }
  std::string many = R"({"tools":[)";
  for (int i = 0; i < 1001; ++i)
    many += (i ? "," : "") + std::string(R"({"name":"t)") + std::to_string(i) + R"(","inputSchema":{}})";
  many += "]}";
  CHECK_THAT(mcp::read_tools_list(many).error(), Catch::Contains("1001 tools"));
}

TEST_CASE("mcp: a tool's answer is its text, capped, with the other parts named", "[mcp]") {
  const auto result = mcp::read_tool_result(
      R"({"content":[{"type":"text","text":"Order PED-1: shipped"},{"type":"image","data":"iVBOR","mimeType":"image/png"},)"
      R"({"type":"text","text":"ETA Friday"},{"type":"resource","resource":{"uri":"file:///r.txt","text":"secret"}},)"
      R"({"type":"resource_link","uri":"https://x.example/a","name":"a"},{"type":"audio","mimeType":"audio/wav"}],)"
      R"("structuredContent":{"status":"shipped"}})",
      1000);
  REQUIRE(result);
  CHECK(result->text == "Order PED-1: shipped\nETA Friday");
  CHECK_FALSE(result->truncated);
  CHECK_FALSE(result->is_error);
  CHECK(result->other_parts == std::vector<std::string>{"image (image/png)", "resource (file:///r.txt)",
                                                        "resource_link (https://x.example/a)", "audio (audio/wav)"});
  CHECK(result->structured == R"({"status":"shipped"})");

  SECTION("a tool that failed says so") {
    const auto failed =
        mcp::read_tool_result(R"({"content":[{"type":"text","text":"no such order"}],"isError":true})", 100);
    REQUIRE(failed);
    CHECK(failed->is_error);
    CHECK(failed->text == "no such order");
  }
  SECTION("the cap: text cut at a character boundary, the rest dropped, structured content left out") {
    // "añb" is 4 bytes; a cap of 2 must not split the 2-byte ñ.
    const auto cut = mcp::read_tool_result(R"({"content":[{"type":"text","text":"añb"},{"type":"text","text":"more"}],)"
                                           R"("structuredContent":{"k":"long enough"}})",
                                           2);
    REQUIRE(cut);
    CHECK(cut->text == "a");
    CHECK(cut->truncated);
    CHECK_FALSE(cut->structured.has_value());
    const auto second =
        mcp::read_tool_result(R"({"content":[{"type":"text","text":"abc"},{"type":"text","text":"defg"}]})", 6);
    REQUIRE(second);
    CHECK(second->text == "abc\nde");
    CHECK(second->truncated);
    const auto exact = mcp::read_tool_result(R"({"content":[{"type":"text","text":"abc"}]})", 3);
    REQUIRE(exact);
    CHECK(exact->text == "abc");
    CHECK_FALSE(exact->truncated);
  }
  SECTION("refused: no content") {
    CHECK_THAT(mcp::read_tool_result(R"({"isError":true})", 10).error(), Catch::Contains("no content array"));
    CHECK_THAT(mcp::read_tool_result("null", 10).error(), Catch::Contains("not an object"));
  }
}
