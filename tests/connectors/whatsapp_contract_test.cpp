// The WhatsApp channel against the channel contract (tests/connectors/channel_contract.h):
// the channel on a migrated database, sending over the real transport to the fake Graph
// server (tests/fakes/fake_graph.h) through a FaultTransport, webhooks signed as Meta signs
// them (tests/connectors/whatsapp_fixture.h).

#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "connectors/whatsapp/channel.h"
#include "net/curl_transport.h"
#include "tests/connectors/channel_contract.h"
#include "tests/connectors/fault_transport.h"
#include "tests/connectors/whatsapp_fixture.h"
#include "tests/fakes/fake_graph.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;
using test::contract::Answer;

namespace {

constexpr const char* k_contract_graph_token = "contract-graph-token";

fakes::FakeGraphOptions contract_graph_options() {
  fakes::FakeGraphOptions options;
  options.phone_number_id = test::k_phone_number_id;
  options.access_token = k_contract_graph_token;
  return options;
}

std::string contract_sender(int n) { return "52155" + std::to_string(10000000 + n); }

class WhatsAppContractHarness final : public test::contract::Harness {
 public:
  WhatsAppContractHarness() {
    auto settings = test::whatsapp_settings(false);
    settings.account = {m_graph.base_url(), test::k_phone_number_id, k_contract_graph_token};
    m_channel.emplace(
        connectors::ChannelDeps{[this](std::move_only_function<void()> f) { boost::asio::post(m_io, std::move(f)); },
                                m_db, m_transport, [this] { return m_now; }, [this] { ++m_pokes; }},
        std::move(settings));
  }

  connectors::Channel* channel() override { return m_channel ? &*m_channel : nullptr; }
  void destroy_channel() override { m_channel.reset(); }
  boost::asio::io_context& io() override { return m_io; }

  // Meta POSTs the webhook; it is answered 200 once stored.
  void deliver(int n) override {
    const auto post = test::signed_post(test::text_webhook(n));
    const auto before = m_statuses.size();
    m_channel->handle(post.request(), [this](connectors::WebhookResponse r) { m_statuses.push_back(r.status); });
    run_until([&] { return m_statuses.size() > before; });
    REQUIRE(m_statuses.back() == 200);
  }
  // Meta delivers the same webhook again (it does when our 200 is late or lost).
  void redeliver(int n) override { deliver(n); }
  std::int64_t inbox_rows() override { return test::query_int(m_db, "SELECT count(*) FROM inbox").value(); }
  int inbound_pokes() const override { return m_pokes; }

  store::OutboxItem reply_to(int n, const std::string& idempotency_key) override {
    const auto row =
        test::query_int(m_db, "SELECT id FROM inbox WHERE provider_message_id = 'wamid.read" + std::to_string(n) + "'");
    REQUIRE(row);
    return {.id = n,
            .message_id = *row,
            .channel = "whatsapp",
            .conversation_id = contract_sender(n),
            .recipient = contract_sender(n),
            .body = "Gracias, ya lo revisamos.",
            .idempotency_key = idempotency_key};
  }
  // An empty text: Graph would refuse it, so the channel does before the call.
  store::OutboxItem unsendable(const std::string& idempotency_key) override {
    auto item = reply_to(1, idempotency_key);
    item.body.clear();
    return item;
  }

  void script_next_send(Answer answer) override {
    switch (answer) {
      case Answer::accept: return;
      case Answer::refuse: return m_graph.script(fakes::ScriptedReply::graph_error(100));
      case Answer::rate_limit: return m_graph.script(fakes::ScriptedReply::graph_error(130429));
      case Answer::refuse_credential: return m_graph.script(fakes::ScriptedReply::graph_error(190));
      case Answer::refuse_connection: return m_transport.fault_next_send(test::NetworkFault::refuse_connection);
      case Answer::drop_after_request: return m_transport.fault_next_send(test::NetworkFault::drop_answer);
      case Answer::hold: return m_transport.fault_next_send(test::NetworkFault::hold_answer);
    }
  }
  std::size_t sends_received() override { return m_transport.sends_forwarded(); }
  std::size_t messages_delivered() override {
    std::size_t delivered = 0;
    for (const auto& request : m_graph.requests()) delivered += !request.answered_wamid.empty();
    return delivered;
  }
  std::size_t sends_held() override { return m_transport.held(); }
  void release_held() override { m_transport.release_held(); }
  // The access token is read at start only (docs/configuration.md): a refused one pauses
  // sending for a minute, and the first send after the pause probes it.
  void restore_credential() override { m_now += std::chrono::seconds(60); }

 private:
  test::TempDir m_dir;
  store::Database m_db = test::migrated_db(m_dir);
  boost::asio::io_context m_io;
  fakes::FakeGraph m_graph{contract_graph_options()};
  net::CurlTransport m_curl{m_io};
  test::FaultTransport m_transport{m_io, m_curl, [](const net::HttpRequest& request) {
                                     return request.body.find(R"("status":"read")") == std::string::npos;
                                   }};
  store::Time m_now = test::k_t0;
  int m_pokes = 0;
  std::vector<int> m_statuses;
  // Last: destroyed first, before the transports that may still hold its calls.
  std::optional<whatsapp::WhatsAppChannel> m_channel;
};

}  // namespace

TEST_CASE("whatsapp channel: the channel contract", "[whatsapp][contract]") {
  test::contract::check_channel_contract([] { return std::make_unique<WhatsAppContractHarness>(); });
}
