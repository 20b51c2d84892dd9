#include <catch2/catch.hpp>

#include "common/utf8.h"
#include "daemon/escalation_notifier_decisions.h"
#include "tests/test_util.h"

using namespace dispatchd;
using namespace std::chrono_literals;

using daemon::Delivery;

namespace {

net::HttpResult answer(int status, net::Headers headers = {}) { return net::HttpResponse{status, headers, "ok"}; }

net::HttpResult no_answer(net::TransportErrorKind kind) {
  return std::unexpected(net::TransportError{kind, "no answer"});
}

store::PendingEscalation escalation(std::string sender, std::string text) {
  return {.audit_id = 40,
          .escalation_id = 12,
          .reason = store::EscalationReason::contract_failed,
          .channel = "whatsapp",
          .sender = std::move(sender),
          .text = std::move(text),
          .created_at = "2026-11-30T12:00:00Z"};
}

}  // namespace

TEST_CASE("notify decisions: what each answer means", "[notify_decisions]") {
  struct Row {
    net::HttpResult result;
    Delivery delivery;
    std::optional<std::chrono::seconds> retry_after;
  };
  const Row table[] = {
      {answer(200), Delivery::delivered, std::nullopt},
      {answer(204), Delivery::delivered, std::nullopt},
      {answer(299), Delivery::delivered, std::nullopt},
      {answer(408), Delivery::retry, std::nullopt},
      {answer(429, {{"Retry-After", "30"}}), Delivery::retry, 30s},
      {answer(429, {{"retry-after", "Wed, 21 Oct 2015 07:28:00 GMT"}}), Delivery::retry, 0s},  // a date past: no wait
      {answer(429, {{"retry-after", "soon"}}), Delivery::retry, std::nullopt},
      {answer(500), Delivery::retry, std::nullopt},
      {answer(503, {{"Retry-After", "120"}}), Delivery::retry, 120s},
      {answer(599), Delivery::retry, std::nullopt},
      {no_answer(net::TransportErrorKind::connect_failed), Delivery::retry, std::nullopt},
      {no_answer(net::TransportErrorKind::timed_out), Delivery::retry, std::nullopt},
      {no_answer(net::TransportErrorKind::too_large), Delivery::retry, std::nullopt},
      {no_answer(net::TransportErrorKind::other), Delivery::retry, std::nullopt},
      {answer(301), Delivery::permanent, std::nullopt},
      {answer(400), Delivery::permanent, std::nullopt},
      {answer(401), Delivery::permanent, std::nullopt},
      {answer(403, {{"Retry-After", "30"}}), Delivery::permanent, std::nullopt},
      {answer(404), Delivery::permanent, std::nullopt},
      {answer(410), Delivery::permanent, std::nullopt},
      {answer(413), Delivery::permanent, std::nullopt},
  };
  for (const auto& row : table) {
    const auto verdict = daemon::classify_delivery(row.result);
    CAPTURE(verdict.why);
    CHECK(verdict.delivery == row.delivery);
    CHECK(verdict.retry_after == row.retry_after);
  }
  CHECK(daemon::classify_delivery(answer(400)).why == "HTTP 400");
  CHECK_THAT(daemon::classify_delivery(no_answer(net::TransportErrorKind::timed_out)).why,
             Catch::StartsWith("timed_out: "));
}

TEST_CASE("notify decisions: 1 s doubling to 5 min, at least the Retry-After up to an hour", "[notify_decisions]") {
  struct Row {
    int failures;
    std::optional<std::chrono::seconds> retry_after;
    std::chrono::milliseconds delay;
  };
  const Row table[] = {
      {0, std::nullopt, 1s},  // counted as the first
      {1, std::nullopt, 1s},
      {2, std::nullopt, 2s},
      {3, std::nullopt, 4s},
      {9, std::nullopt, 256s},
      {10, std::nullopt, 300s},
      {1000, std::nullopt, 300s},
      {1, 30s, 30s},
      {9, 30s, 256s},  // the backoff is longer: it wins
      {1, 0s, 1s},
      {1, 7200s, 3600s},  // honoured up to an hour
  };
  for (const auto& row : table) {
    CAPTURE(row.failures, row.retry_after ? row.retry_after->count() : -1);
    CHECK(daemon::notify_retry_delay(row.failures, row.retry_after) == row.delay);
  }
}

