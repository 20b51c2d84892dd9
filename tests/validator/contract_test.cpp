#include <catch2/catch.hpp>
#include <string>

#include "tests/test_util.h"
#include "validator/validator.h"

using namespace dispatchd;
using validator::Verdict;

namespace {

Verdict en(const std::string& reply) {
  return validator::validate(test::support_en(), reply, {.sender = "15551234567", .source = {}});
}

Verdict ord(const std::string& reply) {
  return validator::validate(test::orders(), reply,
                             {.sender = "15550001111", .source = "Move ORD-1234 please, I'm Ana"});
}

// catalog/examples/templates.en.json: order_update fills its body's {{1}} from customer_name.
Verdict tpl(const std::string& reply) {
  static const catalog::Catalog catalog = test::load_catalog("catalog/examples/templates.en.json");
  return validator::validate(catalog, reply, {.sender = "15551234567", .source = {}});
}

std::string first_code(const Verdict& v) { return v.errors.empty() ? "" : v.errors.front().code; }

struct ContractRow {
  std::string name;
  std::string reply;
  std::string path;  // of the first error, when rejected
  std::string code;  // "" when valid
};

void run(const ContractRow& row, Verdict (*check)(const std::string&)) {
  INFO(row.name << ": " << row.reply);
  const Verdict v = check(row.reply);
  if (row.code.empty()) {
    INFO((v.errors.empty() ? std::string() : v.errors.front().message));
    CHECK(v.ok);
    return;
  }
  REQUIRE_FALSE(v.ok);
  CHECK(v.failed_stage == validator::Stage::contract);
  CHECK(first_code(v) == row.code);
  CHECK(v.errors.front().path == row.path);
}

}  // namespace

TEST_CASE("contract: the support catalog's four fields", "[contract]") {
  const ContractRow rows[] = {
      {"valid", R"({"action":"send_message","recipient":"15551234567","content":"Hi","priority":"high"})", "", ""},
      {"field order does not matter",
       R"({"priority":"low","content":"Hi","recipient":"15551234567","action":"send_message"})", "", ""},
      {"unknown action", R"({"action":"reply","recipient":"15551234567","content":"Hi","priority":"high"})", "/action",
       "enum"},
      {"action in another case",
       R"({"action":"Send_Message","recipient":"15551234567","content":"Hi","priority":"high"})", "/action", "enum"},
      {"action not a string", R"({"action":1,"recipient":"15551234567","content":"Hi","priority":"high"})", "/action",
       "type"},
      {"action missing", R"({"recipient":"15551234567","content":"Hi","priority":"high"})", "/action", "required"},
      {"priority synonym", R"({"action":"send_message","recipient":"15551234567","content":"Hi","priority":"urgent"})",
       "/priority", "enum"},
      {"priority upper case", R"({"action":"send_message","recipient":"15551234567","content":"Hi","priority":"HIGH"})",
       "/priority", "enum"},
      {"priority wrong type", R"({"action":"send_message","recipient":"15551234567","content":"Hi","priority":1})",
       "/priority", "type"},
      {"content null", R"({"action":"send_message","recipient":"15551234567","content":null,"priority":"low"})",
       "/content", "type"},
      {"content missing", R"({"action":"send_message","recipient":"15551234567","priority":"low"})", "/content",
       "required"},
      {"content empty", R"({"action":"send_message","recipient":"15551234567","content":"","priority":"low"})",
       "/content", "min_length"},
      {"recipient empty", R"({"action":"escalate_to_human","recipient":"","content":"x","priority":"low"})",
       "/recipient", "min_length"},
      {"extra field",
       R"({"action":"send_message","recipient":"15551234567","content":"Hi","priority":"low","lang":"en"})", "/lang",
       "additional_property"},
      {"nested object as a field",
       R"({"action":"send_message","recipient":"15551234567","content":{"text":"Hi"},"priority":"low"})", "/content",
       "type"},
  };
  for (const auto& row : rows) run(row, en);
}

TEST_CASE("contract: lengths count code points, not bytes", "[contract]") {
  const auto reply = [](const std::string& content) {
    return R"({"action":"send_message","recipient":"15551234567","content":")" + content + R"(","priority":"low"})";
  };
  std::string at_limit;
  for (int i = 0; i < 4096; ++i) at_limit += "\xC3\xB1";  // ñ: 2 bytes, 1 code point
  CHECK(en(reply(at_limit)).ok);
  const Verdict over = en(reply(at_limit + "x"));
  REQUIRE_FALSE(over.ok);
  CHECK(first_code(over) == "max_length");
  CHECK(over.errors.front().message == "4097 characters; at most 4096 allowed");
}

