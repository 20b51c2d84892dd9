#include <catch2/catch.hpp>
#include <string>

#include "staff/saved_replies.h"
#include "store/audit.h"
#include "store/saved_replies.h"
#include "tests/staff/escalation_fixture.h"

using namespace dispatchd;

TEST_CASE("saved replies: filling placeholders, as a table", "[saved_replies]") {
  const staff::CaseFields fields{"15551234567", "42", "ana", "whatsapp"};
  struct Row {
    const char* text;
    const char* filled;       // nullptr: refused
    const char* placeholder;  // the unknown name a refusal names ("" for a brace)
  };
  const Row rows[] = {
      {"Hello", "Hello", ""},
      {"", "", ""},
      {"Hi {customer}, case {escalation} is mine ({staff}) on {channel}.",
       "Hi 15551234567, case 42 is mine (ana) on whatsapp.", ""},
      {"{staff}{staff}", "anaana", ""},
      {"{{customer}}", "{customer}", ""},
      {"a {{ b }} c", "a { b } c", ""},
      {"{{{staff}}}", "{ana}", ""},
      {"Grüße, {staff} — 👋", "Grüße, ana — 👋", ""},
      {"{Customer}", nullptr, "Customer"},
      {"{name}", nullptr, "name"},
      {"{}", nullptr, ""},
      {"{ customer }", nullptr, " customer "},
      {"{café}", nullptr, "café"},
      {"open {customer", nullptr, ""},
      {"close }", nullptr, ""},
      {"{cust{omer}", nullptr, ""},
      {"}{", nullptr, ""},
  };
  for (const auto& row : rows) {
    INFO(row.text);
    const auto filled = staff::fill(row.text, fields);
    if (row.filled != nullptr) {
      REQUIRE(filled);
      CHECK(*filled == row.filled);
    } else {
      REQUIRE_FALSE(filled);
      CHECK(filled.error().placeholder == row.placeholder);
      CHECK_FALSE(filled.error().message.empty());
    }
  }
  // A value is put in as it is: braces in it are not read again.
  CHECK(staff::fill("{customer}", {"{staff}", "", "", ""}).value() == "{staff}");
}

TEST_CASE("saved replies: added, changed and removed, each audited, and the chain verifies", "[saved_replies]") {
  test::EscalationFixture f;
  auto& db = f.db;
  const auto id = staff::add_saved_reply(db, "refund", "Hi {customer}, refund sent.", "ops", test::k_t0);
  REQUIRE(id);
  CHECK(staff::add_saved_reply(db, "refund", "again", "ops", test::k_t0).error().kind == staff::RefusalKind::state);
  const auto unknown = staff::add_saved_reply(db, "x", "Hi {name}", "ops", test::k_t0);
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().kind == staff::RefusalKind::invalid);
  CHECK(unknown.error().message.find("{name}") != std::string::npos);
  CHECK(staff::add_saved_reply(db, "", "text", "ops", test::k_t0).error().kind == staff::RefusalKind::invalid);
  CHECK(staff::add_saved_reply(db, "empty", "", "ops", test::k_t0).error().kind == staff::RefusalKind::invalid);
  CHECK(staff::add_saved_reply(db, "long", std::string(staff::k_max_reply_code_points + 1, 'a'), "ops", test::k_t0)
            .error()
            .kind == staff::RefusalKind::invalid);

  REQUIRE(staff::change_saved_reply(db, *id, "Hello {staff}", "ops", test::k_t0 + std::chrono::hours(1)));
  CHECK(staff::change_saved_reply(db, *id, "{bad}", "ops", test::k_t0).error().kind == staff::RefusalKind::invalid);
  CHECK(staff::change_saved_reply(db, 999, "ok", "ops", test::k_t0).error().kind == staff::RefusalKind::not_found);
  const auto found = store::find_saved_reply(db, *id);
  REQUIRE(found);
  CHECK(found->text == "Hello {staff}");
  CHECK(found->created_by == "ops");
  CHECK(found->updated_at != found->created_at);

  const auto filled = staff::filled_replies(db, f.escalation, "ana");
  REQUIRE(filled);
  REQUIRE(filled->size() == 1);
  CHECK(filled->at(0).filled == "Hello ana");

  REQUIRE(staff::remove_saved_reply(db, *id, "ops", test::k_t0));
  CHECK(staff::remove_saved_reply(db, *id, "ops", test::k_t0).error().kind == staff::RefusalKind::not_found);
  CHECK(store::list_saved_replies(db).value().empty());
  CHECK(store::find_saved_reply(db, *id).error().kind == store::ErrorKind::not_found);
  // The name is free again once removed.
  REQUIRE(staff::add_saved_reply(db, "refund", "Hi again", "ops", test::k_t0));

  CHECK(f.count("SELECT count(*) FROM v_audit WHERE event = 'saved_reply_added' AND message_id IS NULL"
                " AND actor = 'ops'") == 2);
  CHECK(f.count("SELECT count(*) FROM v_audit WHERE event = 'saved_reply_changed'") == 1);
  CHECK(f.count("SELECT count(*) FROM v_audit WHERE event = 'saved_reply_removed'") == 1);
  const auto check = store::verify_audit(db);
  REQUIRE(check);
  CHECK_FALSE(check->first_broken);
}

TEST_CASE("saved replies: a saved reply is sent filled, as any staff reply, through its checks", "[saved_replies]") {
  test::EscalationFixture f;
  const auto id =
      staff::add_saved_reply(f.db, "thanks", "Thanks {customer}, {staff} here ({escalation}).", "ops", test::k_t0);
  REQUIRE(id);
  SECTION("sent") {
    const auto action = staff::reply_saved(f.db, f.escalation, "ana", *id, test::k_t0, nullptr);
    REQUIRE(action);
    CHECK(f.count("SELECT count(*) FROM v_actions WHERE action = 'staff_reply' AND body = "
                  "'Thanks 15551234567, ana here (" +
                  std::to_string(f.escalation) + ").'") == 1);
    CHECK(f.count("SELECT count(*) FROM v_escalations WHERE status = 'resolved'") == 1);
  }
  SECTION("a filled text over the cap is refused, and nothing is sent") {
    // At the cap as saved; {customer} makes it longer when filled.
    const std::string text = std::string(staff::k_max_reply_code_points - 10, 'a') + "{customer}";
    const auto long_id = staff::add_saved_reply(f.db, "long", text, "ops", test::k_t0);
    REQUIRE(long_id);
    const auto refused = staff::reply_saved(f.db, f.escalation, "ana", *long_id, test::k_t0, nullptr);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().kind == staff::RefusalKind::invalid);
    CHECK(f.count("SELECT count(*) FROM v_actions WHERE action = 'staff_reply'") == 0);
    CHECK(f.count("SELECT count(*) FROM v_escalations WHERE status = 'open'") == 1);
  }
  SECTION("no such saved reply") {
    CHECK(staff::reply_saved(f.db, f.escalation, "ana", 999, test::k_t0, nullptr).error().kind ==
          staff::RefusalKind::not_found);
  }
}