TEST_CASE("notify decisions: the first line of untrusted text", "[notify_decisions]") {
  CHECK(daemon::first_line("Necesito mi factura\nde octubre") == "Necesito mi factura");
  CHECK(daemon::first_line("\r\n \n  hola\r\nadiós") == "hola");
  CHECK(daemon::first_line("") == "");
  CHECK(daemon::first_line(" \n\t\r\n") == "");
  CHECK(daemon::first_line("abcdef", 4) == "abc…");
  CHECK(daemon::first_line("abcd", 4) == "abcd");
  // A multi-byte character is never split: 300 "ñ" (2 bytes each) become 199 of them and "…".
  std::string spanish;
  for (int i = 0; i < 300; ++i) spanish += "ñ";
  const std::string cut = daemon::first_line(spanish);
  CHECK(utf8::is_valid(cut));
  CHECK(utf8::code_points(cut) == 200);
  CHECK(cut.ends_with("ñ…"));
  // An invalid byte ends the line before it.
  CHECK(daemon::first_line("hola\xff mundo") == "hola");
}

TEST_CASE("notify decisions: the JSON body", "[notify_decisions]") {
  const std::string body = daemon::notification_body(escalation("5215512345678", "Necesito mi factura\nde octubre"),
                                                     "https://support.example/");
  CHECK(body ==
        R"({"text":"dispatchd: escalation #12 (contract_failed) on whatsapp from 5215512345678: Necesito mi factura",)"
        R"("event":"opened","escalation_id":12,"reason":"contract_failed","channel":"whatsapp",)"
        R"("url":"https://support.example/staff/#/escalations/12"})");
  CHECK(daemon::case_url("http://127.0.0.1:8080", 7) == "http://127.0.0.1:8080/staff/#/escalations/7");

  SECTION("a breach of the response-time target says so") {
    auto breach = escalation("5215512345678", "Necesito mi factura");
    breach.kind = store::NotifyKind::breached;
    const auto doc = test::parse_json(daemon::notification_body(breach, "http://h"));
    CHECK(std::string(doc["event"].GetString()) == "breached");
    CHECK(std::string(doc["text"].GetString()) ==
          "dispatchd: escalation #12 (contract_failed) on whatsapp from 5215512345678 is past its response target, "
          "still unclaimed: Necesito mi factura");
    CHECK(doc["escalation_id"].GetInt64() == 12);
  }
  SECTION("no text: no colon after the sender") {
    const auto doc = test::parse_json(daemon::notification_body(escalation("ana@example.com", "  \n"), "http://h"));
    CHECK(std::string(doc["text"].GetString()) ==
          "dispatchd: escalation #12 (contract_failed) on whatsapp from ana@example.com");
  }
  SECTION("the customer cannot write Slack control sequences, quotes or more lines") {
    const auto doc = test::parse_json(daemon::notification_body(
        escalation("<!channel>", "<!here> \"click\" <https://evil.example|here> & win\n<!everyone>"), "http://h"));
    CHECK(std::string(doc["text"].GetString()) ==
          "dispatchd: escalation #12 (contract_failed) on whatsapp from &lt;!channel&gt;: &lt;!here&gt; \"click\" "
          "&lt;https://evil.example|here&gt; &amp; win");
    CHECK(doc["url"].GetString() == std::string("http://h/staff/#/escalations/12"));
  }
  SECTION("a long first line stops at 200 characters") {
    const auto doc = test::parse_json(daemon::notification_body(escalation("1", std::string(5000, 'a')), "http://h"));
    const std::string text = doc["text"].GetString();
    const std::string prefix = "dispatchd: escalation #12 (contract_failed) on whatsapp from 1: ";
    REQUIRE(text.starts_with(prefix));
    CHECK(utf8::code_points(text.substr(prefix.size())) == 200);
  }
}
