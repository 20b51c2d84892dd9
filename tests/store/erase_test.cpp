// Erasing a customer's personal data (store/tools/erase.h): no byte of it left in the database
// file or its WAL, the other customers untouched, the audit chain still verifying.
#include <catch2/catch.hpp>

#include <atomic>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "store/attempts.h"
#include "store/audit.h"
#include "store/desk.h"
#include "store/media.h"
#include "store/outbox.h"
#include "store/queue.h"
#include "store/tools/erase.h"
#include "tests/store/media_fixture.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using test::k_t0;

namespace {

struct Customer {
  std::string number;
  std::string marker;  // in every text they wrote or were sent
};

const Customer k_erased{"34600111222", "MARKER-zq7x"};
const Customer k_kept{"34699888777", "KEPT-w4rp"};

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Takes the message the agent would take next (REQUIRE: `id`).
void take(store::Database& db, std::int64_t id, store::Time now) {
  auto taken = store::take_next(db, "w", now, 60s);
  REQUIRE(taken);
  REQUIRE(*taken);
  REQUIRE((*taken)->id == id);
}

void send_next(store::Database& db, const std::string& provider_id, store::Time now) {
  auto item = store::begin_send(db, now);
  REQUIRE(item);
  REQUIRE(*item);
  REQUIRE(store::complete_send(db, (*item)->id, provider_id, now));
  REQUIRE(store::apply_delivery(db, {provider_id, "", store::DeliveryStatus::delivered, ""}, now));
}

std::int64_t inbound(store::Database& db, const Customer& c, int n, store::Time now) {
  const std::string text = "message " + std::to_string(n) + " " + c.marker;
  auto stored =
      store::insert_inbound(db,
                            {"whatsapp", "wamid.HBg" + c.number + "." + std::to_string(n), c.number, c.number, text,
                             R"({"from":")" + c.number + R"(","text":{"body":")" + text + "\"}}", "text"},
                            now);
  REQUIRE(stored);
  return stored->id;
}

std::string reply_json(const Customer& c) {
  return R"({"accion":"enviar_mensaje","destinatario":")" + c.number + R"(","contenido":"ok )" + c.marker + "\"}";
}

// Through the store, as the daemon and staff write it: a message answered by the model and
// sent; a message whose attempt failed, escalated with a proposal, answered by staff.
void seed(store::Database& db, const Customer& c, store::Time now) {
  const auto first = inbound(db, c, 1, now);
  take(db, first, now);
  REQUIRE(store::record_attempt(db,
                                {.message_id = first,
                                 .provider = "openai",
                                 .model = "m",
                                 .request_summary = R"({"turns":1})",
                                 .raw_output = reply_json(c),
                                 .verdict = store::Verdict::valid},
                                now));
  REQUIRE(store::queue_reply(db,
                             {.message_id = first,
                              .action = "enviar_mensaje",
                              .arguments = reply_json(c),
                              .recipient = c.number,
                              .body = "ok " + c.marker,
                              .recipient_written = "+" + c.number},
                             now));
  send_next(db, "wamid.out" + c.number + ".1", now);

  const auto second = inbound(db, c, 2, now + 1s);
  take(db, second, now + 1s);
  REQUIRE(store::record_attempt(
      db,
      {.message_id = second,
       .provider = "openai",
       .model = "m",
       .raw_output = "not json " + c.marker,
       .verdict = store::Verdict::invalid,
       .errors = R"([{"path":"","code":"no_json","message":"no JSON in: not json )" + c.marker + "\"}]"},
      now + 1s));
  const store::NewAction proposal{.message_id = second,
                                  .action = "enviar_mensaje",
                                  .arguments = reply_json(c),
                                  .recipient = c.number,
                                  .body = "ok " + c.marker,
                                  .status = store::ActionStatus::proposed};
  auto escalation = store::escalate_message(db,
                                            {second, store::EscalationReason::contract_failed,
                                             R"({"why":"no JSON: )" + c.marker + "\"}", std::nullopt, proposal},
                                            std::nullopt, now + 1s);
  REQUIRE(escalation);
  REQUIRE(store::claim_escalation(db, *escalation, "ana", now + 2s));
  // Staff's internal note quotes the customer: erased with them (its audit event too).
  REQUIRE(store::add_note(db, *escalation, "ana", "called " + c.number + ": " + c.marker, now + 2s));
  REQUIRE(store::resolve_with_action(db, *escalation, "ana",
                                     {.message_id = second,
                                      .action = "staff_reply",
                                      .arguments = R"({"text":"staff )" + c.marker + "\"}",
                                      .recipient = c.number,
                                      .body = "staff " + c.marker,
                                      .created_by = "ana"},
                                     store::Resolution::replied, now + 2s));
  send_next(db, "wamid.out" + c.number + ".2", now + 3s);
}

