// Hostile input: every case must be refused quickly with a clear code, never crash or hang.
// The sanitizer build runs these too.
#include <catch2/catch.hpp>
#include <string>

#include "tests/test_util.h"
#include "validator/validator.h"

using namespace dispatchd;

namespace {

validator::Verdict check(const std::string& reply, validator::Limits limits = {}) {
  return validator::validate(test::support_en(), reply, {.sender = "15551234567", .source = {}}, limits);
}

std::string code(const validator::Verdict& v) { return v.ok ? "ok" : v.errors.front().code; }

const std::string k_good = R"({"action":"send_message","recipient":"15551234567","content":"X","priority":"low"})";

}  // namespace

TEST_CASE("hostile: a 3 MB reply is refused before any scanning", "[hostile]") {
  std::string reply = R"({"action":"send_message","recipient":"15551234567","content":")";
  reply += std::string(3 * 1024 * 1024, 'a');
  reply += R"(","priority":"low"})";
  const auto v = check(reply);
  CHECK(code(v) == "too_large");
  CHECK(v.failed_stage == validator::Stage::extract);
}

TEST_CASE("hostile: 100k-deep nesting is refused without recursion", "[hostile]") {
  const std::string arrays = std::string(100000, '[') + std::string(100000, ']');
  const std::string objects = [] {
    std::string s;
    for (int i = 0; i < 100000; ++i) s += "{\"a\":";
    s += "1";
    s += std::string(100000, '}');
    return s;
  }();
  CHECK(code(check(arrays)) == "too_large");  // the default 64 KiB limit comes first
  validator::Limits roomy;
  roomy.max_reply_bytes = 8 * 1024 * 1024;
  CHECK(code(check(arrays, roomy)) == "too_deep");
  CHECK(code(check(objects, roomy)) == "too_deep");
  CHECK(code(check(std::string(100000, '['), roomy)) == "too_deep");  // deep and unclosed
  roomy.max_depth = 200000;                                           // even when allowed this deep,
  CHECK(code(check(arrays, roomy)) == "not_object");                  // nothing recurses
  CHECK(code(check(objects, roomy)) == "required");                   // no action field at the top
}

TEST_CASE("hostile: invalid UTF-8 anywhere is refused", "[hostile]") {
  for (const std::string bad : {"\xFF", "\xC3", "\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\x80"}) {
    std::string reply = k_good;
    reply.replace(reply.find("\"X\"") + 1, 1, bad);
    CAPTURE(reply);
    CHECK(code(check(reply)) == "invalid_utf8");
    CHECK(code(check(bad + k_good)) == "invalid_utf8");
  }
}

TEST_CASE("hostile: NUL bytes and control characters", "[hostile]") {
  const std::string with_nul = std::string(R"({"action":"send_message","recipient":"15551234567","content":"a)") +
                               '\0' + R"(b","priority":"low"})";
  CHECK_FALSE(check(with_nul).ok);  // a raw control character is not JSON
  CHECK(check(R"({"action":"send_message","recipient":"15551234567","content":"a\u0000b","priority":"low"})").ok);
}

TEST_CASE("hostile: a raw control character is refused wherever it sits in a long string", "[hostile]") {
  // RapidJSON 1.1.0's SSE2 string scan let 0x1A..0x1F through past the first 16-byte
  // boundary; every position and every control character must be refused the same way.
  const std::string content(48, 'x');
  for (int c = 0x01; c < 0x20; ++c) {
    for (std::size_t at = 0; at < content.size(); at += 5) {
      std::string text = content;
      text[at] = static_cast<char>(c);
      const auto v =
          check(R"({"action":"send_message","recipient":"15551234567","content":")" + text + R"(","priority":"low"})");
      CAPTURE(c, at);
      CHECK(code(v) == "syntax");
      CHECK(v.failed_stage == validator::Stage::parse);
    }
  }
}

TEST_CASE("hostile: many keys, long keys, and long strings stay bounded", "[hostile]") {
  std::string many = R"({"action":"send_message","recipient":"15551234567","content":"x","priority":"low")";
  for (int i = 0; many.size() < 60000; ++i) many += ",\"k" + std::to_string(i) + "\":0";
  many += "}";
  const auto v = check(many);
  CHECK(code(v) == "additional_property");
  CHECK(v.errors.size() == validator::k_max_errors);
  CHECK(v.feedback.size() < 8000);

  const std::string long_key = "{\"" + std::string(60000, 'k') + "\":1}";
  const auto lk = check(long_key);
  REQUIRE_FALSE(lk.ok);
  for (const auto& e : lk.errors) CHECK(e.message.size() < 400);
}

TEST_CASE("hostile: fence and bracket floods", "[hostile]") {
  std::string fences;
  while (fences.size() < 60000) fences += "```\n";
  CHECK_FALSE(check(fences).ok);
  std::string braces;
  while (braces.size() < 60000) braces += "{}";
  CHECK(code(check(braces)) == "ambiguous");
  std::string prose_braces;
  while (prose_braces.size() < 60000) prose_braces += "{x} ";
  CHECK(code(check(prose_braces)) == "no_json");
  CHECK(code(check(std::string(60000, '"'))) == "no_json");
}

TEST_CASE("hostile: an object closed early and then continued is never accepted", "[hostile]") {
  // The first `}` is not where the model's object ends: what follows is the rest of it, and
  // accepting the first part would act on a fragment (here, the wrong priority).
  const std::string unclosed = k_good.substr(0, k_good.size() - 1);
  const std::pair<std::string, std::string> rows[] = {
      {k_good + R"(, "priority": "high"})", "ambiguous"},
      {k_good + R"( "priority": "high"})", "ambiguous"},
      {k_good + ",\n\"priority\":\"high\"", "ambiguous"},
      {k_good + "}", "ambiguous"},
      {k_good + "]", "ambiguous"},
      {k_good + "}\n\nDone.", "ambiguous"},
      {R"({"action":"send_message","meta":{"priority":"low"}}, "recipient":"15551234567"})", "ambiguous"},
      {"```json\n" + k_good + ", \"priority\": \"high\"}\n```", "ambiguous"},
      {"```json\n" + k_good + "\n```\n\"priority\": \"high\"}", "ambiguous"},
      {"```json\n" + k_good + "\n```\n}", "ambiguous"},
      {"```json\n" + unclosed + "\n```\n}", "truncated"},  // the fence cuts the object: nothing to take
  };
  for (const auto& [reply, expected] : rows) {
    CAPTURE(reply);
    const auto v = check(reply);
    CHECK(code(v) == expected);
    CHECK(v.failed_stage == validator::Stage::extract);
  }
}

TEST_CASE("hostile: floods after an object stay linear, and prose stays prose", "[hostile]") {
  std::string prose = k_good;
  while (prose.size() < 60000) prose += " {x} [y] \"z\"";
  CHECK(code(check(prose)) == "ok");
  CHECK(code(check(prose + "}")) == "ambiguous");
  CHECK(code(check(prose + "\"k\":")) == "ambiguous");
  CHECK(code(check(k_good + std::string(60000, '"'))) == "ok");
  CHECK(code(check(k_good + std::string(60000, '}'))) == "ambiguous");
  std::string quotes_and_spaces = k_good;
  while (quotes_and_spaces.size() < 60000) quotes_and_spaces += "\"" + std::string(100, ' ');
  CHECK(code(check(quotes_and_spaces)) == "ok");
}
