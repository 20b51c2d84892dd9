#pragma once
// The WhatsApp channel (connectors/whatsapp/channel.h) on a migrated database, with a
// transport that holds every request until the test answers it, and signed webhooks.
// Shared by the connector's tests and the daemon's tests of the pump with this channel.

#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <functional>
#include <string>
#include <vector>

#include "connectors/whatsapp/channel.h"
#include "connectors/whatsapp/signature.h"
#include "net/http.h"
#include "tests/store/store_fixture.h"

namespace dispatchd::test {

inline constexpr const char* k_app_secret = "test-app-secret";
inline constexpr const char* k_phone_number_id = "106540352242922";

// Holds every request until the test answers it, so it can see how many are in flight.
class HoldingTransport final : public net::Transport {
 public:
  explicit HoldingTransport(boost::asio::io_context& io) : m_io(io) {}
  void send(net::HttpRequest request, net::HttpCallback done) override {
    requests.push_back(std::move(request));
    held.push_back(std::move(done));
  }
  // Answers every held request with 200, through the loop as the real transport does.
  void answer_all(const std::string& body = R"({"success":true})") {
    for (auto& done : std::exchange(held, {}))
      boost::asio::post(m_io, [done = std::move(done), body]() mutable { done(net::HttpResponse{200, {}, body}); });
  }
  // Answers the oldest held request with `result`, through the loop.
  void answer_first(net::HttpResult result) {
    auto done = std::move(held.front());
    held.erase(held.begin());
    boost::asio::post(m_io,
                      [done = std::move(done), result = std::move(result)]() mutable { done(std::move(result)); });
  }
  std::vector<net::HttpRequest> requests;
  std::vector<net::HttpCallback> held;

 private:
  boost::asio::io_context& m_io;
};

// A text message from 52155<10000000 + n>, id wamid.read<n>.
inline std::string text_webhook(int n) {
  const std::string sender = "52155" + std::to_string(10000000 + n);
  return R"({"object":"whatsapp_business_account","entry":[{"id":"1023456789012345","changes":[{"field":"messages",)"
         R"("value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550001234","phone_number_id":")" +
         std::string(k_phone_number_id) + R"("},"contacts":[{"profile":{"name":"C"},"wa_id":")" + sender +
         R"("}],"messages":[{"from":")" + sender + R"(","id":"wamid.read)" + std::to_string(n) +
         R"(","timestamp":"1790000000","type":"text","text":{"body":"hola"}}]}}]}]})";
}

// One webhook with `count` text messages from new senders, numbered from `first`.
inline std::string batch_webhook(int first, int count) {
  std::string messages;
  for (int n = first; n < first + count; ++n) {
    const std::string sender = "52155" + std::to_string(10000000 + n);
    messages += std::string(messages.empty() ? "" : ",") + R"({"from":")" + sender + R"(","id":"wamid.read)" +
                std::to_string(n) + R"(","timestamp":"1790000000","type":"text","text":{"body":"hola"}})";
  }
  return R"({"object":"whatsapp_business_account","entry":[{"id":"1023456789012345","changes":[{"field":"messages",)"
         R"("value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550001234","phone_number_id":")" +
         std::string(k_phone_number_id) + R"("},"messages":[)" + messages + "]}}]}]}";
}

// A webhook request as the listener reads it; request() views into this object.
struct WebhookPost {
  std::string method = "POST";
  std::string query;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  connectors::WebhookRequest request() const { return {method, query, headers, body}; }
};

inline WebhookPost signed_post(const std::string& body) {
  return {"POST", "", {{"x-hub-signature-256", whatsapp::sign_body(body, k_app_secret)}}, body};
}

// `typing`: connectors.whatsapp.typing_indicator; off, each message is marked read once stored.
inline whatsapp::ChannelSettings whatsapp_settings(bool typing = false) {
  whatsapp::ChannelSettings settings{
      {"http://127.0.0.1:9/v21.0", k_phone_number_id, "token"}, k_app_secret, "verify", 1 << 20};
  settings.typing_indicator = typing;
  return settings;
}

// The channel on a migrated database, with requests held by the test.
struct WhatsAppFixture {
  explicit WhatsAppFixture(bool typing_indicator = false) : typing(typing_indicator) {}

  bool typing;
  TempDir dir;
  store::Database db = migrated_db(dir);
  boost::asio::io_context io;
  HoldingTransport transport{io};
  int inbound = 0;
  std::function<void()> on_inbound;  // called with each poke of the agent, when set
  store::Time now = k_t0;
  whatsapp::WhatsAppChannel channel{{[this](std::move_only_function<void()> f) { boost::asio::post(io, std::move(f)); },
                                     db, transport, [this] { return now; },
                                     [this] {
                                       ++inbound;
                                       if (on_inbound) on_inbound();
                                     }},
                                    whatsapp_settings(typing)};
  std::vector<int> statuses;

  void post(const WebhookPost& post) {
    channel.handle(post.request(), [this](connectors::WebhookResponse r) { statuses.push_back(r.status); });
  }
  void run() {
    io.run();
    io.restart();
  }
};

}  // namespace dispatchd::test
