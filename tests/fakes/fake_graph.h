#pragma once
// A fake WhatsApp Cloud API (Graph) server for tests and the demo. It speaks the wire
// format of POST /{version}/{phone_number_id}/messages on 127.0.0.1, on its own thread:
//
// - answers a text message, an interactive one (reply buttons or a list) whose shape
//   is Meta's (graph_interactive.h; 400, code 100 otherwise), and a template message that
//   fits a template it serves (graph_template.h; 132001, 132000, 132018 or 100 otherwise), with
//   {"messaging_product","contacts":[{"input","wa_id"}],"messages":[{"id":"wamid.fake…"}]},
//   and a mark-as-read with {"success":true};
// - checks `Authorization: Bearer <access_token>` (401, Graph code 190 otherwise), the
//   phone number id (400, code 100), the JSON body and messaging_product (400, code 100);
// - records every request (also refused ones) for the test to inspect;
// - can be scripted: each message POST takes the next scripted reply, if any (a Graph
//   error with a realistic body, a bare HTTP status, a delay before answering);
// - serves the business account's message templates, GET /{version}/{waba_id}/message_templates,
//   paged as Graph pages them: {"data":[...],"paging":{"cursors":{"before","after"},"next"}}
//   with no "next" on the last page, at most template_page_size a page (and at most the
//   request's `limit`), the next page asked for with `after=<cursor>`. Each template GET
//   takes the next scripted template reply, if any (script_templates). The shapes follow
//   Meta's reference ("WhatsApp Business Account Message Templates").
// - serves customers' files (FakeMedia): GET /{version}/{media-id} answers Meta's "Retrieve
//   Media URL" object {"messaging_product","url","mime_type","sha256","file_size","id"}
//   (400, code 100 "does not exist" for an id it does not serve, as for an expired one), its
//   url on this server, /media-download/{id}/{n}?expires=<unix ms>: the bytes with the
//   file's type, after the bearer token is checked (401 without it), or 404 once the URL
//   expired (media_url_ttl, or a stale URL the file's first ones are made).
//
// Thread-safety: every public member may be called from any thread while the server runs.
// Construction binds and starts serving (throws std::runtime_error when it cannot bind);
// the destructor stops it. Also built as the standalone `fake_graph` (fake_graph_main.cpp).

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dispatchd::fakes {

struct RecordedRequest {
  std::string method;
  std::string target;  // path and query as received
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // When its last byte was read (CLOCK_MONOTONIC, which other processes share).
  std::chrono::steady_clock::time_point received{};
  // From the JSON body when it parsed (empty otherwise):
  std::string messaging_product;
  std::string to;
  std::string type;
  std::string text;        // text.body
  std::string status;      // "read" for a mark-as-read
  std::string message_id;  // the message marked read
  std::string tracker;     // biz_opaque_callback_data
  std::string typing;      // typing_indicator.type of a mark-as-read ("text"), empty without one
  // What the fake answered:
  int answered_status = 0;
  std::string answered_wamid;  // the id of a "sent" message
};

// One scripted answer for the next message POST.
struct ScriptedReply {
  std::chrono::milliseconds delay{0};  // wait this long before answering
  int http_status = 0;                 // 0: answer as usual (after the delay)
  std::optional<int> code;             // a Graph error object with this code
  std::string body;                    // when set, sent verbatim instead
  std::string retry_after;             // Retry-After header, when set

  // The error Graph answers for `code`, with its usual HTTP status and message: 131047
  // (400, re-engagement), 130429 (400, throughput), 131056 (400, pair rate limit),
  // 131026 (400, undeliverable), 190 (401, OAuthException), 100 (400, invalid parameter),
  // 2 (503, service temporarily unavailable), 1 (500, unknown error).
  static ScriptedReply graph_error(int code);
  static ScriptedReply status(int http_status, std::string body = {});
  static ScriptedReply delayed(std::chrono::milliseconds delay);
};

// A customer's file the fake serves.
struct FakeMedia {
  std::string id;  // the media id a webhook names
  std::string mime_type = "image/jpeg";
  std::string bytes;
  std::string sha256;                  // the lookup's: "" for the bytes' own
  bool state_size = true;              // the lookup states file_size (the bytes' size, or stated_size)
  std::int64_t stated_size = -1;       // >= 0: the size the lookup states instead
  int stale_urls = 0;                  // the first N URLs handed out are expired already
  std::chrono::milliseconds delay{0};  // before a download's answer
};

struct FakeGraphOptions {
  std::string access_token = "test-token";
  std::string phone_number_id = "109876543210001";
  std::string version = "v21.0";  // only used by base_url(); any version path is served
  std::uint16_t port = 0;         // 0: an ephemeral port
  std::string waba_id = "102290129340398";
  // The templates served, each one JSON object as Graph lists it; default_templates() when
  // not changed.
  std::vector<std::string> templates = default_templates();
  std::size_t template_page_size = 2;

  // Five templates (2 pages of 2 and one of 1 by default): order_update in es and en_US
  // (UTILITY, positional, header, body and URL button parameters), appointment_reminder
  // (UTILITY, named), spring_sale (MARKETING) and login_code (AUTHENTICATION), all APPROVED.
  static std::vector<std::string> default_templates();
  std::vector<FakeMedia> media;
  std::chrono::milliseconds media_url_ttl{5 * 60 * 1000};  // how long a download URL works
  // Called on the server thread after each request was answered (e.g. to log it).
  std::function<void(const RecordedRequest&)> on_request;
};

class FakeGraph {
 public:
  explicit FakeGraph(FakeGraphOptions options = {});
  ~FakeGraph();
  FakeGraph(const FakeGraph&) = delete;
  FakeGraph& operator=(const FakeGraph&) = delete;

  std::uint16_t port() const;
  // "http://127.0.0.1:<port>/<version>": the graph_base_url to configure.
  std::string base_url() const;

  // Queues a reply for the next message send (first in, first out); mark-as-read requests
  // never take one.
  void script(ScriptedReply reply);
  // Queues a reply for the next template list GET (first in, first out).
  void script_templates(ScriptedReply reply);
  // Every request so far, in arrival order.
  std::vector<RecordedRequest> requests() const;
  // Stops serving and joins the thread; idempotent. Open connections are closed.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

// One JSON line describing `request` (the demo's log format):
// {"event":"request","method","target","to","type","text","status","message_id",
//  "tracker","payload","answered","wamid","received_ns"} (payload: an interactive message's
// request body as received); empty fields are left out. received_ns is
// RecordedRequest::received in nanoseconds (Python's time.monotonic_ns() reads that clock):
// a test measures gaps between requests by it, not by when it read the line.
std::string to_json_line(const RecordedRequest& request);

}  // namespace dispatchd::fakes