// A message answered by an MCP act: the tool call (its arguments hold the customer's words),
// then its follow-up reply, both sent.
void act_message(store::Database& db, const Customer& c, store::Time now) {
  const auto third = inbound(db, c, 3, now + 4s);
  take(db, third, now + 4s);
  REQUIRE(store::queue_reply(
      db,
      store::with_tool({.message_id = third, .action = "reservar", .arguments = reply_json(c), .recipient = c.number},
                       "reservas", "book", R"({"nota":"book )" + c.marker + "\"}", "booked " + c.marker),
      now + 4s));
  auto call = store::begin_send(db, now + 5s, std::string(store::k_tool_lane));
  REQUIRE(call);
  REQUIRE(*call);
  REQUIRE(store::complete_send(db, (*call)->id, "", now + 5s));
  send_next(db, "wamid.out" + c.number + ".3", now + 6s);
}

struct EraseFixture {
  test::TempDir dir;
  store::Database db = test::migrated_db(dir);

  std::string db_bytes() const { return file_bytes(dir.file("d.db")) + file_bytes(dir.file("d.db-wal")); }
};

}  // namespace

TEST_CASE("erase: no trace of the customer in the file or its WAL, others untouched, chain verifies",
          "[erase][sqlite]") {
  EraseFixture f;
  seed(f.db, k_erased, k_t0);
  seed(f.db, k_kept, k_t0 + 10s);
  // Stale copies in free space and old WAL frames: the rows were rewritten as their states moved.
  const std::string before = f.db_bytes();
  REQUIRE(before.find(k_erased.marker) != std::string::npos);
  REQUIRE(before.find(k_erased.number) != std::string::npos);

  auto erased = store::erase_counterpart(f.db, {"+" + k_erased.number, "dpo-lucia", true, {"whatsapp"}}, k_t0 + 1h);
  REQUIRE(erased);
  CHECK(erased->messages == 2);
  CHECK(erased->attempts == 2);
  CHECK(erased->actions == 3);  // the model's reply, the rejected proposal, the staff reply
  CHECK(erased->escalations == 1);
  CHECK(erased->audit_events > 10);
  CHECK(erased->scrub.vacuumed);
  CHECK(erased->scrub.wal_truncated);
  CHECK(erased->scrub.problem.empty());

  const std::string after = f.db_bytes();
  CHECK(after.find(k_erased.marker) == std::string::npos);
  CHECK(after.find(k_erased.number) == std::string::npos);
  CHECK(after.find(k_kept.marker) != std::string::npos);
  CHECK(after.find(k_kept.number) != std::string::npos);

  const auto check = store::verify_audit(f.db);
  REQUIRE(check);
  CHECK_FALSE(check->first_broken);

  // The other customer's rows are as they were.
  CHECK(test::query_int(f.db, "SELECT count(*) FROM v_messages WHERE sender = '" + k_kept.number +
                                  "' AND text LIKE '%" + k_kept.marker + "' AND provider_message_id LIKE 'wamid.HBg%'")
            .value() == 2);
  CHECK(test::query_int(f.db, "SELECT count(*) FROM v_actions WHERE recipient = '" + k_kept.number +
                                  "' AND body LIKE '%" + k_kept.marker + "'")
            .value() == 3);
  CHECK(test::query_int(f.db, "SELECT count(*) FROM audit a JOIN inbox m ON m.id = a.message_id WHERE m.sender = '" +
                                  k_kept.number + "' AND a.salt IS NULL")
            .value() == 0);

  CHECK(test::query_int(f.db, "SELECT count(*) FROM v_notes WHERE text = '[erased]'").value() == 1);
  CHECK(test::query_int(f.db, "SELECT count(*) FROM v_notes WHERE text LIKE '%" + k_kept.marker + "'").value() == 1);

  // The erased customer's messages still group under one digest; outcomes and ids remain.
  CHECK(test::query_int(f.db, "SELECT count(*) FROM v_messages WHERE sender = '" + erased->digest +
                                  "' AND conversation_id = '" + erased->digest +
                                  "' AND text = '[erased]' AND outcome IN ('replied', 'escalated')")
            .value() == 2);
  CHECK(test::query_int(f.db,
                        "SELECT count(*) FROM spend_conversation_days WHERE conversation_id = '" + erased->digest + "'")
            .value() >= 1);
  CHECK(test::query_int(f.db, "SELECT count(DISTINCT provider_message_id) FROM inbox WHERE sender = '" +
                                  erased->digest + "' AND provider_message_id LIKE 'erased:%'")
            .value() == 2);
  CHECK(test::query_int(f.db, "SELECT count(*) FROM v_actions WHERE recipient = '" + erased->digest +
                                  "' AND body = '[erased]' AND status IN ('sent', 'rejected')")
            .value() == 3);
  // The erasure is in the chain, naming its actor and the digest only.
  CHECK(test::query_int(f.db, "SELECT count(*) FROM audit WHERE id = " + std::to_string(erased->audit_id) +
                                  " AND event = 'erased' AND actor = 'dpo-lucia' AND " +
                                  test::json_text("detail", "counterpart") + " = '" + erased->digest + "' AND " +
                                  test::json_integer("detail", "messages") + " = 2")
            .value() == 1);
}

