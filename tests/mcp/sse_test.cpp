// The text/event-stream reader: events however the stream is cut, the standard's line and
// field rules, ids for resuming, retry, and a stream that grows past the limit.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "mcp/sse.h"

using namespace dispatchd;
using mcp::SseEvent;
using mcp::SseReader;

namespace {

// Every event of `stream` fed in chunks of `size` bytes.
std::vector<SseEvent> read_in_chunks(const std::string& stream, std::size_t size) {
  SseReader reader;
  std::vector<SseEvent> all;
  for (std::size_t at = 0; at < stream.size(); at += size) {
    auto events = reader.feed(std::string_view(stream).substr(at, size));
    REQUIRE(events);
    all.insert(all.end(), events->begin(), events->end());
  }
  return all;
}

}  // namespace

TEST_CASE("sse: events come out the same however the stream is cut", "[mcp][sse]") {
  const std::string stream =
      "\xEF\xBB\xBF: keep-alive\r\n"
      "id: 1\r\n"
      "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n"
      "\r\n"
      "event: message\n"
      "id: 2\n"
      "data: {\"jsonrpc\":\"2.0\",\n"
      "data:\"method\":\"x\"}\n"
      "\n"
      "retry: 1500\r"
      "event: ping\r"
      "data\r"
      "\r"
      "id: 3\n"
      "\n";  // no data: nothing dispatched, but the id is kept
  for (const std::size_t size : {stream.size(), std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{7}}) {
    INFO("chunks of " << size);
    const auto events = read_in_chunks(stream, size);
    REQUIRE(events.size() == 3);
    CHECK(events[0].type == "message");
    CHECK(events[0].id == "1");
    CHECK(events[0].data == R"({"jsonrpc":"2.0","id":1,"result":{}})");
    CHECK(events[1].id == "2");
    CHECK(events[1].data == "{\"jsonrpc\":\"2.0\",\n\"method\":\"x\"}");
    CHECK(events[2].type == "ping");
    CHECK(events[2].data.empty());
    CHECK(events[2].id == "2");  // the last id carries over
  }
  SseReader reader;
  REQUIRE(reader.feed(stream));
  CHECK(reader.last_event_id() == "3");
  CHECK(reader.retry() == std::chrono::milliseconds(1500));
}

TEST_CASE("sse: the field rules", "[mcp][sse]") {
  struct Row {
    std::string stream;
    std::vector<std::string> data;
  };
  const std::vector<Row> rows = {
      {"data:no space\n\n", {"no space"}},
      {"data:  two spaces\n\n", {" two spaces"}},
      {"data\n\n", {""}},
      {"data:\ndata:\n\n", {"\n"}},
      {"unknown: x\ndata: y\n\n", {"y"}},
      {"data: a\n\ndata: b\n\n", {"a", "b"}},
      {"data: unfinished", {}},  // no blank line yet: not an event
      {"event: only\n\n", {}},
  };
  for (const auto& row : rows) {
    INFO(row.stream);
    SseReader reader;
    const auto events = reader.feed(row.stream);
    REQUIRE(events);
    std::vector<std::string> data;
    for (const auto& e : *events) data.push_back(e.data);
    CHECK(data == row.data);
  }
  SECTION("retry only when all digits; an id holding NUL is ignored") {
    SseReader reader;
    REQUIRE(reader.feed("retry: 12a\nretry: -5\nretry:\n"));
    CHECK_FALSE(reader.retry().has_value());
    REQUIRE(reader.feed(std::string("id: good\nid: ba\0d\n", 19)));
    CHECK(reader.last_event_id() == "good");
  }
}

TEST_CASE("sse: a line or an event past the limit refuses the stream", "[mcp][sse]") {
  SseReader lines(16);
  CHECK_FALSE(lines.feed("data: " + std::string(20, 'x')));
  SseReader events(16);
  CHECK(events.feed("data: 0123456789\n"));
  CHECK_FALSE(events.feed("data: 0123456789\n"));
}
