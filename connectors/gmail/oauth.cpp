#include "connectors/gmail/oauth.h"

#include <algorithm>
#include <vector>

#include "common/handler_timing.h"
#include "common/json_access.h"
#include "common/strict_json.h"
#include "common/text.h"

namespace dispatchd::gmail {
namespace {

using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

constexpr std::size_t k_max_response_bytes = 64 * 1024;
constexpr std::size_t k_max_token_bytes = 8 * 1024;
constexpr std::size_t k_max_quoted_error_points = 160;
constexpr seconds k_margin{60};

void add_form_field(std::string& body, std::string_view name, std::string_view value) {
  if (!body.empty()) body += '&';
  body.append(name).append("=").append(text::percent_encode(value));
}

// Replaces every occurrence of a non-empty secret in `message`.
std::string redacted(std::string message, const OAuthCredentials& credentials) {
  for (const std::string* secret : {&credentials.client_secret, &credentials.refresh_token}) {
    if (secret->empty()) continue;
    for (auto at = message.find(*secret); at != std::string::npos; at = message.find(*secret, at)) {
      message.replace(at, secret->size(), "[redacted]");
    }
  }
  return message;
}

// Printable ASCII without spaces: what may go into an Authorization header as it is.
bool header_safe(std::string_view token) {
  if (token.empty() || token.size() > k_max_token_bytes) return false;
  return std::ranges::all_of(token, [](char c) { return c > ' ' && c <= '~'; });
}

std::optional<json::Parsed> parse_token_body(std::string_view body) {
  if (body.size() > k_max_response_bytes) return std::nullopt;
  auto parsed = json::parse_strict(body, {});
  if (!parsed || !parsed->document.IsObject()) return std::nullopt;
  return std::move(*parsed);
}

OAuthError error_of(OAuthErrorKind kind, std::string message, const OAuthCredentials& credentials) {
  return OAuthError{kind, redacted("oauth token refresh: " + std::move(message), credentials)};
}

OAuthError status_error(const net::HttpResponse& response, const OAuthCredentials& credentials) {
  const int status = response.status;
  const std::string where = "http " + std::to_string(status);
  const auto parsed = parse_token_body(response.body);
  const std::string_view code = parsed ? json::string_of(json::member(parsed->document, "error")) : "";
  const bool retry_status = status == 408 || status == 429 || status >= 500;
  if (code.empty() || retry_status || status < 400) {
    return error_of(OAuthErrorKind::unavailable, "token endpoint answered " + where, credentials);
  }
  std::string message = text::quote(code, 40) + " (" + where + ")";
  const std::string_view description = json::string_of(json::member(parsed->document, "error_description"));
  if (!description.empty()) message += ": " + text::quote(description, k_max_quoted_error_points);
  const auto kind = code == "invalid_grant" ? OAuthErrorKind::invalid_grant : OAuthErrorKind::invalid_client;
  return error_of(kind, std::move(message), credentials);
}

std::expected<AccessToken, OAuthError> token_of(const net::HttpResponse& response,
                                                const OAuthCredentials& credentials) {
  const auto malformed = [&](std::string why) {
    return std::unexpected(
        error_of(OAuthErrorKind::malformed, "http " + std::to_string(response.status) + ": " + why, credentials));
  };
  const auto parsed = parse_token_body(response.body);
  if (!parsed) return malformed("the answer is not a JSON object");
  const rapidjson::Value& doc = parsed->document;
  const std::string_view token = json::string_of(json::member(doc, "access_token"));
  // Never quoted: this is a secret, even when unusable.
  if (!header_safe(token)) return malformed("no usable access_token");
  const auto type = json::string_member(doc, "token_type");
  if (type && !net::iequals(*type, "Bearer")) return malformed("token_type is " + text::quote(*type, 20));
  const auto expires_in = json::int_member(doc, "expires_in");
  if (!expires_in || *expires_in <= 0) return malformed("no positive integer expires_in");
  return AccessToken{std::string(token), seconds{*expires_in}};
}

}  // namespace

std::string_view to_string(OAuthErrorKind kind) {
  switch (kind) {
    case OAuthErrorKind::invalid_grant: return "invalid_grant";
    case OAuthErrorKind::invalid_client: return "invalid_client";
    case OAuthErrorKind::unavailable: return "unavailable";
    case OAuthErrorKind::malformed: return "malformed";
  }
  return "unavailable";
}

bool permanent(OAuthErrorKind kind) {
  return kind == OAuthErrorKind::invalid_grant || kind == OAuthErrorKind::invalid_client;
}

net::HttpRequest refresh_request(const OAuthCredentials& credentials) {
  net::HttpRequest out;
  out.method = "POST";
  out.url = credentials.token_url;
  out.headers = {{"Content-Type", "application/x-www-form-urlencoded"}, {"Accept", "application/json"}};
  add_form_field(out.body, "client_id", credentials.client_id);
  add_form_field(out.body, "client_secret", credentials.client_secret);
  add_form_field(out.body, "refresh_token", credentials.refresh_token);
  add_form_field(out.body, "grant_type", "refresh_token");
  out.connect_timeout = std::chrono::seconds{10};
  out.timeout = std::chrono::seconds{30};
  return out;
}

std::expected<AccessToken, OAuthError> read_refresh_response(const net::HttpResult& result,
                                                             const OAuthCredentials& credentials) {
  if (!result) {
    return std::unexpected(error_of(OAuthErrorKind::unavailable,
                                    std::string(net::to_string(result.error().kind)) + ": " + result.error().message,
                                    credentials));
  }
  if (result->status < 200 || result->status > 299) return std::unexpected(status_error(*result, credentials));
  return token_of(*result, credentials);
}

Clock::time_point usable_until(Clock::time_point requested_at, seconds expires_in) {
  const seconds margin = std::min(k_margin, expires_in / 10);
  return requested_at + expires_in - margin;
}

struct TokenSource::State : std::enable_shared_from_this<State> {
  State(net::Transport& t, OAuthCredentials c, SteadyNow n, PostFn p)
      : transport(t), credentials(std::move(c)), now(std::move(n)), post(std::move(p)) {}

