#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "connectors/whatsapp/channel.h"
#include "store/outbox.h"
#include "store/round.h"
#include "tests/connectors/whatsapp_fixture.h"
#include "tests/io_run.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;
using test::signed_post;
using test::text_webhook;
using Fixture = test::WhatsAppFixture;

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
    CHECK(request.url == "http://127.0.0.1:9/v21.0/" + std::string(test::k_phone_number_id) + "/messages");
    CHECK_THAT(request.body, Catch::Contains(R"("status":"read")"));
  }
  CHECK(f.channel.counters().read_receipts_dropped == 0);
  CHECK(f.channel.counters().messages_stored == k_burst);
}

TEST_CASE("whatsapp channel: with the typing indicator a message is marked read when the agent starts on it",
          "[whatsapp]") {
  Fixture f(true);
  f.post(signed_post(text_webhook(1)));
  f.post(signed_post(text_webhook(2)));
  f.run();
  REQUIRE(f.statuses == std::vector<int>{200, 200});
  CHECK(f.transport.requests.empty());  // stored, not yet read: nobody works on them
  f.channel.working_on("wamid.read1", true);
  f.channel.working_on("wamid.read2", false);  // decided by rule: read, no typing
  f.channel.working_on("", true);              // nothing to mark
  f.run();
  f.transport.answer_all();
  f.run();
  REQUIRE(f.transport.requests.size() == 2);
  CHECK(
      f.transport.requests[0].body ==
      R"({"messaging_product":"whatsapp","status":"read","message_id":"wamid.read1","typing_indicator":{"type":"text"}})");
  CHECK(f.transport.requests[1].body ==
        R"({"messaging_product":"whatsapp","status":"read","message_id":"wamid.read2"})");
}

