#pragma once
// The send side of the Cloud API, without the I/O: building the Graph requests (as the
// net/ transport sends them) and reading the responses (what it gives back). Pure
// functions; the access token is an argument, never stored.
//
//   POST {graph_base_url}/{phone_number_id}/messages
//   Authorization: Bearer <access token>
//   Content-Type: application/json
//   text:      {"messaging_product":"whatsapp","recipient_type":"individual","to":"<wa_id>",
//               "type":"text","text":{"preview_url":false,"body":"<text>"}
//               [,"biz_opaque_callback_data":"<tracker>"]}
//   choices:   {"messaging_product":"whatsapp","recipient_type":"individual","to":"<wa_id>",
//               "type":"interactive","interactive":{"type":"button","body":{"text":"<text>"},
//               "action":{"buttons":[{"type":"reply","reply":{"id","title"}}]}}, ...}
//              or "interactive":{"type":"list","body":{"text"},"action":{"button":"<label>",
//               "sections":[{"title","rows":[{"id","title"[,"description"]}]}]}}
//              (Meta's "Interactive reply buttons messages" and "Interactive list messages")
//   template:  {"messaging_product":"whatsapp","recipient_type":"individual","to":"<wa_id>",
//               "type":"template","template":{"name","language":{"code"},"components":[...]}, ...}
//              (Meta's "Template messages"; the object comes from template_message.h)
//   mark read: {"messaging_product":"whatsapp","status":"read","message_id":"<wamid>"
//               [,"typing_indicator":{"type":"text"}]}   (answered {"success":true}; Meta
//               dismisses the indicator at our reply or after 25 seconds)
//
// A sent message answers {"messaging_product":"whatsapp","contacts":[{"input","wa_id"}],
// "messages":[{"id":"wamid.…"}]}; a refused one a Graph error object
// {"error":{"message","type","code","error_subcode","error_data":{"details"},"fbtrace_id"}},
// classified by errors.h.

#include <chrono>
#include <cstddef>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "common/interactive.h"
#include "connectors/whatsapp/errors.h"
#include "net/http.h"

namespace dispatchd::whatsapp {

// Where and as whom to send: config connectors.whatsapp.* and the resolved token.
struct GraphAccount {
  std::string graph_base_url;  // with the API version, e.g. "https://graph.facebook.com/v21.0"
  std::string phone_number_id;
  std::string access_token;
};

constexpr std::size_t k_max_text_points = 4096;  // Cloud API limit of a text body
constexpr std::size_t k_max_tracker_bytes = 512;

// The builders return a POST for the transport with the request's default timeouts: the
// caller sets its own.
//
// The request that sends `body` as a free-form text to `to` (a wa_id: 1..32 digits).
// `tracker` (optional, at most 512 bytes) travels as biz_opaque_callback_data and comes
// back in every status webhook of the message: pass the outbox idempotency key so that a
// status can be matched to its row even when the send's own answer was lost.
// Refuses (one phrase; the send then fails for good, nothing left): a base URL that is not
// http(s), a phone_number_id that is not digits, an empty token or one with control
// characters or spaces, a bad recipient, an empty body, a body that is not UTF-8 or has
// more than 4096 code points, a tracker that is too long.
[[nodiscard]] std::expected<net::HttpRequest, std::string> build_text_message(const GraphAccount& account,
                                                                              std::string_view to,
                                                                              std::string_view body,
                                                                              std::string_view tracker = {});

// The request that sends `body` with `choices` as an interactive message (reply buttons or
// a list). Refuses what build_text_message refuses, and a body longer than Meta allows
// above those choices (1024 code points with buttons, 4096 with a list). The choices are
// taken as checked (interactive::read or parse_stored checked them).
[[nodiscard]] std::expected<net::HttpRequest, std::string> build_interactive_message(
    const GraphAccount& account, std::string_view to, std::string_view body, const interactive::Choices& choices,
    std::string_view tracker = {});

// The request that sends a template message: `template_object` is template_message.h's
// template_object() (compact JSON, copied in as it is). Refuses what build_text_message
// refuses about the account, the recipient and the tracker.
[[nodiscard]] std::expected<net::HttpRequest, std::string> build_template_message(const GraphAccount& account,
                                                                                  std::string_view to,
                                                                                  std::string_view template_object,
                                                                                  std::string_view tracker = {});

// Whether a read mark also shows the customer that a reply is being written.
enum class Typing { hidden, shown };

// The request that marks an inbound message (and the earlier ones) read, blue ticks, and
// with Typing::shown displays the typing indicator: best effort, never retried.
[[nodiscard]] std::expected<net::HttpRequest, std::string> build_mark_read(const GraphAccount& account,
                                                                           std::string_view message_id,
                                                                           Typing typing = Typing::hidden);

// The request that looks a customer's file up (Meta's "Retrieve Media URL"):
//   GET {graph_base_url}/{media_id}   Authorization: Bearer <access token>
// answered with its short-lived download URL (media_info.h). Refuses a media id that is
// not letters, digits, '.', '_' or '-' (1..128), and what build_text_message refuses about
// the base URL and the token.
[[nodiscard]] std::expected<net::HttpRequest, std::string> build_media_lookup(const GraphAccount& account,
                                                                              std::string_view media_id);

// The request that downloads the file from `url` (the lookup's, checked with
// may_send_token_to), with the same token.
[[nodiscard]] net::HttpRequest build_media_download(const GraphAccount& account, std::string_view url);

struct Sent {
  std::string message_id;      // messages[0].id: the wamid later status webhooks refer to
  std::string message_status;  // messages[0].message_status when given ("accepted", …)
};

struct SendFailure {
  ErrorClass kind = ErrorClass::permanent;
  GraphError error;
  std::optional<std::chrono::seconds> retry_after;  // the response's Retry-After header
};

// Reads the answer to build_text_message's request: `status` and `body` of the response
// and the delay its Retry-After asks for (net::retry_after_seconds), if any. 2xx with messages[0].id is Sent;
// 2xx without it is an `unknown` failure (it may have been sent); otherwise the Graph
// error object when the body holds one (else only the status) goes through classify().
[[nodiscard]] std::expected<Sent, SendFailure> read_send_response(
    int status, std::string_view body, std::optional<std::chrono::seconds> retry_after = std::nullopt);

// Reads a non-2xx answer of any Graph call: its Graph error object (else only the status),
// classified.
[[nodiscard]] SendFailure read_failure(int status, std::string_view body,
                                       std::optional<std::chrono::seconds> retry_after = std::nullopt);

// Reads the answer to build_mark_read's request: any 2xx succeeds.
[[nodiscard]] std::expected<void, SendFailure> read_mark_read_response(
    int status, std::string_view body, std::optional<std::chrono::seconds> retry_after = std::nullopt);

}  // namespace dispatchd::whatsapp
