#include "connectors/whatsapp/graph.h"

#include "common/json_access.h"
#include "common/json_out.h"
#include "common/strict_json.h"
#include "common/text.h"
#include "common/utf8.h"
#include "connectors/whatsapp/internal/json_util.h"

namespace dispatchd::whatsapp {
namespace {

constexpr std::size_t k_max_phone_id = 32;
constexpr std::size_t k_max_recipient = 32;
constexpr std::size_t k_max_message_id = 512;
constexpr std::size_t k_max_response_bytes = 64 * 1024;

bool all_digits(std::string_view s, std::size_t max) {
  if (s.empty() || s.size() > max) return false;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Printable ASCII without spaces: what may go into a header or a URL path unescaped.
bool plain_token(std::string_view s, std::size_t max) {
  if (s.empty() || s.size() > max) return false;
  for (const char c : s) {
    if (c <= ' ' || c > '~') return false;
  }
  return true;
}

std::expected<net::HttpRequest, std::string> base_request(const GraphAccount& account) {
  std::string_view base = account.graph_base_url;
  if (!base.starts_with("https://") && !base.starts_with("http://")) {
    return std::unexpected("graph_base_url is not an http(s) URL");
  }
  while (base.ends_with('/')) base.remove_suffix(1);
  if (!all_digits(account.phone_number_id, k_max_phone_id)) return std::unexpected("phone_number_id is not digits");
  if (!plain_token(account.access_token, 4096)) {
    return std::unexpected("access token is empty or has spaces or control characters");
  }
  net::HttpRequest request;
  request.method = "POST";
  request.url = std::string(base) + "/" + account.phone_number_id + "/messages";
  request.headers = {{"Authorization", "Bearer " + account.access_token}, {"Content-Type", "application/json"}};
  return request;
}

bool media_id_ok(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  for (const char c : id) {
    const bool ok =
        (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// A JSON object of {"messaging_product":"whatsapp", <what fill writes>}.
template <typename Fill>
std::string messaging_object(Fill&& fill) {
  JsonOut out;
  out.begin_object().field("messaging_product", "whatsapp");
  fill(out);
  return out.end_object().str();
}

// The response body as JSON, when it is a small enough JSON document.
std::optional<json::Parsed> parse_response(std::string_view body) {
  if (body.size() > k_max_response_bytes) return std::nullopt;
  auto parsed = json::parse_strict(body, {});
  if (!parsed) return std::nullopt;
  return std::move(*parsed);
}

SendFailure failure(int status, std::string_view body, std::optional<std::chrono::seconds> retry_after) {
  SendFailure out;
  out.retry_after = retry_after;
  const auto parsed = parse_response(body);
  const rapidjson::Value* error = parsed ? json::object_member(parsed->document, "error") : nullptr;
  if (error != nullptr) {
    out.error = detail::graph_error(*error, status);
  } else {
    out.error.http_status = status;
    out.error.message = body.empty() ? "no response body" : "response body " + text::quote(body, 60);
  }
  out.kind = classify(out.error);
  return out;
}

bool success(int status) { return status >= 200 && status <= 299; }

// A message to `to`: the request with its checks, the body written by `fill` between the
// recipient and the tracker.
template <typename Fill>
std::expected<net::HttpRequest, std::string> message_request(const GraphAccount& account, std::string_view to,
                                                             std::string_view body, std::size_t max_points,
                                                             std::string_view tracker, Fill&& fill) {
  auto request = base_request(account);
  if (!request) return request;
  if (!all_digits(to, k_max_recipient)) return std::unexpected("recipient is not a wa_id (1..32 digits)");
  if (body.empty()) return std::unexpected("empty message body");
  if (!utf8::is_valid(body)) return std::unexpected("message body is not valid UTF-8");
  if (utf8::code_points(body) > max_points) {
    return std::unexpected("message body is longer than " + std::to_string(max_points) + " characters");
  }
  if (tracker.size() > k_max_tracker_bytes) return std::unexpected("tracker is longer than 512 bytes");
  request->body = messaging_object([&](JsonOut& out) {
    out.field("recipient_type", "individual").field("to", to);
    fill(out);
    if (!tracker.empty()) out.field("biz_opaque_callback_data", tracker);
  });
  return request;
}

void write_action(JsonOut& out, const interactive::Choices& choices) {
  out.begin_object("action");
  if (choices.kind == interactive::Kind::buttons) {
    out.begin_array("buttons");
    for (const auto& b : choices.buttons) {
      out.begin_object().field("type", "reply").begin_object("reply").field("id", b.id).field("title", b.title);
      out.end_object().end_object();
    }
    out.end_array();
  } else {
    out.field("button", choices.list_button).begin_array("sections");
    for (const auto& s : choices.sections) {
      out.begin_object().field("title", s.title).begin_array("rows");
      for (const auto& r : s.rows) {
        out.begin_object().field("id", r.id).field("title", r.title);
        if (r.description && !r.description->empty()) out.field("description", *r.description);
        out.end_object();
      }
      out.end_array().end_object();
    }
    out.end_array();
  }
  out.end_object();
}

}  // namespace

std::expected<net::HttpRequest, std::string> build_text_message(const GraphAccount& account, std::string_view to,
                                                                std::string_view body, std::string_view tracker) {
  return message_request(account, to, body, k_max_text_points, tracker, [&](JsonOut& out) {
    out.field("type", "text").begin_object("text").field("preview_url", false).field("body", body).end_object();
  });
}

std::expected<net::HttpRequest, std::string> build_interactive_message(const GraphAccount& account, std::string_view to,
                                                                       std::string_view body,
                                                                       const interactive::Choices& choices,
                                                                       std::string_view tracker) {
  const bool buttons = choices.kind == interactive::Kind::buttons;
  return message_request(account, to, body, interactive::max_body(choices.kind), tracker, [&](JsonOut& out) {
    out.field("type", "interactive").begin_object("interactive").field("type", buttons ? "button" : "list");
    out.begin_object("body").field("text", body).end_object();
    write_action(out, choices);
    out.end_object();
  });
}

std::expected<net::HttpRequest, std::string> build_template_message(const GraphAccount& account, std::string_view to,
                                                                    std::string_view template_object,
                                                                    std::string_view tracker) {
  // The object is ours (template_object), not the model's text: no length of Meta's applies to it whole.
  return message_request(account, to, template_object, template_object.size(), tracker,
                         [&](JsonOut& out) { out.field("type", "template").raw("template", template_object); });
}

std::expected<net::HttpRequest, std::string> build_mark_read(const GraphAccount& account, std::string_view message_id,
                                                             Typing typing) {
  auto request = base_request(account);
  if (!request) return request;
  if (!plain_token(message_id, k_max_message_id)) return std::unexpected("message id is empty or not printable");
  request->body = messaging_object([&](JsonOut& out) {
    out.field("status", "read").field("message_id", message_id);
    if (typing == Typing::shown) out.begin_object("typing_indicator").field("type", "text").end_object();
  });
  return request;
}

std::expected<Sent, SendFailure> read_send_response(int status, std::string_view body,
                                                    std::optional<std::chrono::seconds> retry_after) {
  if (!success(status)) return std::unexpected(failure(status, body, retry_after));
  if (const auto parsed = parse_response(body)) {
    const rapidjson::Value* messages = json::array_member(parsed->document, "messages");
    if (messages != nullptr && !messages->Empty()) {
      const rapidjson::Value& first = (*messages)[0];
      Sent sent{std::string(json::string_of(json::member(first, "id"))),
                std::string(json::string_of(json::member(first, "message_status")))};
      if (!sent.message_id.empty()) return sent;
    }
  }
  SendFailure unknown;
  unknown.kind = ErrorClass::unknown;
  unknown.error.http_status = status;
  unknown.error.message = "success status without messages[0].id: " + text::quote(body, 60);
  return std::unexpected(std::move(unknown));
}

std::expected<net::HttpRequest, std::string> build_media_lookup(const GraphAccount& account,
                                                                std::string_view media_id) {
  auto request = base_request(account);
  if (!request) return request;
  if (!media_id_ok(media_id)) return std::unexpected("media id is empty, too long or not a plain token");
  request->method = "GET";
  std::string_view base = account.graph_base_url;
  while (base.ends_with('/')) base.remove_suffix(1);
  request->url = std::string(base) + "/" + std::string(media_id);
  request->headers = {{"Authorization", "Bearer " + account.access_token}};
  return request;
}

net::HttpRequest build_media_download(const GraphAccount& account, std::string_view url) {
  net::HttpRequest request;
  request.method = "GET";
  request.url = std::string(url);
  request.headers = {{"Authorization", "Bearer " + account.access_token}};
  return request;
}

SendFailure read_failure(int status, std::string_view body, std::optional<std::chrono::seconds> retry_after) {
  return failure(status, body, retry_after);
}

std::expected<void, SendFailure> read_mark_read_response(int status, std::string_view body,
                                                         std::optional<std::chrono::seconds> retry_after) {
  if (!success(status)) return std::unexpected(failure(status, body, retry_after));
  return {};
}

}  // namespace dispatchd::whatsapp