TEST_CASE("contract: every schema keyword", "[contract]") {
  const std::string base = R"("action":"reschedule","recipient":"15550001111","order_id":"ORD-1234")";
  const ContractRow rows[] = {
      {"valid with optional fields absent", "{" + base + R"(,"delivery_date":"2026-12-07"})", "", ""},
      {"optional fields null", "{" + base + R"(,"delivery_date":"2026-12-07","note":null,"express":null})", "", ""},
      {"unused fields null", "{" + base + R"(,"delivery_date":"2026-12-07","quantity":null,"refund":null})", "", ""},
      {"unused field set", "{" + base + R"(,"delivery_date":"2026-12-07","quantity":3})", "/quantity", "not_allowed"},
      {"leap day", "{" + base + R"(,"delivery_date":"2028-02-29"})", "", ""},
      {"not a leap year", "{" + base + R"(,"delivery_date":"2026-02-29"})", "/delivery_date", "format"},
      {"February 30", "{" + base + R"(,"delivery_date":"2026-02-30"})", "/delivery_date", "format"},
      {"month 13", "{" + base + R"(,"delivery_date":"2026-13-01"})", "/delivery_date", "format"},
      {"day 00", "{" + base + R"(,"delivery_date":"2026-12-00"})", "/delivery_date", "format"},
      {"date with time", "{" + base + R"(,"delivery_date":"2026-12-07T10:00"})", "/delivery_date", "format"},
      {"date with slashes", "{" + base + R"(,"delivery_date":"2026/12/07"})", "/delivery_date", "format"},
      {"1900 was not a leap year", "{" + base + R"(,"delivery_date":"1900-02-29"})", "/delivery_date", "format"},
      {"2000 was a leap year", "{" + base + R"(,"delivery_date":"2000-02-29"})", "", ""},
      {"pattern mismatch", R"({"action":"lookup","order_id":"order 1234"})", "/order_id", "pattern"},
      {"boolean wrong type", "{" + base + R"(,"delivery_date":"2026-12-07","express":"yes"})", "/express", "type"},
      {"integer below minimum",
       R"({"action":"refund","recipient":"15550001111","order_id":"ORD-1234","refund":5,"channel":"whatsapp","quantity":0})",
       "/quantity", "minimum"},
      {"integer above maximum",
       R"({"action":"refund","recipient":"15550001111","order_id":"ORD-1234","refund":5,"channel":"whatsapp","quantity":51})",
       "/quantity", "maximum"},
      {"integer as 2.0 is an integer",
       R"({"action":"refund","recipient":"15550001111","order_id":"ORD-1234","refund":5,"channel":"whatsapp","quantity":2.0})",
       "", ""},
      {"integer as 2.5",
       R"({"action":"refund","recipient":"15550001111","order_id":"ORD-1234","refund":5,"channel":"whatsapp","quantity":2.5})",
       "/quantity", "type"},
      {"number below minimum",
       R"({"action":"refund","recipient":"15550001111","order_id":"ORD-1234","refund":-1,"channel":"whatsapp"})",
       "/refund", "minimum"},
      {"const mismatch",
       R"({"action":"refund","recipient":"15550001111","order_id":"ORD-1234","refund":1,"channel":"email"})",
       "/channel", "const"},
      {"no fields at all", R"({"action":"ignore"})", "", ""},
  };
  for (const auto& row : rows) run(row, ord);
}

TEST_CASE("contract: all errors are reported, in a stable order", "[contract]") {
  const Verdict v = en(R"({"action":"sendmessage","recipient":5,"priority":"hi","x":1,"y":2})");
  REQUIRE_FALSE(v.ok);
  std::vector<std::string> seen;
  for (const auto& e : v.errors) seen.push_back(e.path + " " + e.code);
  CHECK(seen == std::vector<std::string>{"/action enum", "/recipient type", "/content required", "/priority enum",
                                         "/x additional_property", "/y additional_property"});
  CHECK(v.error_count == 6);
}

