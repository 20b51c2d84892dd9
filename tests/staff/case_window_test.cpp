// What the desk says about reaching the customer (staff/case_window.h): the channel's reply
// window read from the store, the catalog's template actions with their stored templates, the
// case's JSON, and the decisions refusing free-form text while the window is closed.
#include <catch2/catch.hpp>

#include "staff/case_window.h"
#include "staff/decisions.h"
#include "staff/json.h"
#include "store/outbox.h"
#include "store/queue.h"
#include "store/views.h"
#include "tests/staff/escalation_fixture.h"
#include "tests/test_util.h"

namespace staff = dispatchd::staff;
namespace store = dispatchd::store;
namespace test = dispatchd::test;
using namespace std::chrono_literals;

namespace {

// A window of one day from the customer's last message, closed when they never wrote: the
// shape of a channel's rule, not WhatsApp's own (tested with its connector).
dispatchd::ReplyWindow day_window(std::optional<std::chrono::sys_seconds> last, std::chrono::sys_seconds now) {
  if (!last) return {false, std::nullopt};
  return {now < *last + 24h, *last + 24h};
}

dispatchd::WindowRule day_rule_for(std::string_view channel) { return channel == "whatsapp" ? &day_window : nullptr; }

const dispatchd::catalog::Catalog& templates_en() {
  static const auto catalog = test::load_catalog("catalog/examples/templates.en.json");
  return catalog;
}

store::Template order_update(store::TemplateStatus status) {
  store::Template t;
  t.template_id = "1740";
  t.name = "order_update";
  t.language = "en_US";
  t.status = status;
  t.category = store::TemplateCategory::utility;
  t.components = R"([{"type":"BODY","text":"Hi {{1}}, order {{2}} is on its way."}])";
  t.parameters = R"([{"component":"body","name":"1"},{"component":"body","name":"2"}])";
  return t;
}

}  // namespace

TEST_CASE("case window: the window from the customer's last message, by the channel's rule", "[staff][window]") {
  test::EscalationFixture f;  // the customer wrote at k_t0
  struct Row {
    const char* what;
    std::chrono::seconds after;
    bool has_rule;
    std::optional<bool> open;  // nullopt: no window
  };
  const Row rows[] = {
      {"an hour later: open", 1h, true, true},
      {"a second before the day ends: open", 24h - 1s, true, true},
      {"at the end of the day: closed", 24h, true, false},
      {"25 hours later: closed", 25h, true, false},
      {"a channel without a rule: no window", 25h, false, std::nullopt},
  };
  for (const auto& row : rows) {
    INFO(row.what);
    auto reach = staff::case_window(f.db, &templates_en(), row.has_rule ? &day_window : nullptr, "whatsapp",
                                    test::k_customer_wa, test::k_t0 + row.after);
    REQUIRE(reach);
    REQUIRE(reach->window.has_value() == row.open.has_value());
    if (!row.open) {
      CHECK(reach->templates.empty());  // no window, nothing to offer instead
      continue;
    }
    CHECK(reach->window->open == *row.open);
    CHECK(reach->window->closes_at == test::k_t0 + 24h);
  }
  auto stranger = staff::case_window(f.db, nullptr, &day_window, "whatsapp", "15550000000", test::k_t0);
  REQUIRE(stranger);
  CHECK_FALSE(stranger->window->open);
  CHECK_FALSE(stranger->window->closes_at);
}

TEST_CASE("case window: each template action with its stored template, approved or not", "[staff][window]") {
  test::EscalationFixture f;
  const auto now = test::k_t0 + 25h;
  const auto offer = [&] {
    auto reach = staff::case_window(f.db, &templates_en(), &day_window, "whatsapp", test::k_customer_wa, now);
    REQUIRE(reach);
    REQUIRE(reach->templates.size() == 1);
    return reach->templates.front();
  };
  auto missing = offer();
  CHECK(missing.action == "order_update");
  CHECK(missing.name == "order_update");
  CHECK(missing.language == "en_US");
  CHECK_FALSE(missing.status);
  CHECK_FALSE(missing.approved());
  CHECK(missing.components == "[]");
  REQUIRE(missing.parameters.size() == 4);
  CHECK(missing.parameters[0].field == "order_number");  // the header's {{1}}

  REQUIRE(store::replace_templates(f.db, "waba", {order_update(store::TemplateStatus::approved)}, test::k_t0));
  auto approved = offer();
  CHECK(approved.approved());
  CHECK(approved.category == store::TemplateCategory::utility);
  CHECK(approved.components == order_update(store::TemplateStatus::approved).components);

  REQUIRE(store::set_template_status(f.db, "order_update", "en_US", store::TemplateStatus::paused, "", test::k_t0));
  auto paused = offer();
  CHECK(paused.status == store::TemplateStatus::paused);
  CHECK_FALSE(paused.approved());

  auto without_catalog = staff::case_window(f.db, nullptr, &day_window, "whatsapp", test::k_customer_wa, now);
  REQUIRE(without_catalog);
  CHECK(without_catalog->templates.empty());
}

