#include <utility>  // first: Boost 1.74's Asio uses std::exchange without including it

#include "tests/fakes/fake_graph.h"

#include "tests/fakes/graph_interactive.h"
#include "tests/fakes/graph_template.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "common/json_access.h"
#include "common/json_out.h"
#include "common/strict_json.h"
#include "media/digest.h"

namespace dispatchd::fakes {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::awaitable;
using asio::ip::tcp;
using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

struct GraphErrorSpec {
  int code;
  int http_status;
  const char* type;
  const char* message;
  const char* details;
};

constexpr GraphErrorSpec k_errors[] = {
    {131047, 400, "OAuthException", "(#131047) Re-engagement message",
     "Message failed to send because more than 24 hours have passed since the customer last replied to this number."},
    {130429, 400, "OAuthException", "(#130429) Rate limit hit", "Cloud API message throughput has been reached."},
    {131056, 400, "OAuthException", "(#131056) (Business Account, Consumer Account) pair rate limit hit",
     "Too many messages sent from the sender phone number to the same recipient phone number in a short period of "
     "time."},
    {131026, 400, "OAuthException", "(#131026) Message Undeliverable", "Message failed to send."},
    {132000, 400, "OAuthException", "(#132000) Number of parameters does not match the expected number of params", ""},
    {132001, 404, "OAuthException", "(#132001) Template name does not exist in the translation", ""},
    {132018, 400, "OAuthException", "(#132018) There was an issue with the parameters in your template.", ""},
    {190, 401, "OAuthException", "Error validating access token: Session has expired.", ""},
    {100, 400, "OAuthException", "(#100) Invalid parameter", ""},
    {2, 503, "OAuthException", "(#2) Service temporarily unavailable", ""},
    {1, 500, "OAuthException", "An unknown error occurred", ""},
};

std::string graph_error_body(int code, const char* type, const char* message, const char* details) {
  JsonOut w;
  w.begin_object().begin_object("error").field("message", message).field("type", type).field("code", code);
  if (*details != '\0') {
    w.begin_object("error_data").field("messaging_product", "whatsapp").field("details", details).end_object();
  }
  w.field("fbtrace_id", "AfakeTraceId0123456789").end_object().end_object();
  return w.str();
}

const GraphErrorSpec& spec_for(int code) {
  for (const auto& spec : k_errors) {
    if (spec.code == code) return spec;
  }
  throw std::invalid_argument("fake_graph: no canned error for code " + std::to_string(code));
}

// Splits "/v21.0/123/messages" into its segments; nullopt for any other shape.
std::optional<std::string> phone_in_path(std::string_view target) {
  const std::size_t query = target.find('?');
  std::string_view path = target.substr(0, query);
  if (!path.starts_with('/')) return std::nullopt;
  path.remove_prefix(1);
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    const std::size_t slash = path.find('/');
    parts.push_back(path.substr(0, slash));
    path = slash == std::string_view::npos ? std::string_view{} : path.substr(slash + 1);
  }
  if (parts.size() != 3 || parts[2] != "messages" || parts[0].empty() || parts[1].empty()) return std::nullopt;
  return std::string(parts[1]);
}

// "/v21.0/{waba}/message_templates?..." -> the waba id; nullopt for any other path.
std::optional<std::string> waba_in_path(std::string_view target) {
  std::string_view path = target.substr(0, target.find('?'));
  constexpr std::string_view k_suffix = "/message_templates";
  if (!path.ends_with(k_suffix)) return std::nullopt;
  path.remove_suffix(k_suffix.size());
  const std::size_t slash = path.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return std::nullopt;
  return std::string(path.substr(slash + 1));
}

// The value of `name` in the target's query ("" when absent); values are taken as sent.
std::string query_value(std::string_view target, std::string_view name) {
  const std::size_t q = target.find('?');
  if (q == std::string_view::npos) return {};
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    if (pair.starts_with(name) && pair.size() > name.size() && pair[name.size()] == '=')
      return std::string(pair.substr(name.size() + 1));
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
  }
  return {};
}