TEST_CASE("erase: a customer's files leave the file and its WAL, a file another customer sent too stays",
          "[erase][sqlite]") {
  EraseFixture f;
  const std::string theirs = "JPEG bytes of " + k_erased.marker;
  const std::int64_t erased_file =
      test::stored_photo_message(f.db,
                                 {"wamid.HBg" + k_erased.number + ".photo", k_erased.number, theirs,
                                  std::string(64, 'a'), k_erased.marker + ".jpg"},
                                 k_t0);
  // The kept customer sent the same bytes: the blob is theirs too and stays.
  const std::int64_t shared = test::stored_photo_message(
      f.db, {"wamid.HBg" + k_kept.number + ".photo", k_kept.number, "shared " + k_kept.marker, std::string(64, 'b')},
      k_t0);
  // A second file of the erased customer, the same bytes as the kept one's.
  test::stored_photo_message(
      f.db,
      {"wamid.HBg" + k_erased.number + ".again", k_erased.number, "shared " + k_kept.marker, std::string(64, 'b')},
      k_t0 + 1s);
  REQUIRE(f.db_bytes().find(theirs) != std::string::npos);

  auto erased = store::erase_counterpart(f.db, {k_erased.number, "dpo", true, {"whatsapp"}}, k_t0 + 1h);
  REQUIRE(erased);
  CHECK(erased->media_files == 2);
  CHECK(erased->scrub.wal_truncated);
  const std::string after = f.db_bytes();
  CHECK(after.find(theirs) == std::string::npos);
  CHECK(after.find(k_erased.marker) == std::string::npos);
  auto row = store::find_media(f.db, erased_file);
  REQUIRE(row);
  CHECK(row->state == store::MediaState::erased);
  CHECK(row->filename.empty());
  CHECK(row->provider_ref == "[erased]");
  CHECK_FALSE(store::read_media(f.db, erased_file, [](std::string_view) { return true; }));
  CHECK(test::media_bytes(f.db, shared) == "shared " + k_kept.marker);
  CHECK(test::query_int(f.db, "SELECT count(*) FROM media_blobs").value() == 1);
  const auto check = store::verify_audit(f.db);
  REQUIRE(check);
  CHECK_FALSE(check->first_broken);
}

