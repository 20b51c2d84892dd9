#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "connectors/whatsapp/signature.h"
#include "daemon/whatsapp_channel.h"
#include "net/http.h"
#include "store/outbox.h"
#include "store/round.h"
#include "tests/io_run.h"
#include "tests/store/store_fixture.h"
#include "validator/outbound.h"

using namespace dispatchd;

namespace {

constexpr const char* k_secret = "test-app-secret";
constexpr const char* k_phone_number_id = "106540352242922";

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
  std::vector<net::HttpRequest> requests;
  std::vector<net::HttpCallback> held;

 private:
  boost::asio::io_context& m_io;
};

std::string text_webhook(int n) {
  const std::string sender = "52155" + std::to_string(10000000 + n);
  return R"({"object":"whatsapp_business_account","entry":[{"id":"1023456789012345","changes":[{"field":"messages",)"
         R"("value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550001234","phone_number_id":")" +
         std::string(k_phone_number_id) + R"("},"contacts":[{"profile":{"name":"C"},"wa_id":")" + sender +
         R"("}],"messages":[{"from":")" + sender + R"(","id":"wamid.read)" + std::to_string(n) +
         R"(","timestamp":"1790000000","type":"text","text":{"body":"hola"}}]}}]}]})";
}

// One webhook with `count` text messages from new senders, numbered from `first`.
std::string batch_webhook(int first, int count) {
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

daemon::Request signed_post(const std::string& body) {
  return {"POST", "/webhooks/whatsapp", "", {{"x-hub-signature-256", whatsapp::sign_body(body, k_secret)}}, body};
}

config::WhatsApp channel_config() {
  config::WhatsApp config;
  config.enabled = true;
  config.graph_base_url = "http://127.0.0.1:9/v21.0";
  config.phone_number_id = k_phone_number_id;
  return config;
}

// The channel on a migrated database, with requests held by the test.
struct Fixture {
  test::TempDir dir;
  store::Database db = test::migrated_db(dir);
  boost::asio::io_context io;
  HoldingTransport transport{io};
  int inbound = 0;
  daemon::WhatsAppChannel channel{io,
                                  db,
                                  transport,
                                  channel_config(),
                                  {"token", k_secret, "verify"},
                                  1 << 20,
                                  [] { return test::k_t0; },
                                  [this] { ++inbound; }};
  std::vector<int> statuses;

  void post(const daemon::Request& request) {
    channel.handle_post(request, [this](daemon::Response r) { statuses.push_back(r.status); });
  }
  void run() {
    io.run();
    io.restart();
  }
};

}  // namespace

TEST_CASE("whatsapp channel: a burst of webhooks sends its read receipts a few at a time", "[whatsapp]") {
  Fixture f;
  constexpr int k_burst = 50;
  for (int n = 0; n < k_burst; ++n) f.post(signed_post(text_webhook(n)));
  f.run();
  REQUIRE(f.statuses == std::vector<int>(k_burst, 200));
  CHECK(f.inbound >= 1);
  auto& transport = f.transport;

  // Every message is stored, but only a few receipts are on the wire at once; each answer
  // lets the next ones go, until all of them have left.
  std::size_t most_in_flight = 0;
  while (!transport.held.empty()) {
    most_in_flight = std::max(most_in_flight, transport.held.size());
    transport.answer_all();
    f.run();
  }
  CHECK(most_in_flight > 1);
  CHECK(most_in_flight <= 8);
  REQUIRE(transport.requests.size() == static_cast<std::size_t>(k_burst));
  for (const auto& request : transport.requests) {
    CHECK(request.url == "http://127.0.0.1:9/v21.0/" + std::string(k_phone_number_id) + "/messages");
    CHECK_THAT(request.body, Catch::Contains(R"("status":"read")"));
  }
  CHECK(f.channel.counters().read_receipts_dropped == 0);
  CHECK(f.channel.counters().messages_stored == k_burst);
}

