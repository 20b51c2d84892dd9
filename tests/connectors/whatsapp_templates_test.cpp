// The template side of the WhatsApp connector, without I/O (connectors/whatsapp/templates.h):
// the list request, the pages Graph answers, the parameters of a template's components and
// the two template webhooks. The payloads follow Meta's reference examples ("WhatsApp
// Business Account Message Templates", "message_template_status_update webhook reference",
// "template_category_update webhook reference").
#include <catch2/catch.hpp>

#include "connectors/whatsapp/templates.h"
#include "connectors/whatsapp/webhook.h"

using namespace dispatchd;
using namespace dispatchd::whatsapp;
using namespace std::chrono_literals;

namespace {

const GraphAccount k_template_account{"https://graph.facebook.com/v21.0/", "109876543210001", "EAAGtoken123"};

// Meta's sample response, one template, with a second page to come.
constexpr std::string_view k_sample_page = R"({"data":[{"name":"order_delivery_update","parameter_format":"POSITIONAL",
 "components":[{"type":"HEADER","format":"LOCATION"},
  {"type":"BODY","text":"Good news {{1}}! Your order #{{2}} is on its way to the location above.",
   "example":{"body_text":[["Mark","566701"]]}},
  {"type":"FOOTER","text":"To stop receiving delivery updates, tap the button below."},
  {"type":"BUTTONS","buttons":[{"type":"QUICK_REPLY","text":"Stop"},
   {"type":"URL","text":"Track","url":"https://example.com/track/{{1}}"}]}],
 "language":"en_US","status":"APPROVED","category":"UTILITY","id":"1473688840035974"}],
 "paging":{"cursors":{"before":"MAZDZD","after":"MjQZD"},"next":"https://graph.facebook.com/v21.0/102290129340398/message_templates?after=MjQZD"}})";

std::string status_webhook(const std::string& value) {
  return R"({"object":"whatsapp_business_account","entry":[{"id":"102290129340398","time":1751247548,"changes":[{"value":)" +
         value + R"(,"field":"message_template_status_update"}]}]})";
}

std::string category_webhook(const std::string& value) {
  return R"({"object":"whatsapp_business_account","entry":[{"id":"102290129340398","time":1751247548,"changes":[{"value":)" +
         value + R"(,"field":"template_category_update"}]}]})";
}

}  // namespace

TEST_CASE("templates: the list request asks for the documented fields, a page after a cursor") {
  auto first = build_template_list(k_template_account, "102290129340398");
  REQUIRE(first);
  CHECK(first->method == "GET");
  CHECK(first->url ==
        "https://graph.facebook.com/v21.0/102290129340398/message_templates"
        "?fields=name%2Clanguage%2Cstatus%2Ccategory%2Cparameter_format%2Ccomponents%2Cid&limit=100");
  auto next = build_template_list(k_template_account, "102290129340398", "MjQZD");
  REQUIRE(next);
  CHECK(next->url.ends_with("&limit=100&after=MjQZD"));
  CHECK_FALSE(build_template_list(k_template_account, "12ab"));
  CHECK_FALSE(build_template_list({"ftp://x", "1", "t"}, "1"));
  CHECK_FALSE(build_template_list({"https://x", "1", "has space"}, "1"));
}

TEST_CASE("templates: Meta's sample page is read with its parameters and the next cursor") {
  auto page = read_template_page(200, k_sample_page);
  REQUIRE(page);
  REQUIRE(page->templates.size() == 1);
  const auto& t = page->templates[0];
  CHECK(t.name == "order_delivery_update");
  CHECK(t.language == "en_US");
  CHECK(t.template_id == "1473688840035974");
  CHECK(t.status == store::TemplateStatus::approved);
  CHECK(t.category == store::TemplateCategory::utility);
  CHECK(t.parameter_format == store::ParameterFormat::positional);
  CHECK(t.components.starts_with(R"([{"type":"HEADER","format":"LOCATION"})"));
  CHECK(t.parameters == R"([{"component":"body","name":"1"},{"component":"body","name":"2"},)"
                        R"({"component":"button","index":1,"name":"1"}])");
  CHECK(page->after == "MjQZD");
  CHECK(page->skipped.empty());
}