TEST_CASE("erase: refused while the agent or staff are not done, nothing changed", "[erase]") {
  EraseFixture f;
  seed(f.db, k_erased, k_t0);
  const auto waiting = inbound(f.db, k_erased, 3, k_t0 + 1min);
  auto refused = store::erase_counterpart(f.db, {k_erased.number, "dpo", true, {"whatsapp"}}, k_t0 + 1h);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == store::ErrorKind::refused);
  CHECK(refused.error().message.find("message " + std::to_string(waiting) + " is received") != std::string::npos);
  CHECK(test::query_int(f.db, "SELECT count(*) FROM inbox WHERE sender = '" + k_erased.number + "'").value() == 3);
  CHECK(test::query_int(f.db, "SELECT count(*) FROM audit WHERE salt IS NULL OR event = 'erased'").value() == 0);

  SECTION("an open escalation is named too") {
    take(f.db, waiting, k_t0 + 2min);
    REQUIRE(store::escalate_message(f.db, {waiting, store::EscalationReason::model_escalated, "{}"}, std::nullopt,
                                    k_t0 + 2min));
    refused = store::erase_counterpart(f.db, {k_erased.number, "dpo", true, {"whatsapp"}}, k_t0 + 1h);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message.find("escalation 2 of message " + std::to_string(waiting) + " is open") !=
          std::string::npos);
  }
}

TEST_CASE("erase: an unknown counterpart is not_found, addresses compare in lower case", "[erase]") {
  EraseFixture f;
  auto none = store::erase_counterpart(f.db, {"nobody@example.com", "dpo", true, {"whatsapp"}}, k_t0);
  REQUIRE_FALSE(none);
  CHECK(none.error().kind == store::ErrorKind::not_found);
  CHECK(store::normalize_counterpart("Ana.Perez@Example.COM") == "ana.perez@example.com");
  CHECK(store::normalize_counterpart("+34600111222") == "34600111222");
  CHECK(store::normalize_counterpart("34600111222") == "34600111222");
}

TEST_CASE("erase: an action the model addressed to the customer from another conversation is erased too", "[erase]") {
  EraseFixture f;
  seed(f.db, k_kept, k_t0);
  seed(f.db, k_erased, k_t0 + 10s);
  // A message of the kept customer whose (refused) proposal named the erased one.
  const auto injected = inbound(f.db, k_kept, 3, k_t0 + 1min);
  take(f.db, injected, k_t0 + 1min);
  REQUIRE(store::escalate_message(f.db,
                                  {injected, store::EscalationReason::policy_violation, "{}", std::nullopt,
                                   store::NewAction{.message_id = injected,
                                                    .action = "enviar_mensaje",
                                                    .arguments = reply_json(k_erased),
                                                    .recipient = k_erased.number,
                                                    .body = "ok " + k_erased.marker,
                                                    .status = store::ActionStatus::proposed}},
                                  std::nullopt, k_t0 + 1min));
  auto id = test::query_int(f.db, "SELECT id FROM escalations WHERE message_id = " + std::to_string(injected));
  REQUIRE(store::close_escalation(f.db, *id, "ana", store::EscalationStatus::dismissed, "not for them", k_t0 + 2min));
  auto erased = store::erase_counterpart(f.db, {k_erased.number, "dpo", true, {"whatsapp"}}, k_t0 + 1h);
  REQUIRE(erased);
  CHECK(erased->actions == 4);
  CHECK(erased->escalations == 2);  // the dismissed one held the proposal
  const std::string after = f.db_bytes();
  CHECK(after.find(k_erased.marker) == std::string::npos);
  CHECK(after.find(k_erased.number) == std::string::npos);
  CHECK(test::query_int(f.db, "SELECT count(*) FROM inbox WHERE id = " + std::to_string(injected) + " AND sender = '" +
                                  k_kept.number + "'")
            .value() == 1);
  CHECK_FALSE(store::verify_audit(f.db).value().first_broken);
}