TEST_CASE("whatsapp channel: without the typing indicator each message is read once stored, the agent aside",
          "[whatsapp]") {
  Fixture f(false);
  f.post(signed_post(text_webhook(1)));
  f.run();
  f.channel.working_on("wamid.read1", true);
  f.run();
  f.transport.answer_all();
  f.run();
  REQUIRE(f.transport.requests.size() == 1);
  CHECK(f.transport.requests[0].body ==
        R"({"messaging_product":"whatsapp","status":"read","message_id":"wamid.read1"})");
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

TEST_CASE("whatsapp channel: the agent hears of new messages in the round that stores them, before its COMMIT",
          "[whatsapp][store]") {
  Fixture f;
  store::Round round(f.db, [&f](std::function<void()> then) { boost::asio::post(f.io, std::move(then)); });
  std::vector<std::string> heard;
  f.on_inbound = [&] {
    auto other = test::open_db(f.dir, store::Database::Mode::existing);
    REQUIRE(other);
    heard.push_back("own rows " + std::to_string(test::query_int(f.db, "SELECT count(*) FROM inbox").value()) +
                    ", committed rows " +
                    std::to_string(test::query_int(*other, "SELECT count(*) FROM inbox").value()) + ", answered " +
                    std::to_string(f.statuses.size()));
  };
  f.post(signed_post(text_webhook(1)));
  f.post(signed_post(text_webhook(1)));  // the same message again: nothing new to hear of
  test::run_until(f.io, [&] { return f.statuses.size() == 2; });
  CHECK(heard == std::vector<std::string>{"own rows 1, committed rows 0, answered 0"});
  CHECK(f.statuses == std::vector<int>{200, 200});
}

TEST_CASE("whatsapp channel: the oldest read receipts are dropped beyond a backlog of 10 000", "[whatsapp]") {
  Fixture f;
  constexpr int k_webhooks = 11;
  constexpr int k_per_webhook = 1000;  // the parser's cap on events per payload
  for (int w = 0; w < k_webhooks; ++w) f.post(signed_post(test::batch_webhook(w * k_per_webhook, k_per_webhook)));
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

TEST_CASE("whatsapp channel: the webhook path answers the handshake, events and nothing else", "[whatsapp]") {
  Fixture f;
  std::vector<connectors::WebhookResponse> answers;
  const auto call = [&](const std::string& method, const std::string& query) {
    test::WebhookPost get{method, query, {}, ""};
    f.channel.handle(get.request(), [&](connectors::WebhookResponse r) { answers.push_back(std::move(r)); });
  };
  call("GET", "hub.mode=subscribe&hub.verify_token=verify&hub.challenge=1158201444");
  call("GET", "hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=1158201444");
  call("PUT", "");
  REQUIRE(answers.size() == 3);  // at once
  CHECK(answers[0].status == 200);
  CHECK(answers[0].body == "1158201444");
  CHECK(answers[1].status == 403);
  CHECK(answers[2].status == 405);
  CHECK(answers[2].headers == std::vector<std::pair<std::string, std::string>>{{"Allow", "GET, POST"}});
  CHECK(f.channel.webhook()->path() == "/webhooks/whatsapp");
}

namespace {

// The outcome of one send() whose Graph call gets `answer`.
struct Sending {
  Fixture f;
  std::optional<connectors::SendOutcome> outcome;

  Sending() {
    // 5215510000001 wrote a moment ago: the 24-hour window is open.
    f.post(signed_post(text_webhook(1)));
    test::run_until(f.io, [&] { return f.statuses.size() == 1 && f.transport.held.size() == 1; });
    f.transport.answer_all();  // the read receipt
    f.run();
  }
  void send(const std::string& recipient = "5215510000001", const std::string& body = "hola") {
    outcome.reset();
    f.channel.send({.id = 7, .recipient = recipient, .body = body, .idempotency_key = "dispatchd-1-1"},
                   [this](connectors::SendOutcome o) { outcome = std::move(o); });
    REQUIRE_FALSE(outcome);  // never from inside send()
  }
  connectors::SendOutcome answer(net::HttpResult result) {
    send();
    REQUIRE(f.transport.held.size() == 1);
    f.transport.answer_first(std::move(result));
    test::run_until(f.io, [&] { return outcome.has_value(); });
    return *outcome;
  }
  connectors::SendOutcome answer(int status, std::string body, net::Headers headers = {}) {
    return answer(net::HttpResponse{status, std::move(headers), std::move(body)});
  }
};

std::string graph_error(int code) {
  return R"({"error":{"message":"(#)" + std::to_string(code) + R"() refused","type":"OAuthException","code":)" +
         std::to_string(code) + R"(,"fbtrace_id":"AbC"}})";
}

net::HttpResult transport_error(net::TransportErrorKind kind) {
  return std::unexpected(net::TransportError{kind, "boom"});
}

// The outcome's kind as the store writes it, and its delay or id.
std::string describe(const connectors::SendOutcome& outcome) {
  if (const auto* sent = std::get_if<connectors::Sent>(&outcome)) return "sent " + sent->provider_message_id;
  if (const auto* retry = std::get_if<connectors::RetryAfter>(&outcome))
    return "retry after " + std::to_string(retry->after.count()) + " ms";
  if (const auto* failed = std::get_if<connectors::Failed>(&outcome))
    return failed->because == store::SendFailure::window_closed ? "failed: window closed" : "failed";
  return "unknown";
}

}  // namespace

TEST_CASE("whatsapp channel: each answer of the Graph API is its send outcome", "[whatsapp]") {
  struct Row {
    const char* what;
    net::HttpResult answer;
    std::string expected;
  };
  const std::string sent = R"({"messaging_product":"whatsapp","messages":[{"id":"wamid.OUT1"}]})";
  const std::vector<Row> table{
      {"a sent message", net::HttpResponse{200, {}, sent}, "sent wamid.OUT1"},
      {"connection refused: it never left", transport_error(net::TransportErrorKind::connect_failed),
       "retry after 5000 ms"},
      {"a timeout: it may have left", transport_error(net::TransportErrorKind::timed_out), "unknown"},
      {"a reset connection", transport_error(net::TransportErrorKind::other), "unknown"},
      {"131047: the window closed", net::HttpResponse{400, {}, graph_error(131047)}, "failed: window closed"},
      {"130429: the throughput limit", net::HttpResponse{400, {}, graph_error(130429)}, "retry after 2000 ms"},
      {"429 with Retry-After", net::HttpResponse{429, {{"Retry-After", "120"}}, ""}, "retry after 120000 ms"},
      {"100: an invalid parameter", net::HttpResponse{400, {}, graph_error(100)}, "failed"},
      {"502 without a Graph error: a gateway gave up", net::HttpResponse{502, {}, "Bad Gateway"}, "unknown"},
      {"200 without a message id", net::HttpResponse{200, {}, R"({"messages":[]})"}, "unknown"},
      {"190: the token was refused", net::HttpResponse{401, {}, graph_error(190)}, "retry after 60000 ms"},
  };
  for (const auto& row : table) {
    SECTION(row.what) {
      Sending s;
      CHECK(describe(s.answer(row.answer)) == row.expected);
      // The request carried the message and our idempotency key as the tracker.
      CHECK_THAT(s.f.transport.requests.back().body, Catch::Contains(R"("to":"5215510000001")"));
      CHECK_THAT(s.f.transport.requests.back().body, Catch::Contains(R"("biz_opaque_callback_data":"dispatchd-1-1")"));
    }
  }
}

TEST_CASE("whatsapp channel: consecutive rate limits back off until a send goes through", "[whatsapp]") {
  Sending s;
  const auto limited = [&] { return describe(s.answer(400, graph_error(130429))); };
  CHECK(limited() == "retry after 2000 ms");
  CHECK(limited() == "retry after 4000 ms");
  CHECK(limited() == "retry after 8000 ms");
  CHECK(describe(s.answer(200, R"({"messages":[{"id":"wamid.OK"}]})")) == "sent wamid.OK");
  CHECK(limited() == "retry after 2000 ms");
}

TEST_CASE("whatsapp channel: a refused token pauses sending for a minute, a probe tells", "[whatsapp]") {
  Sending s;
  CHECK_FALSE(s.f.channel.health().paused);
  CHECK(describe(s.answer(401, graph_error(190))) == "retry after 60000 ms");
  CHECK(s.f.channel.health().paused);
  CHECK(s.f.channel.health().reason == "the access token was refused");
  s.f.now += std::chrono::seconds(59);
  CHECK(s.f.channel.health().paused);
  s.f.now += std::chrono::seconds(1);  // the pump's next send probes the token
  CHECK_FALSE(s.f.channel.health().paused);
  CHECK(describe(s.answer(401, graph_error(190))) == "retry after 60000 ms");
  CHECK(s.f.channel.health().paused);
  CHECK(describe(s.answer(200, R"({"messages":[{"id":"wamid.OK"}]})")) == "sent wamid.OK");
  CHECK_FALSE(s.f.channel.health().paused);
}

TEST_CASE("whatsapp channel: refused before any request: a closed window, a message Graph cannot take", "[whatsapp]") {
  Sending s;
  const auto refused = [&](const std::string& recipient, const std::string& body) {
    s.send(recipient, body);
    test::run_until(s.f.io, [&] { return s.outcome.has_value(); });
    REQUIRE(std::holds_alternative<connectors::Failed>(*s.outcome));
    return describe(*s.outcome) + ": " + std::get<connectors::Failed>(*s.outcome).why;
  };
  const auto before = s.f.transport.requests.size();
  CHECK_THAT(refused("5215599999999", "hola"),
             Catch::StartsWith("failed: window closed: outside WhatsApp's 24-hour"));  // never wrote
  CHECK_THAT(refused("5215510000001", ""), Catch::StartsWith("failed: cannot build the Graph request: empty message"));
  s.f.now += std::chrono::hours(24);  // the customer's message is a day old
  CHECK_THAT(refused("5215510000001", "hola"), Catch::StartsWith("failed: window closed: outside WhatsApp's 24-hour"));
  CHECK(s.f.transport.requests.size() == before);
}

TEST_CASE("whatsapp channel: the reply window is known before a send, as the send checks it", "[whatsapp]") {
  Sending s;  // 5215510000001 wrote a moment ago
  const auto window = [&](const std::string& counterpart) { return s.f.channel.reply_window(counterpart, s.f.now); };
  const auto open = window("5215510000001");
  REQUIRE(open);
  CHECK(open->open);
  REQUIRE(open->closes_at);
  const auto closes = *open->closes_at;
  const auto never = window("5215599999999");
  REQUIRE(never);
  CHECK_FALSE(never->open);
  CHECK_FALSE(never->closes_at);
  s.f.now += std::chrono::hours(24);
  const auto closed = window("5215510000001");
  REQUIRE(closed);
  CHECK_FALSE(closed->open);
  CHECK(closed->closes_at == closes);
}

TEST_CASE("whatsapp channel: it cannot look up an unknown send", "[whatsapp]") {
  Fixture f;
  connectors::SendDone done = [](connectors::SendOutcome) {};
  CHECK_FALSE(f.channel.resolve_unknown({.id = 1}, done));
  CHECK(done);  // left to the pump, which escalates
}

TEST_CASE("whatsapp channel: destroyed with a send in flight, the late answer calls nothing", "[whatsapp]") {
  Fixture f;
  f.post(signed_post(text_webhook(1)));  // 5215510000001 writes: the window is open
  test::run_until(f.io, [&] { return f.statuses.size() == 1 && f.transport.held.size() == 1; });
  f.transport.answer_all();  // the read receipt
  f.run();
  bool called = false;
  auto token = std::make_shared<int>(0);
  const std::weak_ptr<int> done_alive = token;
  {
    whatsapp::WhatsAppChannel channel{
        {[&f](std::move_only_function<void()> fn) { boost::asio::post(f.io, std::move(fn)); }, f.db, f.transport,
         [&f] { return f.now; }, [] {}},
        test::whatsapp_settings()};
    channel.send({.id = 7, .recipient = "5215510000001", .body = "hola", .idempotency_key = "dispatchd-1-1"},
                 [&called, token = std::move(token)](connectors::SendOutcome) { called = true; });
    REQUIRE(f.transport.held.size() == 1);
  }
  // Graph answers after the channel is gone (a shutdown): the pump that gave `done` may be
  // gone too, so `done` is destroyed uncalled (connectors/channel.h).
  f.transport.answer_all(R"({"messaging_product":"whatsapp","messages":[{"id":"wamid.LATE"}]})");
  f.run();
  CHECK_FALSE(called);
  CHECK(done_alive.expired());
}
