// The outbox pump (daemon/outbox_pump.h) sending through the WhatsApp channel.

#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "daemon/outbox_pump.h"
#include "store/outbox.h"
#include "store/round.h"
#include "tests/connectors/whatsapp_fixture.h"
#include "tests/io_run.h"
#include "tests/store/disk_full.h"
#include "tests/support/raw_sql.h"
#include "validator/outbound.h"

using namespace dispatchd;
using test::signed_post;
using test::text_webhook;

namespace {

// The channel with the pump that sends its outbox rows.
struct SendFixture : test::WhatsAppFixture {
  daemon::OutboxPump pump{{io, db, [this] { return now; }}};
  SendFixture() { pump.add(channel); }
};

}  // namespace

TEST_CASE("whatsapp channel: a send result whose round was not stored is written again, never sent again",
          "[whatsapp][store]") {
  SendFixture f;
  store::Round round(f.db, [&f](std::function<void()> fn) { boost::asio::post(f.io, std::move(fn)); });
  f.post(signed_post(text_webhook(1)));
  test::run_until(f.io, [&] { return f.statuses.size() == 1 && f.transport.held.size() == 1; });
  REQUIRE(f.statuses == std::vector<int>{200});
  f.transport.answer_all();  // the read receipt
  const std::int64_t message_id = test::query_int(f.db, "SELECT id FROM inbox").value();
  REQUIRE(store::add_action(f.db,
                            {.message_id = message_id,
                             .action = "send_message",
                             .arguments = R"({"action":"send_message"})",
                             .recipient = "5215510000001",
                             .body = "hola"},
                            test::k_t0));
  f.pump.pump();
  test::run_until(f.io, [&] { return f.transport.held.size() == 1; });  // the send, after its 'sending' mark
  REQUIRE(test::query_int(f.db, "SELECT count(*) FROM actions WHERE status = 'sending'").value() == 1);

  // The disk fills while Graph answers: the round that records 'sent' fails at its COMMIT
  // (a deferred constraint is checked at COMMIT, as a full disk fails the WAL write).
  REQUIRE_FALSE(f.db.in_transaction());
  test::fill_disk(f.db, "UPDATE OF status ON actions", "NEW.status = 'sent'");
  f.transport.answer_all(
      R"({"messaging_product":"whatsapp","contacts":[{"input":"5215510000001","wa_id":"5215510000001"}],)"
      R"("messages":[{"id":"wamid.OUT1"}]})");
  test::run_until(f.io, [&] { return round.stats().failed_commits >= 2; });  // written again, lost again
  CHECK(test::query_int(f.db, "SELECT count(*) FROM actions WHERE status = 'sending'").value() == 1);

  REQUIRE_FALSE(f.db.in_transaction());  // a failed COMMIT closes its round at once
  test::free_disk(f.db, "actions");
  test::run_until(
      f.io, [&] { return test::query_int(f.db, "SELECT count(*) FROM actions WHERE status = 'sent'").value() == 1; });
  CHECK(test::query_int(f.db, "SELECT count(*) FROM actions WHERE provider_message_id = 'wamid.OUT1'").value() == 1);
  std::size_t sends = 0;
  for (const auto& request : f.transport.requests) sends += request.body.find(R"("type":"text")") != std::string::npos;
  CHECK(sends == 1);
  CHECK(f.pump.stats().front().writes_retried >= 2);
}

TEST_CASE("whatsapp channel: a reply the model addressed to \"+<wa_id>\" goes out within the 24-hour window",
          "[whatsapp]") {
  SendFixture f;
  const auto count = [&f](const std::string& sql) { return test::query_int(f.db, sql).value(); };
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
  f.pump.pump();
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