// "/v21.0/{id}" (a version and one segment of digits) -> the media id; nullopt otherwise.
std::optional<std::string> media_in_path(std::string_view target) {
  std::string_view path = target.substr(0, target.find('?'));
  if (!path.starts_with("/v")) return std::nullopt;
  const std::size_t slash = path.find('/', 1);
  if (slash == std::string_view::npos) return std::nullopt;
  const std::string_view id = path.substr(slash + 1);
  if (id.empty() || id.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  return std::string(id);
}

// "/media-download/{id}/{n}?..." -> the media id; nullopt otherwise.
std::optional<std::string> download_in_path(std::string_view target) {
  constexpr std::string_view k_prefix = "/media-download/";
  std::string_view path = target.substr(0, target.find('?'));
  if (!path.starts_with(k_prefix)) return std::nullopt;
  path.remove_prefix(k_prefix.size());
  const std::size_t slash = path.find('/');
  if (slash == std::string_view::npos || slash == 0) return std::nullopt;
  return std::string(path.substr(0, slash));
}

std::int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string fake_template(const char* name, const char* language, const char* category, const char* format,
                          const char* id, const char* components) {
  return std::string(R"({"name":")") + name + R"(","parameter_format":")" + format + R"(","components":)" + components +
         R"(,"language":")" + language + R"(","status":"APPROVED","category":")" + category + R"(","id":")" + id +
         R"("})";
}

}  // namespace

std::vector<std::string> FakeGraphOptions::default_templates() {
  constexpr const char* k_order = R"([{"type":"HEADER","format":"TEXT","text":"Order {{1}}"},)"
                                  R"({"type":"BODY","text":"Hello {{1}}, your order {{2}} is on its way.",)"
                                  R"("example":{"body_text":[["Ana","566701"]]}},)"
                                  R"({"type":"FOOTER","text":"Reply STOP to stop these updates"},)"
                                  R"({"type":"BUTTONS","buttons":[{"type":"URL","text":"Track",)"
                                  R"("url":"https://example.com/track/{{1}}"}]}])";
  return {
      fake_template("order_update", "es", "UTILITY", "POSITIONAL", "1473688840035974", k_order),
      fake_template("order_update", "en_US", "UTILITY", "POSITIONAL", "1473688840035975", k_order),
      fake_template("appointment_reminder", "es", "UTILITY", "NAMED", "1473688840035976",
                    R"([{"type":"BODY","text":"Hola {{customer_name}}, te esperamos el {{date}}.",)"
                    R"("example":{"body_text_named_params":[{"param_name":"customer_name","example":"Ana"},)"
                    R"({"param_name":"date","example":"12/12"}]}}])"),
      fake_template("spring_sale", "es", "MARKETING", "POSITIONAL", "1473688840035977",
                    R"([{"type":"BODY","text":"Rebajas de primavera: {{1}} de descuento."},)"
                    R"({"type":"BUTTONS","buttons":[{"type":"QUICK_REPLY","text":"Ver ofertas"}]}])"),
      fake_template("login_code", "en_US", "AUTHENTICATION", "POSITIONAL", "1473688840035978",
                    R"([{"type":"BODY","text":"{{1}} is your verification code."},)"
                    R"({"type":"BUTTONS","buttons":[{"type":"OTP","otp_type":"COPY_CODE","text":"Copy code"}]}])"),
  };
}

ScriptedReply ScriptedReply::graph_error(int code) {
  const GraphErrorSpec& spec = spec_for(code);
  ScriptedReply reply;
  reply.http_status = spec.http_status;
  reply.code = code;
  return reply;
}

ScriptedReply ScriptedReply::status(int http_status, std::string body) {
  ScriptedReply reply;
  reply.http_status = http_status;
  reply.body = std::move(body);
  return reply;
}

ScriptedReply ScriptedReply::delayed(std::chrono::milliseconds delay) {
  ScriptedReply reply;
  reply.delay = delay;
  return reply;
}

