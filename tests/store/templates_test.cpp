// WhatsApp message templates in the store (migration 0030, store/templates.h): a refresh
// replaces the set, a webhook's status or category change is written at once with its audit
// event, and v_templates shows what staff read.
#include <catch2/catch.hpp>

#include "store/audit.h"
#include "store/templates.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;
using namespace std::chrono_literals;

namespace {

store::Template stored_template(std::string name, std::string language, store::TemplateStatus status) {
  store::Template t;
  t.template_id = "17" + std::to_string(name.size());
  t.name = std::move(name);
  t.language = std::move(language);
  t.status = status;
  t.category = store::TemplateCategory::utility;
  t.components = R"([{"type":"BODY","text":"Hola {{1}}"}])";
  t.parameters = R"([{"component":"body","name":"1"}])";
  return t;
}

long long template_count(store::Database& db, const std::string& sql) {
  auto n = test::query_int(db, sql);
  REQUIRE(n);
  return *n;
}

}  // namespace

TEST_CASE("templates: a refresh replaces the set and audits only a change") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  const std::vector<store::Template> first{stored_template("order_update", "es", store::TemplateStatus::approved),
                                           stored_template("order_update", "en_US", store::TemplateStatus::approved),
                                           stored_template("welcome", "es", store::TemplateStatus::pending)};
  auto replaced = store::replace_templates(db, "102290129340398", first, test::k_t0);
  REQUIRE(replaced);
  CHECK(replaced->added == 3);
  CHECK(template_count(db, "SELECT count(*) FROM v_templates WHERE waba_id = '102290129340398'") == 3);
  CHECK(template_count(db, "SELECT count(*) FROM v_audit WHERE event = 'templates_refreshed'") == 1);

  SECTION("the same set again changes nothing and audits nothing") {
    auto again = store::replace_templates(db, "102290129340398", first, test::k_t0 + 1h);
    REQUIRE(again);
    CHECK(again->added + again->changed + again->removed == 0);
    CHECK(template_count(db, "SELECT count(*) FROM v_audit WHERE event = 'templates_refreshed'") == 1);
  }
  SECTION("a changed template is updated and one Graph no longer lists is removed") {
    auto next = first;
    next[0].status = store::TemplateStatus::paused;
    next.pop_back();
    auto again = store::replace_templates(db, "102290129340398", next, test::k_t0 + 1h);
    REQUIRE(again);
    CHECK(again->changed == 1);
    CHECK(again->removed == 1);
    auto rows = store::list_templates(db);
    REQUIRE(rows);
    REQUIRE(rows->size() == 2);
    CHECK((*rows)[0].name == "order_update");
    CHECK((*rows)[0].language == "en_US");
    CHECK((*rows)[1].status == store::TemplateStatus::paused);
    CHECK(template_count(db, "SELECT count(*) FROM v_audit WHERE event = 'templates_refreshed'") == 2);
  }
}

TEST_CASE("templates: a status or category webhook changes the row at once, audited") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  REQUIRE(store::replace_templates(db, "1", {stored_template("order_update", "es", store::TemplateStatus::approved)},
                                   test::k_t0));
  auto paused = store::set_template_status(db, "order_update", "es", store::TemplateStatus::paused,
                                           R"({"event":"PAUSED","reason":"NONE"})", test::k_t0 + 1min);
  REQUIRE(paused);
  CHECK(*paused);
  CHECK(template_count(db, "SELECT count(*) FROM v_templates WHERE status = 'paused'") == 1);
  CHECK(template_count(db, "SELECT count(*) FROM v_audit WHERE event = 'template_status' AND message_id IS NULL") == 1);

  SECTION("the same status again, or an unknown template, writes nothing") {
    auto same = store::set_template_status(db, "order_update", "es", store::TemplateStatus::paused, "", test::k_t0);
    REQUIRE(same);
    CHECK_FALSE(*same);
    auto unknown = store::set_template_status(db, "nope", "es", store::TemplateStatus::paused, "", test::k_t0);
    REQUIRE(unknown);
    CHECK_FALSE(*unknown);
    CHECK(template_count(db, "SELECT count(*) FROM v_audit WHERE event = 'template_status'") == 1);
  }
  SECTION("a recategorised template follows") {
    auto changed =
        store::set_template_category(db, "order_update", "es", store::TemplateCategory::marketing, test::k_t0 + 2min);
    REQUIRE(changed);
    CHECK(*changed);
    CHECK(template_count(db, "SELECT count(*) FROM v_templates WHERE category = 'marketing'") == 1);
    CHECK(template_count(db, "SELECT count(*) FROM v_audit WHERE event = 'template_category'") == 1);
  }
  auto verified = store::verify_audit(db);
  REQUIRE(verified);
  CHECK_FALSE(verified->first_broken);
}

TEST_CASE("templates: every status, category and format has one stored name") {
  for (const auto& [e, name] : store::SqlNames<store::TemplateStatus>::table)
    CHECK(store::from_sql<store::TemplateStatus>(name) == e);
  for (const auto& [e, name] : store::SqlNames<store::TemplateCategory>::table)
    CHECK(store::from_sql<store::TemplateCategory>(name) == e);
  CHECK(store::to_sql(store::ParameterFormat::named) == "named");
}
