#include <catch2/catch.hpp>

#include "store/desk.h"
#include "store/history.h"
#include "store/inbox.h"
#include "store/queue.h"
#include "tests/store/store_fixture.h"

using namespace dispatchd;
using namespace std::chrono_literals;

namespace {

using test::k_t0;

constexpr const char* k_ana = "5215534567890";
constexpr const char* k_bo = "5215500000002";

// Ana: two conversations, three messages, two escalations (the first answered by staff);
// Bo: one escalation; an email customer; and a message with no sender (an undecodable email).
struct Fixture {
  test::TempDir dir;
  store::Database db = test::migrated_db(dir);
  std::int64_t ana_first = 0, ana_second = 0, bo = 0, mail = 0, nobody = 0;
  std::int64_t ana_chat = 0, ana_reply = 0;

  std::int64_t message(const char* channel, const char* id, const char* conversation, const char* sender,
                       const char* text, store::Time at) {
    auto m = store::insert_inbound(db, {channel, id, conversation, sender, text, "{}"}, at);
    REQUIRE(m);
    return m->id;
  }
  std::int64_t escalate(std::int64_t message_id, store::EscalationReason reason, store::Time at) {
    auto e = store::open_escalation(db, {message_id, reason, "{}", std::nullopt, std::nullopt}, at);
    REQUIRE(e);
    return *e;
  }

  Fixture() {
    const auto first = message("whatsapp", "wamid.A1", "c-ana-1", k_ana, "Necesito la FACTURA de octubre", k_t0);
    ana_first = escalate(first, store::EscalationReason::contract_failed, k_t0 + 1s);
    REQUIRE(store::claim_escalation(db, ana_first, "luis", k_t0 + 2s));
    auto reply = store::resolve_with_action(
        db, ana_first, "luis",
        {.message_id = first,
         .action = "send_message",
         .arguments = R"({"action":"send_message","recipient":"5215534567890","content":"Ya va."})",
         .recipient = std::string(k_ana),
         .body = "Ya va.",
         .created_by = "luis"},
        store::Resolution::replied, k_t0 + 3s);
    REQUIRE(reply);
    ana_reply = *reply;
    ana_chat = message("whatsapp", "wamid.A2", "c-ana-1", k_ana, "gracias", k_t0 + 1h);
    const auto later =
        message("whatsapp", "wamid.A3", "c-ana-2", k_ana, "Otra vez: el pedido 100% perdido", k_t0 + 24h * 3);
    ana_second = escalate(later, store::EscalationReason::needs_approval, k_t0 + 24h * 3 + 1s);
    bo = escalate(message("whatsapp", "wamid.B1", "c-bo", k_bo, "pedido 1000 sin llegar", k_t0 + 2h),
                  store::EscalationReason::contract_failed, k_t0 + 2h);
    REQUIRE(store::add_note(db, bo, "ana", "Prometí un REEMBOLSO", k_t0 + 3h));
    mail = escalate(message("gmail", "<m1@example.com>", "t-1", "Ana.Perez@Example.com", "Hola", k_t0 + 4h),
                    store::EscalationReason::contract_failed, k_t0 + 4h);
    nobody = escalate(message("gmail", "<m2@example.com>", "t-2", "", "(undecodable)", k_t0 + 5h),
                      store::EscalationReason::contract_failed, k_t0 + 5h);
    REQUIRE(escalate(message("gmail", "<m3@example.com>", "t-3", "", "(undecodable)", k_t0 + 6h),
                     store::EscalationReason::contract_failed, k_t0 + 6h));
  }

  std::vector<std::int64_t> ids(const store::EscalationSearch& search) {
    auto rows = store::search_escalations(db, search);
    REQUIRE(rows);
    std::vector<std::int64_t> out;
    for (const auto& r : *rows) out.push_back(r.id);
    return out;
  }
};

}  // namespace