struct FakeGraph::Impl {
  explicit Impl(FakeGraphOptions opts) : options(std::move(opts)), acceptor(ioc) {
    const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), options.port);
    beast::error_code ec;
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec)
      throw std::runtime_error("fake_graph: cannot listen on 127.0.0.1:" + std::to_string(options.port) + ": " +
                               ec.message());
    port = acceptor.local_endpoint().port();
    asio::co_spawn(ioc, accept_loop(), asio::detached);
    thread = std::thread([this] { ioc.run(); });
  }

  awaitable<void> accept_loop() {
    for (;;) {
      beast::error_code ec;
      tcp::socket socket = co_await acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return;
      asio::co_spawn(ioc, session(std::move(socket)), asio::detached);
    }
  }

  awaitable<void> session(tcp::socket socket) {
    beast::tcp_stream stream(std::move(socket));
    beast::flat_buffer buffer;
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(1024 * 1024);
      beast::error_code ec;
      stream.expires_after(std::chrono::seconds(30));
      co_await http::async_read(stream, buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
      if (ec) break;
      Request request = parser.release();
      std::chrono::milliseconds delay{0};
      Response response = answer(request, delay);
      if (delay.count() > 0) {
        asio::steady_timer timer(ioc, delay);
        co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      }
      stream.expires_after(std::chrono::seconds(30));
      co_await http::async_write(stream, response, asio::redirect_error(asio::use_awaitable, ec));
      if (ec || !request.keep_alive()) break;
    }
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  }

  // Decides the answer to one request and records both; sets `delay` for scripted delays.
  // Called as soon as the request was read: it stamps RecordedRequest::received.
  Response answer(const Request& request, std::chrono::milliseconds& delay) {
    const auto received = std::chrono::steady_clock::now();
    RecordedRequest record = record_of(request);
    record.received = received;
    Response response = decide(request, record, delay);
    response.keep_alive(request.keep_alive());
    if (response.find(http::field::content_type) == response.end())
      response.set(http::field::content_type, "application/json");
    response.prepare_payload();
    record.answered_status = static_cast<int>(response.result_int());
    {
      const std::lock_guard lock(mutex);
      recorded.push_back(record);
    }
    if (options.on_request) options.on_request(record);
    return response;
  }

  static RecordedRequest record_of(const Request& request) {
    RecordedRequest record;
    record.method = std::string(request.method_string());
    record.target = std::string(request.target());
    for (const auto& field : request) record.headers.emplace_back(field.name_string(), field.value());
    record.body = request.body();
    if (auto parsed = json::parse_strict(record.body, {}); parsed && parsed->document.IsObject()) {
      const rapidjson::Value& doc = parsed->document;
      record.messaging_product = json::string_of(json::member(doc, "messaging_product"));
      record.to = json::string_of(json::member(doc, "to"));
      record.type = json::string_of(json::member(doc, "type"));
      record.status = json::string_of(json::member(doc, "status"));
      record.message_id = json::string_of(json::member(doc, "message_id"));
      record.tracker = json::string_of(json::member(doc, "biz_opaque_callback_data"));
      record.text = json::string_of(json::member(json::member(doc, "text"), "body"));
      record.typing = json::string_of(json::member(json::member(doc, "typing_indicator"), "type"));
    }
    return record;
  }

  Response decide(const Request& request, RecordedRequest& record, std::chrono::milliseconds& delay) {
    const std::string_view target(request.target().data(), request.target().size());
    if (const auto waba = waba_in_path(target); waba && request.method() == http::verb::get) {
      if (auto scripted = next_scripted(template_scripts)) {
        delay = scripted->delay;
        if (scripted->http_status != 0) return scripted_response(request, *scripted);
      }
      return templates_page(request, *waba);
    }
    if (request.method() == http::verb::get) {
      if (const auto id = download_in_path(target)) return media_download(request, *id, delay);
      if (const auto id = media_in_path(target)) return media_lookup(request, *id);
    }
    const auto phone = phone_in_path(std::string_view(request.target().data(), request.target().size()));
    if (request.method() != http::verb::post || !phone) {
      return reply(request, 404, graph_error_body(2500, "OAuthException", "Unknown path components", ""));
    }
    // Scripts answer sends only: a mark-as-read (status "read") never takes one.
    if (auto scripted = record.status == "read" ? std::nullopt : next_scripted(scripts)) {
      delay = scripted->delay;
      if (scripted->http_status != 0) return scripted_response(request, *scripted);
    }
    if (request[http::field::authorization] != "Bearer " + options.access_token) {
      return reply(
          request, 401,
          graph_error_body(190, "OAuthException", "Invalid OAuth access token - Cannot parse access token", ""));
    }
    if (*phone != options.phone_number_id) {
      return reply(
          request, 400,
          graph_error_body(100, "GraphMethodException", "Unsupported post request. Object does not exist", ""));
    }
    if (record.messaging_product != "whatsapp") {
      return reply(request, 400,
                   graph_error_body(100, "OAuthException", "(#100) Invalid parameter",
                                    "messaging_product is required and must be whatsapp"));
    }
    if (record.status == "read" && !record.message_id.empty()) return reply(request, 200, R"({"success":true})");
    if (record.type == "text" && !record.to.empty() && !record.text.empty()) return sent(request, record);
    if (record.type == "interactive" && !record.to.empty()) {
      if (const auto why = interactive_problem(record.body))
        return reply(request, 400, graph_error_body(100, "OAuthException", "(#100) Invalid parameter", why->c_str()));
      return sent(request, record);
    }
    if (record.type == "template" && !record.to.empty()) {
      if (const auto why = template_problem(record.body, options.templates)) {
        const GraphErrorSpec& spec = spec_for(why->code);
        return reply(request, spec.http_status,
                     graph_error_body(spec.code, spec.type, spec.message, why->details.c_str()));
      }
      return sent(request, record);
    }
    return reply(request, 400, graph_error_body(100, "OAuthException", "(#100) Invalid parameter", ""));
  }

  const FakeMedia* find_media(const std::string& id) const {
    for (const auto& m : options.media)
      if (m.id == id) return &m;
    return nullptr;
  }

  // Meta's "Retrieve Media URL": the file's URL on this server, its type, sha256 and size.
  Response media_lookup(const Request& request, const std::string& id) {
    if (request[http::field::authorization] != "Bearer " + options.access_token)
      return reply(request, 401, graph_error_body(190, "OAuthException", "Invalid OAuth access token", ""));
    const FakeMedia* media = find_media(id);
    if (media == nullptr) {
      const std::string message = "Unsupported get request. Object with ID '" + id +
                                  "' does not exist, cannot be loaded due to missing permissions, or does not "
                                  "support this operation";
      return reply(request, 400, graph_error_body(100, "GraphMethodException", message.c_str(), ""));
    }
    int n = 0;
    {
      const std::lock_guard lock(mutex);
      n = ++urls_given[id];
    }
    const std::int64_t expires = n <= media->stale_urls ? unix_ms() - 1000 : unix_ms() + options.media_url_ttl.count();
    media::Sha256 digest;
    digest.update(media->bytes);
    JsonOut w;
    w.begin_object()
        .field("messaging_product", "whatsapp")
        .field("url", "http://127.0.0.1:" + std::to_string(port) + "/media-download/" + id + "/" + std::to_string(n) +
                          "?expires=" + std::to_string(expires))
        .field("mime_type", media->mime_type)
        .field("sha256", media->sha256.empty() ? digest.hex() : media->sha256);
    if (media->state_size) {
      const std::int64_t size =
          media->stated_size >= 0 ? media->stated_size : static_cast<std::int64_t>(media->bytes.size());
      w.field("file_size", std::to_string(size));
    }
    return reply(request, 200, w.field("id", id).end_object().str());
  }

  // The file at a URL media_lookup gave, while the URL has not expired.
  Response media_download(const Request& request, const std::string& id, std::chrono::milliseconds& delay) {
    if (request[http::field::authorization] != "Bearer " + options.access_token)
      return reply(request, 401, graph_error_body(190, "OAuthException", "Invalid OAuth access token", ""));
    const FakeMedia* media = find_media(id);
    const std::string_view target(request.target().data(), request.target().size());
    std::int64_t expires = 0;
    try {
      expires = std::stoll(query_value(target, "expires"));
    } catch (const std::exception&) {
      expires = 0;
    }
    if (media == nullptr || unix_ms() > expires) return reply(request, 404, "URL signature expired");
    delay = media->delay;
    Response response = reply(request, 200, media->bytes);
    response.set(http::field::content_type, media->mime_type);
    return response;
  }

  // One page of the templates: the cursor is the index of the page's first template.
  Response templates_page(const Request& request, const std::string& waba) {
    if (request[http::field::authorization] != "Bearer " + options.access_token)
      return reply(request, 401, graph_error_body(190, "OAuthException", "Invalid OAuth access token", ""));
    if (waba != options.waba_id)
      return reply(request, 400,
                   graph_error_body(100, "GraphMethodException", "Unsupported get request. Object does not exist", ""));
    const std::string_view target(request.target().data(), request.target().size());
    std::size_t first = 0;
    std::size_t size = std::max<std::size_t>(1, options.template_page_size);
    try {
      if (auto after = query_value(target, "after"); !after.empty()) first = std::stoul(after.substr(6));
      if (auto limit = query_value(target, "limit"); !limit.empty())
        size = std::min<std::size_t>(size, std::stoul(limit));
    } catch (const std::exception&) {
      return reply(request, 400, graph_error_body(100, "OAuthException", "(#100) Invalid parameter", ""));
    }
    const std::size_t end = std::min(options.templates.size(), first + std::max<std::size_t>(size, 1));
    std::string body = R"({"data":[)";
    for (std::size_t i = first; i < end; ++i) body += (i == first ? "" : ",") + options.templates[i];
    body += R"(],"paging":{"cursors":{"before":"cursor)" + std::to_string(first) + R"(","after":"cursor)" +
            std::to_string(end) + R"("})";
    if (end < options.templates.size())
      body += R"(,"next":"http://127.0.0.1:)" + std::to_string(port) + "/" + options.version + "/" + waba +
              "/message_templates?limit=" + std::to_string(size) + "&after=cursor" + std::to_string(end) + R"(")";
    return reply(request, 200, body + "}}");
  }

  Response sent(const Request& request, RecordedRequest& record) {
    char wamid[48];
    {
      const std::lock_guard lock(mutex);
      std::snprintf(wamid, sizeof wamid, "wamid.fake.%06u", ++sent_count);
    }
    record.answered_wamid = wamid;
    JsonOut w;
    w.begin_object().field("messaging_product", "whatsapp");
    w.begin_array("contacts")
        .begin_object()
        .field("input", record.to)
        .field("wa_id", record.to)
        .end_object()
        .end_array();
    w.begin_array("messages").begin_object().field("id", wamid).end_object().end_array().end_object();
    return reply(request, 200, w.str());
  }

  Response scripted_response(const Request& request, const ScriptedReply& scripted) {
    std::string body = scripted.body;
    if (body.empty() && scripted.code) {
      const GraphErrorSpec& spec = spec_for(*scripted.code);
      body = graph_error_body(spec.code, spec.type, spec.message, spec.details);
    }
    Response response = reply(request, scripted.http_status, std::move(body));
    if (!scripted.retry_after.empty()) response.set(http::field::retry_after, scripted.retry_after);
    return response;
  }

  static Response reply(const Request& request, int status, std::string body) {
    Response response{static_cast<http::status>(status), request.version()};
    response.body() = std::move(body);
    return response;
  }

  std::optional<ScriptedReply> next_scripted(std::deque<ScriptedReply>& queue) {
    const std::lock_guard lock(mutex);
    if (queue.empty()) return std::nullopt;
    ScriptedReply next = std::move(queue.front());
    queue.pop_front();
    return next;
  }

  void stop() {
    if (!thread.joinable()) return;
    ioc.stop();
    thread.join();
  }

  FakeGraphOptions options;
  asio::io_context ioc;
  tcp::acceptor acceptor;
  std::uint16_t port = 0;
  std::thread thread;

  mutable std::mutex mutex;  // guards recorded, scripts, template_scripts, sent_count, urls_given
  std::vector<RecordedRequest> recorded;
  std::deque<ScriptedReply> scripts;
  std::deque<ScriptedReply> template_scripts;
  unsigned sent_count = 0;
  std::map<std::string, int> urls_given;  // download URLs handed out per media id
};