TEST_CASE("templates: pages and errors, one row each") {
  struct Row {
    const char* what;
    int status;
    std::string body;
    bool ok;
    ErrorClass kind;  // when not ok
  };
  const Row rows[] = {
      {"the last page has no next", 200, R"({"data":[],"paging":{"cursors":{"before":"a","after":"b"}}})", true,
       ErrorClass::permanent},
      {"no paging at all", 200, R"({"data":[]})", true, ErrorClass::permanent},
      {"not JSON", 200, "<html>", false, ErrorClass::permanent},
      {"no data array", 200, R"({"data":{}})", false, ErrorClass::permanent},
      {"a next without a cursor", 200, R"({"data":[],"paging":{"next":"https://x"}})", false, ErrorClass::permanent},
      {"429", 429, R"({"error":{"message":"(#4) Application request limit reached","type":"OAuthException","code":4}})",
       false, ErrorClass::retry},
      {"503 without a body", 503, "", false, ErrorClass::retry},
      {"an expired token", 401, R"({"error":{"message":"Session has expired","type":"OAuthException","code":190}})",
       false, ErrorClass::auth},
      {"an unknown account", 400, R"({"error":{"message":"Unsupported get request","code":100}})", false,
       ErrorClass::permanent},
  };
  for (const auto& row : rows) {
    INFO(row.what);
    auto page = read_template_page(row.status, row.body);
    CHECK(page.has_value() == row.ok);
    if (!page) {
      CHECK(page.error().kind == row.kind);
      CHECK(page.error().retryable() == (row.kind == ErrorClass::retry));
      CHECK_FALSE(page.error().message.empty());
    } else {
      CHECK_FALSE(page->after);
    }
  }
}

TEST_CASE("templates: an element without its name, language, status or id is skipped, the rest kept") {
  auto page = read_template_page(200, R"({"data":[{"name":"a","language":"es","status":"PAUSED","id":"1"},
    {"language":"es","status":"APPROVED","id":"2"},{"name":"c","language":"es","status":"APPROVED"},
    {"name":"d","language":"es","status":"SOMETHING_NEW","id":4,"category":"NEW","parameter_format":"NAMED",
     "components":[{"type":"BODY","text":"Hi {{first_name}}, {{ not one }} {{Bad}}"}]}, 7]})");
  REQUIRE(page);
  REQUIRE(page->templates.size() == 2);
  CHECK(page->templates[0].status == store::TemplateStatus::paused);
  CHECK(page->templates[0].components == "[]");
  CHECK(page->templates[1].template_id == "4");
  CHECK(page->templates[1].status == store::TemplateStatus::unknown);
  CHECK(page->templates[1].category == store::TemplateCategory::unknown);
  CHECK(page->templates[1].parameter_format == store::ParameterFormat::named);
  CHECK(page->templates[1].parameters == R"([{"component":"body","name":"first_name"}])");
  REQUIRE(page->skipped.size() == 3);
  CHECK(page->skipped[0].pointer == "/data/1");
  CHECK(page->skipped[2].pointer == "/data/4");
}

TEST_CASE("templates: parameters of a header, a body and buttons") {
  CHECK(template_parameters(R"([{"type":"HEADER","format":"TEXT","text":"Order {{order}}"},
    {"type":"BODY","text":"{{name}}: {{1}}{{"},{"type":"BUTTONS","buttons":[{"type":"URL","url":"https://x/{{id}}"}]}])") ==
        R"([{"component":"header","name":"order"},{"component":"body","name":"name"},)"
        R"({"component":"body","name":"1"},{"component":"button","index":0,"name":"id"}])");
  CHECK(template_parameters("not json") == "[]");
  CHECK(template_parameters("[]") == "[]");
}

TEST_CASE("templates: status events map to statuses, one row each") {
  const std::pair<const char*, std::optional<store::TemplateStatus>> rows[] = {
      {"APPROVED", store::TemplateStatus::approved},
      {"PAUSED", store::TemplateStatus::paused},
      {"DISABLED", store::TemplateStatus::disabled},
      {"REJECTED", store::TemplateStatus::rejected},
      {"REINSTATED", store::TemplateStatus::approved},
      {"PENDING_DELETION", store::TemplateStatus::pending_deletion},
      {"FLAGGED", std::nullopt},
      {"LOCKED", std::nullopt},
      {"SOMETHING_NEW", std::nullopt},
  };
  for (const auto& [event, status] : rows) {
    INFO(event);
    CHECK(status_of_event(event) == status);
  }
}

