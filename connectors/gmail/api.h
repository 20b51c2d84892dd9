#pragma once
// The Gmail API v1 without the I/O: building the requests the connector makes (as the net/
// transport sends them) and reading what comes back. Pure functions; the access token is
// an argument, never stored. `base` is connectors.gmail.api_base_url as Google documents it
// ("https://gmail.googleapis.com", a trailing '/' tolerated); every path below is appended.
//
//   profile_request       GET  /gmail/v1/users/me/profile
//   history_request       GET  /gmail/v1/users/me/history?startHistoryId=&historyTypes=messageAdded
//                              [&labelId=][&pageToken=]&maxResults=500
//   list_request          GET  /gmail/v1/users/me/messages?q=[&labelIds=][&pageToken=]&maxResults=
//   get_raw_request       GET  /gmail/v1/users/me/messages/{id}?format=raw
//   get_parts_request     GET  /gmail/v1/users/me/messages/{id}?format=full&fields=<the parts to a depth>
//   attachment_request    GET  /gmail/v1/users/me/messages/{id}/attachments/{attachmentId}
//   send_request          POST /gmail/v1/users/me/messages/send      {"raw":<base64url>[,"threadId"]}
//   modify_request        POST /gmail/v1/users/me/messages/{id}/modify {"addLabelIds":[..],"removeLabelIds":[]}
//   labels_request        GET  /gmail/v1/users/me/labels
//   create_label_request  POST /gmail/v1/users/me/labels              {"name","labelListVisibility",
//                                                                      "messageListVisibility"}
// Every request carries `Authorization: Bearer <token>` and `Accept: application/json`
// (POSTs also `Content-Type: application/json`); query values and path ids are
// percent-encoded. Timeouts: connect 10 s; 30 s in all, but 60 s for send and get (a raw
// message with attachments can be tens of MB).
//
// Classification of the transport's result (every reader, the same table):
//   kind          when                                                    the caller
//   (value)       2xx with a readable body of the expected shape
//   unauthorized  401                                                     invalidate the token, refresh,
//                                                                         retry once (client.h does)
//   not_found     404                                                     history: startHistoryId too old,
//                                                                         full sync; get: message gone
//   rate_limited  429; 403 whose reason is rateLimitExceeded,             wait retry_after (Retry-After
//                 userRateLimitExceeded or dailyLimitExceeded             seconds) or back off
//   server        5xx, 408                                                retry with backoff
//   unreachable   transport connect_failed: the request never left        retry with backoff
//   uncertain     transport timeout / reset / too large, or a 2xx whose   a read may be retried; a send
//                 body is not the expected JSON: Google may have acted    may have gone (look it up)
//   permanent     any other status (400, 403 forbidden, 409, 3xx...)      give up on this request
// A send answered `server` may also have gone out (a gateway gave up waiting): the caller
// resolves both it and `uncertain` by searching our own Message-ID (query_message_id).
// `reason` is Google's error.errors[0].reason (else error.status) and `message` its
// error.message, quoted and bounded; neither ever holds the token (the request's headers are
// never read here).

#include <chrono>
#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "net/http.h"