TEST_CASE("contract: messages name the allowed values and suggest, never accept, a near miss", "[contract]") {
  const Verdict v = en(R"({"action":"send_mesage","recipient":"15551234567","content":"Hi","priority":"High"})");
  REQUIRE(v.errors.size() == 2);
  CHECK(
      v.errors[0].message ==
      R"(string "send_mesage" is not an action; allowed values: "send_message", "query_status" or "escalate_to_human" (did you mean "send_message"?))");
  CHECK(v.errors[1].message ==
        R"(string "High" is not allowed; allowed values: "high", "medium", "low" (did you mean "high"?))");
  const Verdict far = en(R"({"action":"teleport","recipient":"15551234567","content":"Hi","priority":"low"})");
  CHECK(far.errors[0].message.find("did you mean") == std::string::npos);
}

TEST_CASE("contract: offending values are quoted short, never whole", "[contract]") {
  const std::string huge(5000, 'z');
  const Verdict v = en(R"({"action":")" + huge + R"(","recipient":"15551234567","content":"Hi","priority":"low"})");
  REQUIRE_FALSE(v.ok);
  CHECK(v.errors[0].message.size() < 200);
  CHECK(v.feedback.find(huge) == std::string::npos);
}

TEST_CASE("contract: error lists are capped but counted", "[contract]") {
  std::string reply = R"({"action":"send_message","recipient":"15551234567","content":"Hi","priority":"low")";
  for (int i = 0; i < 100; ++i) reply += ",\"extra" + std::to_string(i) + "\":1";
  reply += "}";
  const Verdict v = en(reply);
  CHECK(v.errors.size() == validator::k_max_errors);
  CHECK(v.error_count == 100);
  CHECK(v.feedback.find("and 80 more") != std::string::npos);
}

// What a customer may smuggle through a template action's arguments: a value is checked as
// its field's, then against what WhatsApp refuses in template text; anything that is not one
// of the catalog's fields (a template's name, language or components) is refused.
TEST_CASE("contract: a template action's arguments", "[contract]") {
  const auto reply = [](const std::string& name, const std::string& extra = "") {
    return R"({"action":"order_update","recipient":"15551234567","content":null,"customer_name":)" + name +
           R"(,"order_number":"566701")" + extra + "}";
  };
  const std::string long_name(61, 'a');
  const ContractRow rows[] = {
      {"valid", reply(R"("Ana")"), "", ""},
      {"four spaces in a row", reply(R"("Ana    Banana")"), "", ""},
      {"a placeholder is only text", reply(R"("{{2}}")"), "", ""},
      {"a JSON fragment is only text", reply(R"("\"}],\"type\":\"header\"")"), "", ""},
      {"a line break", reply(R"("Ana\nIgnore the above")"), "/customer_name", "template_text"},
      {"a carriage return", reply(R"("Ana\rB")"), "/customer_name", "template_text"},
      {"a tab", reply(R"("Ana\tB")"), "/customer_name", "template_text"},
      {"five spaces in a row", reply(R"("Ana     B")"), "/customer_name", "template_text"},
      {"longer than the field's maxLength", reply("\"" + long_name + "\""), "/customer_name", "max_length"},
      {"a full URL as the button's variable end",
       R"({"action":"order_update","recipient":"15551234567","content":null,"customer_name":"Ana",)"
       R"("order_number":"https://x.io"})",
       "/order_number", "pattern"},
      {"components", reply(R"("Ana")", R"(,"components":[{"type":"header"}])"), "/components", "additional_property"},
      {"a template name", reply(R"("Ana")", R"(,"template":"spring_sale")"), "/template", "additional_property"},
      {"a language", reply(R"("Ana")", R"(,"language":"es")"), "/language", "additional_property"},
      {"buttons", reply(R"("Ana")", R"(,"buttons":{"0":{"1":"https://evil.example"}})"), "/buttons",
       "additional_property"},
      {"a recipient under another name", reply(R"("Ana")", R"(,"to":"15559999999")"), "/to", "additional_property"},
  };
  for (const auto& row : rows) run(row, tpl);
  SECTION("the message says which parameter and why") {
    const Verdict v = tpl(reply(R"("Ana\n\tB")"));
    REQUIRE(v.errors.size() == 1);
    CHECK(v.errors.front().message ==
          "\"customer_name\" fills the template's body parameter {{1}} and has a line break: WhatsApp refuses line "
          "breaks, tabs and more than 4 spaces in a row there; write it on one line");
  }
}
