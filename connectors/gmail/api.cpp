#include "connectors/gmail/api.h"

#include <algorithm>

#include "common/json_access.h"
#include "common/json_out.h"
#include "common/strict_json.h"
#include "common/text.h"
#include "connectors/gmail/base64url.h"
#include "net/retry_after.h"

namespace dispatchd::gmail {
namespace {

using std::chrono::milliseconds;

constexpr std::string_view k_users_me = "/gmail/v1/users/me";
constexpr milliseconds k_connect_timeout{10'000};
constexpr milliseconds k_timeout{30'000};
constexpr milliseconds k_long_timeout{60'000};  // send and get: bodies of many MB
constexpr std::size_t k_max_json_bytes = 4 * 1024 * 1024;
constexpr std::size_t k_max_parts_bytes = 48u << 20;  // a format=full answer with an inline body
constexpr milliseconds k_attachment_timeout{120'000};
constexpr int k_max_walked_parts = 256;
constexpr std::size_t k_max_quoted_points = 200;
constexpr std::string_view k_rate_reasons[] = {"rateLimitExceeded", "userRateLimitExceeded", "dailyLimitExceeded"};

std::string_view trimmed_base(std::string_view base) {
  while (base.ends_with('/')) base.remove_suffix(1);
  return base;
}

net::HttpRequest request(std::string method, std::string_view base, std::string_view token, std::string_view path,
                         milliseconds timeout = k_timeout) {
  net::HttpRequest out;
  out.method = std::move(method);
  out.url = std::string(trimmed_base(base)).append(k_users_me).append(path);
  out.headers = {{"Authorization", "Bearer " + std::string(token)}, {"Accept", "application/json"}};
  if (out.method == "POST") out.headers.add("Content-Type", "application/json");
  out.connect_timeout = k_connect_timeout;
  out.timeout = timeout;
  return out;
}

// Appends "?name=value" or "&name=value", percent-encoded; nothing when `value` is empty.
void add_param(std::string& url, std::string_view name, std::string_view value) {
  if (value.empty()) return;
  url += url.find('?') == std::string::npos ? '?' : '&';
  url.append(name).append("=").append(text::percent_encode(value));
}

bool success(int status) { return status >= 200 && status <= 299; }

std::optional<json::Parsed> parse_body(std::string_view body) {
  if (body.size() > k_max_json_bytes) return std::nullopt;
  auto parsed = json::parse_strict(body, {});
  if (!parsed) return std::nullopt;
  return std::move(*parsed);
}

ApiError transport_error(const net::TransportError& error) {
  ApiError out;
  out.kind =
      error.kind == net::TransportErrorKind::connect_failed ? ApiErrorKind::unreachable : ApiErrorKind::uncertain;
  out.reason = std::string(net::to_string(error.kind));
  out.message = error.message;
  return out;
}

ApiErrorKind status_kind(int status, std::string_view reason) {
  if (status == 401) return ApiErrorKind::unauthorized;
  if (status == 404) return ApiErrorKind::not_found;
  if (status == 429) return ApiErrorKind::rate_limited;
  if (status == 403 && std::ranges::find(k_rate_reasons, reason) != std::end(k_rate_reasons)) {
    return ApiErrorKind::rate_limited;
  }
  if (status == 408 || (status >= 500 && status <= 599)) return ApiErrorKind::server;
  return ApiErrorKind::permanent;
}

// A non-2xx response: Google's error object when the body holds one
// ({"error":{"code","message","errors":[{"domain","reason","message"}],"status"}}).
ApiError status_error(const net::HttpResponse& response) {
  ApiError out;
  out.status = response.status;
  const auto parsed = parse_body(response.body);
  const rapidjson::Value* error = parsed ? json::object_member(parsed->document, "error") : nullptr;
  if (error != nullptr) {
    const rapidjson::Value* errors = json::array_member(*error, "errors");
    if (errors != nullptr && !errors->Empty())
      out.reason = std::string(json::string_of(json::member((*errors)[0], "reason")));
    if (out.reason.empty()) out.reason = std::string(json::string_of(json::member(*error, "status")));
    const std::string_view message = json::string_of(json::member(*error, "message"));
    out.message = message.empty() ? "no error message" : text::quote(message, k_max_quoted_points);
  } else {
    out.message = response.body.empty() ? "no response body" : "response body " + text::quote(response.body, 60);
  }
  out.kind = status_kind(response.status, out.reason);
  out.retry_after = net::retry_after_seconds(response.headers, std::chrono::system_clock::now());
  return out;
}

ApiError unreadable(const net::HttpResponse& response, std::string_view what) {
  ApiError out;
  out.kind = ApiErrorKind::uncertain;
  out.status = response.status;
  out.message = std::string(what) + ": response body " + text::quote(response.body, 60);
  return out;
}

// The 2xx response of `result`, or the error it classifies as.
std::expected<const net::HttpResponse*, ApiError> success_response(const net::HttpResult& result) {
  if (!result) return std::unexpected(transport_error(result.error()));
  if (!success(result->status)) return std::unexpected(status_error(*result));
  return &*result;
}

// Runs `read` over the parsed body of a 2xx answer; a body that does not parse, or that
// `read` refuses (nullopt), is uncertain.
template <typename T, typename Read>
std::expected<T, ApiError> read_json(const net::HttpResult& result, std::string_view what, Read&& read) {
  auto response = success_response(result);
  if (!response) return std::unexpected(std::move(response.error()));
  const auto parsed = parse_body((*response)->body);
  if (!parsed || !parsed->document.IsObject()) return std::unexpected(unreadable(**response, what));
  std::optional<T> value = read(parsed->document);
  if (!value) return std::unexpected(unreadable(**response, what));
  return std::move(*value);
}

// historyId is a uint64 that Gmail writes as a string; a number is taken too.
std::string history_id_of(json::Lookup object) {
  if (auto s = json::string_member(object, "historyId")) return std::move(*s);
  if (auto n = json::int_member(object, "historyId"); n && *n >= 0) return std::to_string(*n);
  return {};
}

std::optional<MessageRef> message_ref(json::Lookup message) {
  MessageRef ref;
  ref.id = std::string(json::string_of(json::member(message, "id")));
  if (ref.id.empty()) return std::nullopt;
  ref.thread_id = std::string(json::string_of(json::member(message, "threadId")));
  if (const rapidjson::Value* labels = json::array_member(message, "labelIds")) {
    for (const auto& label : labels->GetArray()) ref.label_ids.emplace_back(json::string_of(label));
  }
  return ref;
}

// Appends the messagesAdded of one history record, skipping ids already in `page`.
bool add_history_record(const rapidjson::Value& record, HistoryPage& page) {
  const rapidjson::Value* added = json::array_member(record, "messagesAdded");
  if (added == nullptr) return true;  // a record of another type, or none added
  for (const auto& entry : added->GetArray()) {
    auto ref = message_ref(json::object_member(entry, "message"));
    if (!ref) return false;
    const bool seen = std::ranges::any_of(page.added, [&](const MessageRef& r) { return r.id == ref->id; });
    if (!seen) page.added.push_back(std::move(*ref));
  }
  return true;
}

std::optional<Label> label_of(json::Lookup value) {
  Label label{std::string(json::string_of(json::member(value, "id"))),
              std::string(json::string_of(json::member(value, "name")))};
  if (label.id.empty()) return std::nullopt;
  return label;
}

}  // namespace

std::string_view to_string(ApiErrorKind kind) {
  switch (kind) {
    case ApiErrorKind::unauthorized: return "unauthorized";
    case ApiErrorKind::not_found: return "not_found";
    case ApiErrorKind::rate_limited: return "rate_limited";
    case ApiErrorKind::server: return "server";
    case ApiErrorKind::unreachable: return "unreachable";
    case ApiErrorKind::uncertain: return "uncertain";
    case ApiErrorKind::permanent: return "permanent";
  }
  return "permanent";
}

bool retryable(ApiErrorKind kind) {
  return kind == ApiErrorKind::unauthorized || kind == ApiErrorKind::rate_limited || kind == ApiErrorKind::server ||
         kind == ApiErrorKind::unreachable;
}

std::string describe(const ApiError& error) {
  std::string out = "gmail api ";
  out += to_string(error.kind);
  if (error.status != 0 || !error.reason.empty()) {
    out += " (";
    if (error.status != 0) out += "http " + std::to_string(error.status);
    if (error.status != 0 && !error.reason.empty()) out += ", ";
    out += error.reason;
    out += ")";
  }
  if (!error.message.empty()) out += ": " + error.message;
  return out;
}

net::HttpRequest profile_request(std::string_view base, std::string_view token) {
  return request("GET", base, token, "/profile");
}

net::HttpRequest history_request(std::string_view base, std::string_view token, std::string_view start_history_id,
                                 std::string_view label_id, std::string_view page_token) {
  auto out = request("GET", base, token, "/history");
  add_param(out.url, "startHistoryId", start_history_id);
  add_param(out.url, "historyTypes", "messageAdded");
  add_param(out.url, "labelId", label_id);
  add_param(out.url, "pageToken", page_token);
  add_param(out.url, "maxResults", std::to_string(k_history_page_size));
  return out;
}

net::HttpRequest list_request(std::string_view base, std::string_view token, std::string_view query,
                              std::string_view label_id, std::string_view page_token, int max_results) {
  auto out = request("GET", base, token, "/messages");
  add_param(out.url, "q", query);
  add_param(out.url, "labelIds", label_id);
  add_param(out.url, "pageToken", page_token);
  add_param(out.url, "maxResults", std::to_string(std::clamp(max_results, 1, k_max_list_page_size)));
  return out;
}

net::HttpRequest get_raw_request(std::string_view base, std::string_view token, std::string_view message_id) {
  auto out = request("GET", base, token, "/messages/" + text::percent_encode(message_id), k_long_timeout);
  add_param(out.url, "format", "raw");
  return out;
}

net::HttpRequest get_parts_request(std::string_view base, std::string_view token, std::string_view message_id,
                                   int depth) {
  auto out = request("GET", base, token, "/messages/" + text::percent_encode(message_id), k_long_timeout);
  add_param(out.url, "format", "full");
  // Innermost first: the parts at `depth` with their inline data, each level above without.
  std::string level = "partId,mimeType,filename,body";
  for (int i = 0; i < depth; ++i) level = "partId,mimeType,filename,body(attachmentId,size),parts(" + level + ")";
  add_param(out.url, "fields", "payload(" + level + ")");
  return out;
}

net::HttpRequest attachment_request(std::string_view base, std::string_view token, std::string_view message_id,
                                    std::string_view attachment_id) {
  return request(
      "GET", base, token,
      "/messages/" + text::percent_encode(message_id) + "/attachments/" + text::percent_encode(attachment_id),
      k_attachment_timeout);
}

net::HttpRequest send_request(std::string_view base, std::string_view token, std::string_view raw_bytes,
                              std::string_view thread_id) {
  auto out = request("POST", base, token, "/messages/send", k_long_timeout);
  JsonOut body;
  body.begin_object().field("raw", base64url_encode(raw_bytes));
  if (!thread_id.empty()) body.field("threadId", thread_id);
  out.body = body.end_object().str();
  return out;
}

net::HttpRequest modify_request(std::string_view base, std::string_view token, std::string_view message_id,
                                std::span<const std::string> add_label_ids) {
  auto out = request("POST", base, token, "/messages/" + text::percent_encode(message_id) + "/modify");
  JsonOut body;
  body.begin_object().begin_array("addLabelIds");
  for (const auto& id : add_label_ids) body.value(id);
  out.body = body.end_array().begin_array("removeLabelIds").end_array().end_object().str();
  return out;
}

net::HttpRequest labels_request(std::string_view base, std::string_view token) {
  return request("GET", base, token, "/labels");
}

net::HttpRequest create_label_request(std::string_view base, std::string_view token, std::string_view name) {
  auto out = request("POST", base, token, "/labels");
  out.body = JsonOut()
                 .begin_object()
                 .field("name", name)
                 .field("labelListVisibility", "labelShow")
                 .field("messageListVisibility", "show")
                 .end_object()
                 .str();
  return out;
}

std::expected<Profile, ApiError> read_profile(const net::HttpResult& result) {
  return read_json<Profile>(result, "profile", [](const rapidjson::Value& doc) -> std::optional<Profile> {
    Profile profile{std::string(json::string_of(json::member(doc, "emailAddress"))), history_id_of(doc)};
    if (profile.email_address.empty() || profile.history_id.empty()) return std::nullopt;
    return profile;
  });
}

std::expected<HistoryPage, ApiError> read_history(const net::HttpResult& result) {
  return read_json<HistoryPage>(result, "history", [](const rapidjson::Value& doc) -> std::optional<HistoryPage> {
    HistoryPage page;
    page.history_id = history_id_of(doc);
    if (page.history_id.empty()) return std::nullopt;
    page.next_page_token = std::string(json::string_of(json::member(doc, "nextPageToken")));
    if (const rapidjson::Value* history = json::array_member(doc, "history")) {
      for (const auto& record : history->GetArray()) {
        if (!add_history_record(record, page)) return std::nullopt;
      }
    }
    return page;
  });
}

std::expected<ListPage, ApiError> read_list(const net::HttpResult& result) {
  return read_json<ListPage>(result, "message list", [](const rapidjson::Value& doc) -> std::optional<ListPage> {
    ListPage page;
    page.next_page_token = std::string(json::string_of(json::member(doc, "nextPageToken")));
    // No "messages" at all is how Gmail answers a search that found nothing.
    if (const rapidjson::Value* messages = json::array_member(doc, "messages")) {
      for (const auto& message : messages->GetArray()) {
        auto ref = message_ref(message);
        if (!ref) return std::nullopt;
        page.messages.push_back(std::move(*ref));
      }
    }
    return page;
  });
}

std::expected<std::string, ApiError> read_body(const net::HttpResult& result) {
  auto response = success_response(result);
  if (!response) return std::unexpected(std::move(response.error()));
  return (*response)->body;
}

std::expected<MessageRef, ApiError> read_sent(const net::HttpResult& result) {
  return read_json<MessageRef>(result, "sent message", [](const rapidjson::Value& doc) { return message_ref(doc); });
}

std::expected<void, ApiError> read_ok(const net::HttpResult& result) {
  auto response = success_response(result);
  if (!response) return std::unexpected(std::move(response.error()));
  return {};
}

std::expected<std::vector<Label>, ApiError> read_labels(const net::HttpResult& result) {
  using Labels = std::vector<Label>;
  return read_json<Labels>(result, "labels", [](const rapidjson::Value& doc) -> std::optional<Labels> {
    Labels labels;
    if (const rapidjson::Value* list = json::array_member(doc, "labels")) {
      for (const auto& value : list->GetArray()) {
        auto label = label_of(value);
        if (!label) return std::nullopt;
        labels.push_back(std::move(*label));
      }
    }
    return labels;
  });
}

std::expected<Label, ApiError> read_label(const net::HttpResult& result) {
  return read_json<Label>(result, "label", [](const rapidjson::Value& doc) { return label_of(doc); });
}

std::string query_after(std::chrono::sys_seconds t) { return "after:" + std::to_string(t.time_since_epoch().count()); }

std::string query_message_id(std::string_view message_id) {
  if (message_id.starts_with('<')) message_id.remove_prefix(1);
  if (message_id.ends_with('>')) message_id.remove_suffix(1);
  return "rfc822msgid:" + std::string(message_id) + " in:anywhere";
}

std::expected<std::optional<PartBody>, ApiError> read_part(const net::HttpResult& result, std::string_view part_id) {
  auto response = success_response(result);
  if (!response) return std::unexpected(std::move(response.error()));
  const std::string& body = (*response)->body;
  if (body.size() > k_max_parts_bytes) return std::unexpected(unreadable(**response, "message parts over 48 MiB"));
  auto parsed = json::parse_strict(body, {});
  if (!parsed || !parsed->document.IsObject()) return std::unexpected(unreadable(**response, "message parts"));
  const rapidjson::Value* payload = json::object_member(parsed->document, "payload");
  if (payload == nullptr) return std::unexpected(unreadable(**response, "message parts without a payload"));
  std::vector<const rapidjson::Value*> stack{payload};
  for (int walked = 0; !stack.empty() && walked < k_max_walked_parts; ++walked) {
    const rapidjson::Value* part = stack.back();
    stack.pop_back();
    if (json::string_of(json::member(*part, "partId")) == part_id) {
      PartBody out;
      out.part_id = std::string(part_id);
      out.mime_type = std::string(json::string_of(json::member(*part, "mimeType")));
      out.filename = std::string(json::string_of(json::member(*part, "filename")));
      const rapidjson::Value* part_body = json::object_member(*part, "body");
      out.attachment_id = std::string(json::string_of(json::member(part_body, "attachmentId")));
      out.size = json::int_member(part_body, "size").value_or(0);
      if (out.attachment_id.empty()) {
        auto data = base64url_decode(json::string_of(json::member(part_body, "data")));
        if (!data) return std::unexpected(unreadable(**response, "a part's body data is not base64url"));
        out.data = std::move(*data);
      }
      return out;
    }
    if (const rapidjson::Value* parts = json::array_member(*part, "parts")) {
      for (rapidjson::SizeType i = parts->Size(); i-- > 0;)
        if ((*parts)[i].IsObject()) stack.push_back(&(*parts)[i]);
    }
  }
  return std::optional<PartBody>{};
}

}  // namespace dispatchd::gmail