TEST_CASE("history: search by customer, text, note, reason, status and date, newest first", "[history]") {
  Fixture f;
  using V = std::vector<std::int64_t>;
  CHECK(f.ids({.customer = "34567"}) == V{f.ana_second, f.ana_first});
  CHECK(f.ids({.customer = "ana.perez@example.COM"}) == V{f.mail});
  CHECK(f.ids({.text = "factura"}) == V{f.ana_first});
  CHECK(f.ids({.text = "reembolso"}) == V{f.bo});  // in a note only
  // LIKE's wildcards in what staff typed match themselves.
  CHECK(f.ids({.text = "100%"}) == V{f.ana_second});
  CHECK(f.ids({.text = "pedido_1"}).empty());
  CHECK(f.ids({.customer = k_ana, .reason = store::EscalationReason::needs_approval}) == V{f.ana_second});
  CHECK(f.ids({.customer = k_ana, .status = store::EscalationStatus::resolved}) == V{f.ana_first});
  CHECK(f.ids({.customer = k_ana, .from = "2026-12-01"}) == V{f.ana_second});
  CHECK(f.ids({.customer = k_ana, .until = "2026-12-01"}) == V{f.ana_first});
  CHECK(f.ids({.text = "nothing like this"}).empty());
}

TEST_CASE("history: a search comes in pages that stay put", "[history]") {
  Fixture f;
  auto first = store::search_escalations(f.db, {.limit = 2});
  REQUIRE(first);
  REQUIRE(first->size() == 2);
  CHECK((*first)[0].created_at >= (*first)[1].created_at);
  auto next = store::search_escalations(f.db, {.before = first->back().id, .limit = 100});
  REQUIRE(next);
  CHECK(next->size() == 4);
  for (const auto& row : *next) {
    CHECK(row.created_at <= first->back().created_at);
    CHECK(row.id != (*first)[0].id);
    CHECK(row.id != (*first)[1].id);
  }
}

TEST_CASE("history: a customer's other cases carry their resolution", "[history]") {
  Fixture f;
  auto others = store::customer_escalations(f.db, f.ana_second, 50);
  REQUIRE(others);
  REQUIRE(others->size() == 1);
  CHECK((*others)[0].id == f.ana_first);
  CHECK((*others)[0].status == store::EscalationStatus::resolved);
  CHECK((*others)[0].resolution == "replied");
  CHECK((*others)[0].assignee == "luis");
  auto from_first = store::customer_escalations(f.db, f.ana_first, 50);
  REQUIRE(from_first);
  REQUIRE(from_first->size() == 1);
  CHECK((*from_first)[0].id == f.ana_second);
  auto alone = store::customer_escalations(f.db, f.bo, 50);
  REQUIRE(alone);
  CHECK(alone->empty());
  // No sender, no history: not every other undecodable email.
  auto nobody = store::customer_escalations(f.db, f.nobody, 50);
  REQUIRE(nobody);
  CHECK(nobody->empty());
  auto missing = store::customer_escalations(f.db, 999, 50);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().kind == store::ErrorKind::not_found);
}

TEST_CASE("history: a customer's messages across conversations, paged, with what was sent", "[history]") {
  Fixture f;
  auto page = store::customer_messages(f.db, f.ana_second, std::nullopt, 2);
  REQUIRE(page);
  REQUIRE(page->size() == 2);
  CHECK((*page)[0].message.text == "Otra vez: el pedido 100% perdido");
  CHECK((*page)[0].message.conversation_id == "c-ana-2");
  CHECK((*page)[0].escalation_id == f.ana_second);
  CHECK((*page)[1].message.id == f.ana_chat);
  CHECK_FALSE((*page)[1].escalation_id);
  CHECK((*page)[1].replies.empty());
  auto older = store::customer_messages(f.db, f.ana_second, (*page)[1].message.id, 2);
  REQUIRE(older);
  REQUIRE(older->size() == 1);
  CHECK((*older)[0].message.text == "Necesito la FACTURA de octubre");
  CHECK((*older)[0].escalation_id == f.ana_first);
  REQUIRE((*older)[0].replies.size() == 1);
  CHECK((*older)[0].replies[0].id == f.ana_reply);
  CHECK((*older)[0].replies[0].body == "Ya va.");
  auto done = store::customer_messages(f.db, f.ana_second, (*older)[0].message.id, 2);
  REQUIRE(done);
  CHECK(done->empty());
  auto nobody = store::customer_messages(f.db, f.nobody, std::nullopt, 10);
  REQUIRE(nobody);
  CHECK(nobody->empty());
}