FakeGraph::FakeGraph(FakeGraphOptions options) : m_impl(std::make_unique<Impl>(std::move(options))) {}

FakeGraph::~FakeGraph() { stop(); }

std::uint16_t FakeGraph::port() const { return m_impl->port; }

std::string FakeGraph::base_url() const {
  return "http://127.0.0.1:" + std::to_string(m_impl->port) + "/" + m_impl->options.version;
}

void FakeGraph::script(ScriptedReply reply) {
  if (reply.code) spec_for(*reply.code);  // an unknown code fails here, in the test, not on the server thread
  const std::lock_guard lock(m_impl->mutex);
  m_impl->scripts.push_back(std::move(reply));
}

void FakeGraph::script_templates(ScriptedReply reply) {
  if (reply.code) spec_for(*reply.code);
  const std::lock_guard lock(m_impl->mutex);
  m_impl->template_scripts.push_back(std::move(reply));
}

std::vector<RecordedRequest> FakeGraph::requests() const {
  const std::lock_guard lock(m_impl->mutex);
  return m_impl->recorded;
}

void FakeGraph::stop() { m_impl->stop(); }

std::string to_json_line(const RecordedRequest& request) {
  JsonOut w;
  w.begin_object().field("event", "request");
  const std::pair<const char*, const std::string*> fields[] = {
      {"method", &request.method},
      {"target", &request.target},
      {"to", &request.to},
      {"type", &request.type},
      {"text", &request.text},
      {"status", &request.status},
      {"message_id", &request.message_id},
      {"tracker", &request.tracker},
      {"typing", &request.typing},
  };
  for (const auto& [name, value] : fields) {
    if (!value->empty()) w.field(name, *value);
  }
  // An interactive message whole, for a test to compare with the documented payload.
  if (request.type == "interactive" || request.type == "template") w.field("payload", request.body);
  w.field("answered", request.answered_status);
  if (!request.answered_wamid.empty()) w.field("wamid", request.answered_wamid);
  w.field("received_ns",
          static_cast<std::int64_t>(
              std::chrono::duration_cast<std::chrono::nanoseconds>(request.received.time_since_epoch()).count()));
  return w.end_object().str();
}

}  // namespace dispatchd::fakes