TEST_CASE("whatsapp channel: counts each webhook by its answer", "[whatsapp]") {
  Fixture f;
  f.post(signed_post(text_webhook(1)));
  f.post(signed_post(text_webhook(1)));  // Meta delivers again
  auto forged = signed_post(text_webhook(2));
  forged.headers[0].second = "sha256=" + std::string(64, '0');
  f.post(forged);
  f.post(signed_post("{not json"));
  f.run();
  CHECK(f.statuses == std::vector<int>{401, 400, 200, 200});  // refusals at once, the rest after the commit
  const auto& counted = f.channel.counters();
  CHECK(counted.webhooks == 4);
  CHECK(counted.accepted == 2);
  CHECK(counted.bad_signatures == 1);
  CHECK(counted.malformed == 1);
  CHECK(counted.not_stored == 0);
  CHECK(counted.messages_stored == 1);
  CHECK(counted.duplicates == 1);
}

TEST_CASE("whatsapp channel: the oldest read receipts are dropped beyond a backlog of 10 000", "[whatsapp]") {
  Fixture f;
  constexpr int k_webhooks = 11;
  constexpr int k_per_webhook = 1000;  // the parser's cap on events per payload
  for (int w = 0; w < k_webhooks; ++w) f.post(signed_post(batch_webhook(w * k_per_webhook, k_per_webhook)));
  f.run();
  REQUIRE(f.statuses == std::vector<int>(k_webhooks, 200));
  constexpr int k_messages = k_webhooks * k_per_webhook;
  CHECK(f.channel.counters().messages_stored == k_messages);
  CHECK(f.transport.held.size() == 8);  // on the wire; 10,000 waiting; the rest dropped
  CHECK(f.channel.counters().read_receipts_dropped == k_messages - 8 - 10'000);
  while (!f.transport.held.empty()) {
    f.transport.answer_all();
    f.run();
  }
  CHECK(f.transport.requests.size() == static_cast<std::size_t>(8 + 10'000));
  // The newest were kept: the last message's receipt went out, the first waiting one's did not.
  CHECK_THAT(f.transport.requests.back().body, Catch::Contains("wamid.read" + std::to_string(k_messages - 1)));
  CHECK_THAT(f.transport.requests[8].body, Catch::Contains("wamid.read" + std::to_string(8 + 992) + "\""));
}

TEST_CASE("whatsapp channel: a send result whose round was not stored is written again, never sent again",
          "[whatsapp][store]") {
  Fixture f;
  store::Round round(f.db, [&f](std::function<void()> fn) { boost::asio::post(f.io, std::move(fn)); });
  f.post(signed_post(text_webhook(1)));
  test::run_until(f.io, [&] { return f.statuses.size() == 1 && f.transport.held.size() == 1; });
  REQUIRE(f.statuses == std::vector<int>{200});
  f.transport.answer_all();  // the read receipt
  const std::int64_t message_id = f.db.query_int("SELECT id FROM inbox").value();
  REQUIRE(store::add_action(f.db,
                            {.message_id = message_id,
                             .action = "send_message",
                             .arguments = R"({"action":"send_message"})",
                             .recipient = "5215510000001",
                             .body = "hola"},
                            test::k_t0));
  f.channel.pump();
  test::run_until(f.io, [&] { return f.transport.held.size() == 1; });  // the send, after its 'sending' mark
  REQUIRE(f.db.query_int("SELECT count(*) FROM actions WHERE status = 'sending'").value() == 1);

  // The disk fills while Graph answers: the round that records 'sent' fails at its COMMIT
  // (a deferred constraint is checked at COMMIT, as a full disk fails the WAL write).
  REQUIRE_FALSE(f.db.in_transaction());
  REQUIRE(f.db.exec("CREATE TABLE doomed (x INTEGER REFERENCES inbox (id) DEFERRABLE INITIALLY DEFERRED)"));
  REQUIRE(
      f.db.exec("CREATE TRIGGER disk_full AFTER UPDATE OF status ON actions WHEN NEW.status = 'sent'"
                " BEGIN INSERT INTO doomed VALUES (-1); END"));
  f.transport.answer_all(
      R"({"messaging_product":"whatsapp","contacts":[{"input":"5215510000001","wa_id":"5215510000001"}],)"
      R"("messages":[{"id":"wamid.OUT1"}]})");
  test::run_until(f.io, [&] { return round.stats().failed_commits >= 2; });  // written again, lost again
  CHECK(f.db.query_int("SELECT count(*) FROM actions WHERE status = 'sending'").value() == 1);

  REQUIRE_FALSE(f.db.in_transaction());  // a failed COMMIT closes its round at once
  REQUIRE(f.db.exec("DROP TRIGGER disk_full"));
  test::run_until(f.io,
                  [&] { return f.db.query_int("SELECT count(*) FROM actions WHERE status = 'sent'").value() == 1; });
  CHECK(f.db.query_int("SELECT count(*) FROM actions WHERE provider_message_id = 'wamid.OUT1'").value() == 1);
  std::size_t sends = 0;
  for (const auto& request : f.transport.requests) sends += request.body.find(R"("type":"text")") != std::string::npos;
  CHECK(sends == 1);
}

TEST_CASE("whatsapp channel: a reply the model addressed to \"+<wa_id>\" goes out within the 24-hour window",
          "[whatsapp]") {
  Fixture f;
  const auto count = [&f](const std::string& sql) { return f.db.query_int(sql).value(); };
  f.post(signed_post(text_webhook(1)));  // from 5215510000001, a moment ago
  test::run_until(f.io, [&] { return f.statuses.size() == 1 && f.transport.held.size() == 1; });
  REQUIRE(f.statuses == std::vector<int>{200});
  f.transport.answer_all();  // the read receipt
  const std::string wa_id = "5215510000001";
  const std::int64_t message_id = count("SELECT id FROM inbox WHERE sender = '" + wa_id + "'");

  // What the agent does with a valid reply (agent/agent.cpp, Run::act).
  const std::string reply =
      R"({"action":"send_message","recipient":"+5215510000001","content":"Ya va en camino.","priority":"low"})";
  const auto verdict = validator::validate(test::support_en(), reply, {.sender = wa_id, .source = {}});
  REQUIRE(verdict.ok);
  const auto outbound = validator::outbound_of(test::support_en(), verdict, wa_id);
  REQUIRE(outbound);
  REQUIRE(store::add_action(f.db,
                            {.message_id = message_id,
                             .action = verdict.action,
                             .arguments = verdict.output,
                             .recipient = outbound->recipient,
                             .body = outbound->body},
                            test::k_t0));

  // The window finds the customer's message, so the send leaves instead of failing.
  f.channel.pump();
  const std::string failed = "SELECT count(*) FROM actions WHERE status = 'failed'";
  test::run_until(f.io, [&] { return !f.transport.held.empty() || count(failed) > 0; });
  CHECK(count(failed) == 0);
  CHECK(count("SELECT count(*) FROM v_escalations WHERE reason = 'send_failed'") == 0);
  REQUIRE(f.transport.requests.size() == 2);
  CHECK_THAT(f.transport.requests.back().body, Catch::Contains(R"("to":"5215510000001")"));
  CHECK_THAT(f.transport.requests.back().body, Catch::Contains("Ya va en camino."));
  f.transport.answer_all(
      R"({"messaging_product":"whatsapp","contacts":[{"input":"5215510000001","wa_id":"5215510000001"}],)"
      R"("messages":[{"id":"wamid.OUT1"}]})");
  test::run_until(f.io, [&] { return count("SELECT count(*) FROM actions WHERE status = 'sent'") == 1; });
  CHECK(count("SELECT count(*) FROM v_actions WHERE provider_message_id = 'wamid.OUT1'"
              " AND recipient = '5215510000001'") == 1);
}