TEST_CASE("erase: a reader holding the WAL is reported, and a later scrub finishes the job", "[erase][sqlite]") {
  EraseFixture f;
  seed(f.db, k_erased, k_t0);
  REQUIRE(test::exec(f.db, "PRAGMA busy_timeout=50"));  // the daemon's reads would be shorter-lived
  auto reader = test::open_db(f.dir, store::Database::Mode::existing);
  REQUIRE(reader);
  // A read transaction on the snapshot before the erasure pins the WAL.
  REQUIRE(test::exec(*reader, "BEGIN"));
  REQUIRE(test::query_int(*reader, "SELECT count(*) FROM inbox").value() == 2);

  auto erased = store::erase_counterpart(f.db, {k_erased.number, "dpo", false, {"whatsapp"}}, k_t0 + 1h);
  REQUIRE(erased);  // committed: the live rows are erased
  CHECK(erased->messages == 2);
  CHECK_FALSE(erased->scrub.wal_truncated);
  CHECK(erased->scrub.problem.find("the WAL was not truncated") != std::string::npos);
  CHECK(test::query_int(f.db, "SELECT count(*) FROM v_messages WHERE text LIKE '%" + k_erased.marker + "%'").value() ==
        0);

  REQUIRE(test::exec(*reader, "COMMIT"));
  const auto scrub = store::scrub_free_space(f.db, true);
  CHECK(scrub.problem.empty());
  CHECK(scrub.vacuumed);
  CHECK(scrub.wal_truncated);
  const std::string after = f.db_bytes();
  CHECK(after.find(k_erased.marker) == std::string::npos);
  CHECK(after.find(k_erased.number) == std::string::npos);
  CHECK_FALSE(store::verify_audit(f.db).value().first_broken);
}