TEST_CASE("templates: Meta's status webhook examples are read") {
  auto approved = parse_webhook(status_webhook(R"({"event":"APPROVED","message_template_id":1689556908129832,
    "message_template_name":"order_confirmation","message_template_language":"en-US","reason":"NONE",
    "message_template_category":"UTILITY"})"),
                                "109876543210001");
  REQUIRE(approved);
  REQUIRE(approved->templates.size() == 1);
  const auto& e = approved->templates[0];
  CHECK(e.kind == TemplateEvent::Kind::status);
  CHECK(e.waba_id == "102290129340398");
  CHECK(e.template_id == "1689556908129832");
  CHECK(e.name == "order_confirmation");
  CHECK(e.language == "en-US");
  CHECK(e.status == store::TemplateStatus::approved);
  CHECK(e.reason == "NONE");
  CHECK(approved->other_fields.empty());

  auto paused = parse_webhook(status_webhook(R"({"event":"PAUSED","message_template_id":1,
    "message_template_name":"a","message_template_language":"es","reason":null,
    "other_info":{"title":"FIRST_PAUSE","description":"paused"}})"),
                              "109876543210001");
  REQUIRE(paused);
  REQUIRE(paused->templates.size() == 1);
  CHECK(paused->templates[0].status == store::TemplateStatus::paused);
  CHECK(paused->templates[0].reason.empty());
}

TEST_CASE("templates: Meta's category webhook examples are read, an impending one marked") {
  auto done = parse_webhook(category_webhook(R"({"message_template_id":12345678,"message_template_name":
    "my_message_template","message_template_language":"en-US","previous_category":"UTILITY","new_category":"MARKETING"})"),
                            "1");
  REQUIRE(done);
  REQUIRE(done->templates.size() == 1);
  CHECK(done->templates[0].kind == TemplateEvent::Kind::category);
  CHECK(done->templates[0].category == store::TemplateCategory::marketing);
  CHECK_FALSE(done->templates[0].impending);
  auto impending = parse_webhook(category_webhook(R"({"message_template_id":1,"message_template_name":"a",
    "message_template_language":"es","correct_category":"MARKETING","new_category":"UTILITY",
    "category_update_timestamp":1760711433})"),
                                 "1");
  REQUIRE(impending);
  REQUIRE(impending->templates.size() == 1);
  CHECK(impending->templates[0].impending);
}

TEST_CASE("templates: a template change without what it needs is skipped, the envelope kept") {
  const std::string rows[] = {
      status_webhook(R"({"event":"PAUSED","message_template_language":"es"})"),
      status_webhook(R"({"message_template_name":"a","message_template_language":"es"})"),
      status_webhook(R"({"event":7,"message_template_name":"a","message_template_language":"es"})"),
      category_webhook(R"({"message_template_name":"a","message_template_language":"es"})"),
  };
  for (const auto& body : rows) {
    INFO(body);
    auto parsed = parse_webhook(body, "1");
    REQUIRE(parsed);
    CHECK(parsed->templates.empty());
    REQUIRE(parsed->skipped.size() == 1);
    CHECK(parsed->skipped[0].pointer == "/entry/0/changes/0/value");
  }
}

TEST_CASE("templates: a failed refresh is tried again soon, never later than the period") {
  const std::pair<int, std::chrono::milliseconds> rows[] = {
      {0, 60min}, {1, 5s}, {2, 10s}, {3, 20s}, {10, 2560s}, {11, 60min}, {1000, 60min},
  };
  for (const auto& [failures, delay] : rows) {
    INFO(failures);
    CHECK(template_refresh_delay(failures, 60min) == delay);
  }
  CHECK(template_refresh_delay(3, 1min) == 20s);
  CHECK(template_refresh_delay(5, 1min) == 1min);
}