namespace dispatchd::gmail {

enum class ApiErrorKind { unauthorized, not_found, rate_limited, server, unreachable, uncertain, permanent };

// "unauthorized", "not_found", "rate_limited", "server", "unreachable", "uncertain", "permanent".
std::string_view to_string(ApiErrorKind kind);

// Whether the same request may simply be sent again later: unauthorized (after a refresh),
// rate_limited, server, unreachable. Not uncertain: that depends on whether the request
// was a read (retry) or a send (look it up first), which only the caller knows.
bool retryable(ApiErrorKind kind);

struct ApiError {
  ApiErrorKind kind = ApiErrorKind::permanent;
  int status = 0;       // the HTTP status; 0 for a transport failure
  std::string reason;   // e.g. "rateLimitExceeded", "notFound"; "" when the body had none
  std::string message;  // one line for logs and the outbox's error column
  // The Retry-After header (delta-seconds), when the answer had one.
  std::optional<std::chrono::seconds> retry_after;
};

// "gmail api rate_limited (http 429, rateLimitExceeded): <message>": one line for logs.
std::string describe(const ApiError& error);

constexpr int k_history_page_size = 500;   // history.list's maximum maxResults
constexpr int k_max_list_page_size = 500;  // messages.list's maximum maxResults (clamped to 1..500)

net::HttpRequest profile_request(std::string_view base, std::string_view token);
// label_id and page_token are left out when empty.
net::HttpRequest history_request(std::string_view base, std::string_view token, std::string_view start_history_id,
                                 std::string_view label_id, std::string_view page_token);
// query is Gmail's search syntax (query_after, query_message_id); label_id and page_token
// are left out when empty.
net::HttpRequest list_request(std::string_view base, std::string_view token, std::string_view query,
                              std::string_view label_id, std::string_view page_token, int max_results);
net::HttpRequest get_raw_request(std::string_view base, std::string_view token, std::string_view message_id);
// The message's MIME tree down to `depth` levels below its own part (the number of indexes
// in the partId looked for), each part's partId, mimeType, filename and body
// (attachmentId, size; data only at that depth, where Gmail puts a small body inline):
// fields=payload(partId,mimeType,filename,body(attachmentId,size),parts(...)).
net::HttpRequest get_parts_request(std::string_view base, std::string_view token, std::string_view message_id,
                                   int depth);
// messages.attachments.get: a MessagePartBody whose data is the file, base64url; the
// caller streams it (net::HttpRequest::on_body) and sets its size cap. Timeout 120 s.
net::HttpRequest attachment_request(std::string_view base, std::string_view token, std::string_view message_id,
                                    std::string_view attachment_id);
// `raw_bytes` is the RFC 5322 message itself: it is base64url-encoded here. threadId is
// left out when `thread_id` is empty (a new thread).
net::HttpRequest send_request(std::string_view base, std::string_view token, std::string_view raw_bytes,
                              std::string_view thread_id);
net::HttpRequest modify_request(std::string_view base, std::string_view token, std::string_view message_id,
                                std::span<const std::string> add_label_ids);
net::HttpRequest labels_request(std::string_view base, std::string_view token);
// A user label shown in the label list and the message list.
net::HttpRequest create_label_request(std::string_view base, std::string_view token, std::string_view name);

struct Profile {
  std::string email_address;  // emailAddress
  std::string history_id;     // the mailbox's current historyId: where polling starts
};

struct MessageRef {
  std::string id;
  std::string thread_id;
  std::vector<std::string> label_ids;  // when the answer lists them (history, send); else empty
};

struct HistoryPage {
  std::vector<MessageRef> added;  // messagesAdded in history order, each id once
  std::string next_page_token;    // "" on the last page
  std::string history_id;         // the mailbox's historyId when the page was made
};

struct ListPage {
  std::vector<MessageRef> messages;  // newest first, as Gmail lists them
  std::string next_page_token;       // "" on the last page
};

struct Label {
  std::string id;
  std::string name;
};

// One MIME part of messages.get?format=full (a MessagePart and its MessagePartBody).
struct PartBody {
  std::string part_id;
  std::string mime_type;
  std::string filename;
  std::string attachment_id;  // "" when Gmail gave the body inline
  std::int64_t size = 0;      // body.size: the decoded bytes
  std::string data;           // the inline body, base64url-decoded ("" with an attachment id)
};

// Each reader takes the transport's result for the matching request and classifies it by
// the table above: 2xx with a readable body is the value; anything else an ApiError.
// Bodies are read strictly (common/strict_json.h), at most 4 MiB and depth 32. A history or
// list entry without an id makes the whole page unreadable (uncertain) rather than
// skipping it: a cursor moved past it would lose the message for good.
[[nodiscard]] std::expected<Profile, ApiError> read_profile(const net::HttpResult& result);
[[nodiscard]] std::expected<HistoryPage, ApiError> read_history(const net::HttpResult& result);
[[nodiscard]] std::expected<ListPage, ApiError> read_list(const net::HttpResult& result);
// 2xx: the body as it came (messages.get?format=raw: the caller parses it).
[[nodiscard]] std::expected<std::string, ApiError> read_body(const net::HttpResult& result);
// messages.send's Message resource; a 2xx without an id is uncertain (it may have gone).
[[nodiscard]] std::expected<MessageRef, ApiError> read_sent(const net::HttpResult& result);
// Any 2xx (modify).
[[nodiscard]] std::expected<void, ApiError> read_ok(const net::HttpResult& result);
[[nodiscard]] std::expected<std::vector<Label>, ApiError> read_labels(const net::HttpResult& result);
[[nodiscard]] std::expected<Label, ApiError> read_label(const net::HttpResult& result);
// get_parts_request's answer: the part whose partId is `part_id` (found by a walk of the
// payload's parts, at most 256 parts and depth 32), nullopt when it has none. Read up to
// 48 MiB (an inline body with the rest); a body data that is not base64url is uncertain.
[[nodiscard]] std::expected<std::optional<PartBody>, ApiError> read_part(const net::HttpResult& result,
                                                                         std::string_view part_id);

// Gmail search queries for list_request's `query`:
//   query_after(t)          "after:<unix seconds>": mail received after `t`
//   query_message_id(id)    "rfc822msgid:<id> in:anywhere": the message whose Message-ID
//                           header is `id` (angle brackets optional), sent mail, spam and
//                           trash included. REQUIRES: `id` has no whitespace or quotes
//                           (ours never do).
std::string query_after(std::chrono::sys_seconds t);
std::string query_message_id(std::string_view message_id);

}  // namespace dispatchd::gmail