TEST_CASE("erase: while another connection writes (the daemon), it commits or fails retryably, nothing is lost",
          "[erase][sqlite]") {
  EraseFixture f;
  seed(f.db, k_erased, k_t0);
  seed(f.db, k_kept, k_t0 + 10s);
  auto second = test::open_db(f.dir, store::Database::Mode::existing);
  REQUIRE(second);
  // A short busy timeout, so that the writer also meets the erasure's lock and its VACUUM as
  // a busy answer (the daemon retries those) rather than only as a wait.
  REQUIRE(test::exec(*second, "PRAGMA busy_timeout=20"));

  // The writer: inbound messages from other senders, one transaction each, until told to stop.
  // Catch2's assertions are not thread-safe: it only counts, and the test checks afterwards.
  std::atomic<bool> stop{false};
  std::atomic<int> stored{0};
  std::atomic<int> busy{0};
  std::atomic<bool> failed{false};
  std::string unexpected;  // the first error that is not retryable; read after join
  std::thread writer([&] {
    for (int n = 0; !stop.load() && n < 100000; ++n) {
      const std::string who = "3461000" + std::to_string(n);
      auto inserted = store::insert_inbound(
          *second, {"whatsapp", "wamid.W" + who, who, who, "writer " + who, "{}", "text"}, k_t0 + 2h);
      if (inserted) {
        stored.fetch_add(1);
      } else if (store::is_retryable(inserted.error().kind)) {
        busy.fetch_add(1);
      } else {
        unexpected = inserted.error().message;
        failed = true;
        return;
      }
    }
  });
  const auto wait_for = [&](int count) {
    for (int i = 0; i < 10000 && stored.load() < count && !failed.load(); ++i) std::this_thread::sleep_for(1ms);
  };
  wait_for(5);

  // The erasure (its transaction, then VACUUM and the WAL's truncation) meanwhile: it commits,
  // or fails retryably with nothing changed; run again as an operator would.
  std::optional<store::EraseResult> erased;
  int refusals = 0;
  for (int attempt = 0; attempt < 20 && !erased; ++attempt) {
    auto result = store::erase_counterpart(f.db, {k_erased.number, "dpo", true, {"whatsapp"}}, k_t0 + 3h);
    if (result) {
      erased = *result;
    } else {
      INFO(result.error().message);
      CHECK(store::is_retryable(result.error().kind));
      CHECK(test::query_int(f.db, "SELECT count(*) FROM audit WHERE event = 'erased'").value() == 0);
      ++refusals;
    }
  }
  const int after_erase = stored.load();
  wait_for(after_erase + 5);  // the writer goes on after it
  stop = true;
  writer.join();
  INFO("busy answers to the writer: " << busy.load() << ", erase retries: " << refusals);
  CHECK(unexpected.empty());
  REQUIRE(erased);
  CHECK(erased->messages == 2);
  CHECK(stored.load() >= after_erase + 5);

  // Every insert the writer saw committed is there once, and none of the erased data.
  CHECK(test::query_int(f.db, "SELECT count(DISTINCT provider_message_id) FROM v_messages WHERE sender LIKE '3461000%'")
            .value() == stored.load());
  CHECK(test::query_int(f.db, "SELECT count(*) FROM v_messages WHERE text LIKE '%" + k_erased.marker +
                                  "%' OR sender = '" + k_erased.number + "'")
            .value() == 0);
  CHECK(test::query_int(f.db, "SELECT count(*) FROM v_messages WHERE text LIKE '%" + k_kept.marker + "'").value() == 2);
  CHECK(test::query_int(f.db, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check = 'ok'").value() == 1);
  const auto check = store::verify_audit(f.db);
  REQUIRE(check);
  CHECK_FALSE(check->first_broken);
  // Stale copies the concurrent writes may have kept from the erasure's own scrub are gone
  // after one more, with nobody writing.
  const auto scrub = store::scrub_free_space(f.db, true);
  CHECK(scrub.problem.empty());
  const std::string after = f.db_bytes();
  CHECK(after.find(k_erased.marker) == std::string::npos);
  CHECK(after.find(k_erased.number) == std::string::npos);
}

TEST_CASE("erase: an MCP act's tool call and its follow-up reply are erased too", "[erase][mcp]") {
  EraseFixture f;
  seed(f.db, k_erased, k_t0);
  act_message(f.db, k_erased, k_t0);
  auto erased = store::erase_counterpart(f.db, {k_erased.number, "dpo-lucia", true, {"whatsapp"}}, k_t0 + 1h);
  REQUIRE(erased);
  CHECK(erased->messages == 3);
  CHECK(erased->actions == 5);  // the three of seed(), the tool call and its follow-up
  CHECK(test::query_int(f.db,
                        "SELECT count(*) FROM v_actions WHERE tool_name = 'book' AND body = '[erased]'"
                        " AND follow_up = '[erased]' AND recipient = '" +
                            erased->digest + "'")
            .value() == 1);
  CHECK(test::query_int(f.db, "SELECT count(*) FROM v_actions WHERE body LIKE '%" + k_erased.marker +
                                  "%' OR follow_up LIKE '%" + k_erased.marker + "%' OR arguments LIKE '%" +
                                  k_erased.marker + "%'")
            .value() == 0);
  const auto check = store::verify_audit(f.db);
  REQUIRE(check);
  CHECK_FALSE(check->first_broken);
}
