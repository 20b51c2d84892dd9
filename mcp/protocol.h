#pragma once
// The Model Context Protocol's messages as the client speaks them: JSON-RPC 2.0 objects,
// built and read as values, with no I/O, clock or globals. A transport (a child process's
// stdin/stdout, one JSON object a line; or Streamable HTTP) carries the texts; the session
// pairs requests with answers by id (pending.h).
//
// Every text here is one compact JSON object without a line break (JSON escapes every
// control character), so a stdio transport appends '\n' and a server's line is one message.
// What a server sends is untrusted: read_* and parse_message bound what they keep and say
// why they refuse, never assert.

#include <array>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dispatchd::mcp {

// The protocol revisions the client speaks, newest first: the one place a revision is added.
inline constexpr std::array<std::string_view, 3> k_protocol_versions = {"2025-11-25", "2025-06-18", "2025-03-26"};

// What `initialize` offers: the newest revision.
constexpr std::string_view latest_protocol_version() { return k_protocol_versions.front(); }

// The revision to speak once the server answered `initialize` with `answered`: that one when
// the client speaks it too; nullopt otherwise (the client must then disconnect, as the
// protocol says: the server offered only revisions the client does not know).
std::optional<std::string_view> negotiate(std::string_view answered);

// The ids of the client's own requests: positive, increasing per connection.
using RequestId = std::int64_t;

struct ClientInfo {
  std::string name = "dispatchd";
  std::string version;
};

// ---- what the client sends ------------------------------------------------------------

// `initialize` offering latest_protocol_version(), the client's name and version, and no
// capabilities (`{}`): dispatchd offers servers no sampling, roots or elicitation.
std::string initialize_request(RequestId id, const ClientInfo& client);
// `notifications/initialized`, sent once the `initialize` answer was accepted.
std::string initialized_notification();
// `tools/list`, the first page (no cursor) or the page after `cursor`.
std::string tools_list_request(RequestId id, const std::optional<std::string>& cursor);
// `tools/call` of `tool` with `arguments_json` (REQUIRES: one JSON object, e.g. validated
// fields); with `idempotency_key` non-empty, it rides in `_meta` as
// "dispatchd/idempotency_key" so that a server can recognize a call made twice.
std::string tools_call_request(RequestId id, std::string_view tool, std::string_view arguments_json,
                               std::string_view idempotency_key = {});
// `notifications/cancelled` for a request the client gave up on (its deadline passed).
std::string cancelled_notification(RequestId id, std::string_view reason);
// Answers to a server's own request, echoing its id as it came (`raw_id`: JSON text, a
// string or a number): `{}` (the answer to `ping`), or error -32601 "method not found" (the
// answer to every other request: the client offers servers nothing).
std::string empty_result(std::string_view raw_id);
std::string method_not_found(std::string_view raw_id, std::string_view method);

// JSON-RPC's error code for a method the receiver does not have.
inline constexpr std::int64_t k_method_not_found = -32601;

// ---- what the server sends --------------------------------------------------------------

enum class MessageKind {
  result,        // an answer to one of the client's requests
  error,         // an error answer to one of the client's requests
  request,       // the server asks the client something (ping, sampling, ...)
  notification,  // no answer expected (tools/list_changed, progress, log messages, ...)
};

struct Message {
  MessageKind kind = MessageKind::notification;
  // result and error: the client's request they answer; nullopt when the id is not one the
  // client could have sent (a string, a fraction, null): an answer to nothing, to be skipped.
  std::optional<RequestId> id;
  std::string raw_id;           // request: the server's id as JSON text, to echo in the answer
  std::string method;           // request and notification
  std::string params;           // request and notification: compact JSON, "" when absent
  std::string result;           // result: compact JSON (REQUIRES nothing of its shape yet)
  std::int64_t error_code = 0;  // error
  std::string error_message;    // error: the server's text, at most 500 bytes, valid UTF-8
};

// Limits on one message from a server.
struct MessageLimits {
  std::size_t max_bytes = 4u << 20;  // a longer line is refused whole
  std::size_t max_depth = 64;
};

// One line (stdio) or one JSON body or SSE event (HTTP) from the server, read strictly.
// Refused, with a short reason: not one JSON object, not JSON-RPC 2.0, a batch (an array;
// the protocol's current revisions send none), an object that is none of the four kinds.
[[nodiscard]] std::expected<Message, std::string> parse_message(std::string_view text,
                                                                const MessageLimits& limits = {});

// ---- results --------------------------------------------------------------------------

// The `initialize` answer: the revision the server chose and what it says of itself.
struct ServerHello {
  std::string protocol_version;     // as answered; negotiate() decides whether it is spoken
  std::string name;                 // serverInfo.name, "" when absent
  std::string version;              // serverInfo.version, "" when absent
  bool tools = false;               // capabilities.tools present: the server has tools
  bool tools_list_changed = false;  // capabilities.tools.listChanged: it announces changes
};
[[nodiscard]] std::expected<ServerHello, std::string> read_initialize_result(std::string_view result_json);

// One tool as `tools/list` describes it.
struct Tool {
  std::string name;
  std::string description;   // "" when absent
  std::string input_schema;  // compact JSON of `inputSchema` (an object), as the server sent it
};
// One page of `tools/list`.
struct ToolPage {
  std::vector<Tool> tools;
  std::optional<std::string> next_cursor;  // set when another page follows
};
// Refused: no `tools` array, a tool without a name or without an object `inputSchema`, two
// tools of one name on a page. At most 1,000 tools a page.
[[nodiscard]] std::expected<ToolPage, std::string> read_tools_list(std::string_view result_json);

// A `tools/call` answer reduced to what the agent may pass on: its text parts joined (one
// line break between parts) and capped; the other parts (images, audio, resources) named,
// never passed; and whether the tool says it failed.
struct ToolResult {
  std::string text;                       // valid UTF-8, at most max_text_bytes (cut at a character boundary)
  bool truncated = false;                 // the text parts held more than max_text_bytes
  bool is_error = false;                  // `isError: true`: the tool ran and failed (its text says why)
  std::vector<std::string> other_parts;   // "image (image/png)", "resource (file:///a.txt)", ...
  std::optional<std::string> structured;  // compact JSON of `structuredContent`, when present
                                          // and within max_text_bytes
};
[[nodiscard]] std::expected<ToolResult, std::string> read_tool_result(std::string_view result_json,
                                                                      std::size_t max_text_bytes);

}  // namespace dispatchd::mcp