  net::Transport& transport;
  OAuthCredentials credentials;
  SteadyNow now;
  PostFn post;
  std::optional<std::string> token;
  Clock::time_point token_until{};
  std::optional<OAuthError> permanent_error;
  std::vector<TokenDone> waiters;
  bool in_flight = false;
  // Counts reset()s: the answer to a request made with older credentials is ignored.
  std::uint64_t generation = 0;

  void answer_later(TokenDone done, std::expected<std::string, OAuthError> result) {
    post([done = std::move(done), result = std::move(result)]() mutable { done(std::move(result)); });
  }

  void refresh() {
    in_flight = true;
    const auto requested_at = now();
    std::weak_ptr<State> weak = weak_from_this();
    transport.send(refresh_request(credentials),
                   common::named_step([weak, gen = generation, requested_at](net::HttpResult result) {
                     if (auto self = weak.lock(); self && self->generation == gen)
                       self->on_refreshed(result, requested_at);
                   }));
  }

  void on_refreshed(const net::HttpResult& result, Clock::time_point requested_at) {
    in_flight = false;
    auto token_or = read_refresh_response(result, credentials);
    std::expected<std::string, OAuthError> answer = std::unexpected(OAuthError{});
    if (token_or) {
      token = token_or->token;
      token_until = usable_until(requested_at, token_or->expires_in);
      answer = std::move(token_or->token);
    } else {
      if (permanent(token_or.error().kind)) permanent_error = token_or.error();
      answer = std::unexpected(std::move(token_or.error()));
    }
    // A waiter may call get(), invalidate() or reset() (or destroy the source): it sees a
    // settled state and an empty queue.
    auto self = shared_from_this();
    auto waiting = std::exchange(waiters, {});
    for (auto& done : waiting) done(answer);
  }
};

TokenSource::TokenSource(net::Transport& transport, OAuthCredentials credentials, SteadyNow now, PostFn post)
    : m_state(std::make_shared<State>(transport, std::move(credentials), std::move(now), std::move(post))) {}

TokenSource::~TokenSource() = default;

void TokenSource::get(TokenDone done) {
  State& s = *m_state;
  if (s.permanent_error) return s.answer_later(std::move(done), std::unexpected(*s.permanent_error));
  if (s.token && s.now() < s.token_until) return s.answer_later(std::move(done), *s.token);
  s.waiters.push_back(std::move(done));
  if (!s.in_flight) s.refresh();
}

void TokenSource::invalidate() { m_state->token.reset(); }

void TokenSource::invalidate(std::string_view refused) {
  if (m_state->token == refused) m_state->token.reset();
}

void TokenSource::reset(OAuthCredentials credentials) {
  State& s = *m_state;
  s.credentials = std::move(credentials);
  s.token.reset();
  s.permanent_error.reset();
  ++s.generation;
  s.in_flight = false;
  if (!s.waiters.empty()) s.refresh();
}

std::optional<OAuthError> TokenSource::last_permanent_error() const { return m_state->permanent_error; }

}  // namespace dispatchd::gmail
