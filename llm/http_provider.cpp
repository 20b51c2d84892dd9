// The provider path all three dialects share: build, send, time, classify the status,
// parse. Statuses and transport failures map to error classes here and nowhere else.
#include <algorithm>
#include <chrono>

#include "common/handler_timing.h"
#include "common/json_access.h"
#include "common/strict_json.h"
#include "llm/internal/dialect.h"
#include "llm/providers.h"
#include "llm/retry.h"
#include "net/retry_after.h"

namespace dispatchd::llm {
namespace {

using Clock = std::chrono::steady_clock;

std::string redact(std::string message, const std::string& secret) {
  if (secret.empty()) return message;
  for (auto at = message.find(secret); at != std::string::npos; at = message.find(secret, at))
    message.replace(at, secret.size(), "[redacted]");
  return message;
}

// The provider's own words from an error body ({"error":{"message":...}} in all three
// dialects), or the start of the body when it is not that shape.
std::string error_detail(std::string_view body) {
  if (auto doc = detail::parse_body(body)) {
    if (auto message = json::string_member(json::object_member(*doc, "error"), "message"))
      return detail::quoted(*message);
  }
  return body.empty() ? std::string("empty body") : detail::quoted(body);
}

ErrorClass status_class(int status) {
  if (status == 429) return ErrorClass::rate_limited;
  if (status == 408) return ErrorClass::transport;  // the server timed the request out
  if (status >= 500) return ErrorClass::server;
  return ErrorClass::client;
}

std::string summarize(const net::HttpRequest& http, const ProviderConfig& config, const CompletionRequest& request) {
  const auto scheme_end = http.url.find("://");
  const auto path_start = http.url.find('/', scheme_end == std::string::npos ? 0 : scheme_end + 3);
  const std::string path = path_start == std::string::npos ? "/" : http.url.substr(path_start);
  std::size_t files = 0;
  std::size_t file_bytes = 0;
  for (const Turn& turn : request.turns) {
    for (const Attachment& file : turn.files) {
      ++files;
      file_bytes += file.bytes->size();
    }
  }
  std::string out =
      http.method + " " + path + " model=" + config.model + " turns=" + std::to_string(request.turns.size()) +
      " system=" + std::to_string(request.system.size()) + "B body=" + std::to_string(http.body.size()) + "B";
  if (files > 0) out += " files=" + std::to_string(files) + " file_bytes=" + std::to_string(file_bytes) + "B";
  return out;
}

ErrorClass ending_class(detail::Ending ending) {
  switch (ending) {
    case detail::Ending::truncated: return ErrorClass::truncated;
    case detail::Ending::blocked: return ErrorClass::blocked;
    case detail::Ending::refused: return ErrorClass::refused;
    case detail::Ending::text:  // classify() never asks
    case detail::Ending::no_text: break;
  }
  return ErrorClass::no_text;
}

// Everything a pending call needs, shared so that the provider may go away first.
struct Settings {
  ProviderConfig config;
  const detail::Dialect* dialect;
  std::string name;
};

CompletionResult classify(const Settings& s, net::HttpResult result, CallInfo info) {
  ProviderError error;
  if (!result) {
    const bool too_large = result.error().kind == net::TransportErrorKind::too_large;
    error.error_class = too_large ? ErrorClass::bad_response : ErrorClass::transport;
    error.message = std::string(net::to_string(result.error().kind)) + ": " + result.error().message;
  } else if (result->status < 200 || result->status > 299) {
    error.error_class = status_class(result->status);
    error.http_status = result->status;
    error.retry_after = net::retry_after_of(result->headers, std::chrono::system_clock::now());
    error.message = "HTTP " + std::to_string(result->status) + ": " + error_detail(result->body);
  } else if (result->body.size() > s.config.max_response_bytes) {
    error.error_class = ErrorClass::bad_response;
    error.http_status = result->status;
    error.message = "response larger than " + std::to_string(s.config.max_response_bytes) + " bytes";
  } else if (auto reply = s.dialect->parse(result->body); !reply) {
    error.error_class = ErrorClass::bad_response;
    error.http_status = result->status;
    error.message = reply.error();
  } else if (reply->ending != detail::Ending::text) {
    // A documented answer without text to validate: named, with what came back and the tokens.
    error.error_class = ending_class(reply->ending);
    error.http_status = result->status;
    error.message = reply->ending == detail::Ending::truncated
                        ? "the model hit its output limit (finish reason " + reply->finish_reason + ")"
                        : std::move(reply->why);
    error.output = std::move(reply->output);
    error.finish_reason = std::move(reply->finish_reason);
    error.usage = reply->usage;
  } else {
    return Completion{std::move(reply->output), std::move(reply->finish_reason), reply->usage, std::move(info)};
  }
  error.message = redact(std::move(error.message), s.config.api_key);
  error.info = std::move(info);
  return std::unexpected(std::move(error));
}

class HttpProvider final : public Provider {
 public:
  HttpProvider(ProviderConfig config, const detail::Dialect& dialect, net::Transport& transport)
      : m_settings(std::make_shared<const Settings>(Settings{std::move(config), &dialect, std::string(dialect.name)})),
        m_transport(transport) {}

  void complete(CompletionRequest request, CompletionCallback done) override {
    net::HttpRequest http = m_settings->dialect->build(m_settings->config, request);
    CallInfo info{m_settings->name, m_settings->config.model, summarize(http, m_settings->config, request), {}, {}, 1};
    // Named: the answer's step (the agent's decision and its writes) shows under this name in
    // the loop's slow-step log, not as the transport's.
    m_transport.send(std::move(http),
                     common::named_step([settings = m_settings, info = std::move(info), start = Clock::now(),
                                         done = std::move(done)](net::HttpResult result) mutable {
                       info.latency = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
                       info.elapsed = info.latency;
                       done(classify(*settings, std::move(result), std::move(info)));
                     }));
  }

  const std::string& name() const override { return m_settings->name; }
  const std::string& model() const override { return m_settings->config.model; }

 private:
  std::shared_ptr<const Settings> m_settings;
  net::Transport& m_transport;
};

}  // namespace

std::optional<ProviderKind> parse_provider_kind(std::string_view name) {
  if (name == "openai") return ProviderKind::openai;
  if (name == "gemini") return ProviderKind::gemini;
  if (name == "anthropic") return ProviderKind::anthropic;
  return std::nullopt;
}

std::string_view to_string(ProviderKind kind) {
  switch (kind) {
    case ProviderKind::openai: return "openai";
    case ProviderKind::gemini: return "gemini";
    case ProviderKind::anthropic: break;
  }
  return "anthropic";
}

std::unique_ptr<Provider> make_provider(ProviderConfig config, net::Transport& transport) {
  const detail::Dialect* dialect = &detail::anthropic_dialect();
  if (config.kind == ProviderKind::openai) dialect = &detail::openai_dialect();
  if (config.kind == ProviderKind::gemini) dialect = &detail::gemini_dialect();
  return std::make_unique<HttpProvider>(std::move(config), *dialect, transport);
}

}  // namespace dispatchd::llm