TEST_CASE("case window: the case's JSON says the window and offers the templates", "[staff][window]") {
  test::EscalationFixture f;
  REQUIRE(store::replace_templates(f.db, "waba", {order_update(store::TemplateStatus::approved)}, test::k_t0));
  auto item = store::show_escalation(f.db, f.escalation);
  REQUIRE(item);
  auto reach =
      staff::case_window(f.db, &templates_en(), &day_window, "whatsapp", test::k_customer_wa, test::k_t0 + 25h);
  REQUIRE(reach);
  const auto doc = test::parse_json(staff::case_json(*item, std::nullopt, &*reach));
  REQUIRE(doc["window"].IsObject());
  CHECK_FALSE(doc["window"]["open"].GetBool());
  CHECK(std::string(doc["window"]["closes_at"].GetString()) == store::format_time(test::k_t0 + 24h));
  const auto& offer = doc["templates"][0];
  CHECK(std::string(offer["action"].GetString()) == "order_update");
  CHECK(std::string(offer["template"].GetString()) == "order_update");
  CHECK(std::string(offer["status"].GetString()) == "approved");
  CHECK(std::string(offer["category"].GetString()) == "utility");
  CHECK(offer["approved"].GetBool());
  CHECK(std::string(offer["components"][0]["text"].GetString()) == "Hi {{1}}, order {{2}} is on its way.");
  CHECK(std::string(offer["parameters"][3]["part"].GetString()) == "button");
  CHECK(offer["parameters"][3]["button"].GetInt() == 0);
  CHECK(std::string(offer["parameters"][3]["field"].GetString()) == "order_number");

  const staff::CaseWindow gmail{};
  const auto none = test::parse_json(staff::case_json(*item, std::nullopt, &gmail));
  CHECK(none["window"].IsNull());
  CHECK(none["templates"].Empty());
  CHECK_FALSE(test::parse_json(staff::case_json(*item)).HasMember("window"));
}

TEST_CASE("case window: while it is closed, free-form decisions are refused and a template action goes",
          "[staff][window]") {
  const auto closed = test::k_t0 + 25h;
  SECTION("a staff reply, typed or saved") {
    test::EscalationFixture f;
    auto refused = staff::reply(f.db, f.escalation, "ana", "Hello again", closed, &day_rule_for);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().kind == staff::RefusalKind::invalid);
    CHECK(refused.error().message.find("reply window is closed (it closed at " + store::format_time(test::k_t0 + 24h) +
                                       ")") != std::string::npos);
    CHECK(f.count("SELECT count(*) FROM actions WHERE action = 'staff_reply'") == 0);
    CHECK(staff::reply(f.db, f.escalation, "ana", "Hello again", test::k_t0 + 1h, &day_rule_for));
  }
  SECTION("the free-form proposal, approved as it is") {
    test::EscalationFixture f;
    auto refused = staff::approve(f.db, test::support_en(), f.escalation, "ana", closed, &day_rule_for);
    REQUIRE_FALSE(refused);
    REQUIRE(refused.error().verdict);
    CHECK(refused.error().verdict->errors.front().code == "window_closed");
    CHECK(f.count("SELECT count(*) FROM escalations WHERE status = 'open'") == 1);
  }
  SECTION("an edit to a template action") {
    test::EscalationFixture f;
    const std::string free_form = R"({"action":"send_message","recipient":"15551234567","content":"Hi",)"
                                  R"("customer_name":null,"order_number":null})";
    auto refused = staff::edit(f.db, templates_en(), f.escalation, "ana", free_form, closed, &day_rule_for);
    REQUIRE_FALSE(refused);
    REQUIRE(refused.error().verdict);
    CHECK(refused.error().verdict->errors.front().code == "window_closed");
    const std::string templated = R"({"action":"order_update","recipient":"15551234567","content":null,)"
                                  R"("customer_name":"Ana","order_number":"566701"})";
    auto sent = staff::edit(f.db, templates_en(), f.escalation, "ana", templated, closed, &day_rule_for);
    REQUIRE(sent);
    CHECK(f.count("SELECT count(*) FROM actions WHERE action = 'order_update' AND status = 'approved'"
                  " AND template_message IS NOT NULL") == 1);
  }
}
