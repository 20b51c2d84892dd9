#include <catch2/catch.hpp>
#include <string>

#include "common/json_reader.h"
#include "validator/extract.h"

using namespace dispatchd::validator;

namespace {

const std::string k_obj = R"({"action":"send_message","content":"hi"})";

struct Row {
  std::string name;
  std::string reply;
  std::string expect;                // the extracted JSON, or "!code" for an error
  std::vector<std::string> repairs;  // repair codes, in order
};

void run(const Row& row) {
  INFO(row.name);
  const Extraction found = extract(row.reply);
  if (row.expect.starts_with("!")) {
    REQUIRE_FALSE(found.ok());
    CHECK(found.error->code == row.expect.substr(1));
    CHECK(found.error->path.empty());
  } else {
    REQUIRE(found.ok());
    CHECK(row.reply.substr(found.offset, found.length) == row.expect);
  }
  std::vector<std::string> codes;
  for (const auto& r : found.repairs) codes.push_back(r.code);
  CHECK(codes == row.repairs);

  // With an object to read into, the extraction is the same, and the object holds the
  // taken text exactly when read_object accepts that text.
  dispatchd::json::Object object;
  const Extraction with_object = extract(row.reply, {}, object);
  CHECK(with_object.ok() == found.ok());
  CHECK(with_object.offset == found.offset);
  CHECK(with_object.length == found.length);
  CHECK(with_object.repairs.size() == found.repairs.size());
  if (!found.ok()) {
    CHECK(with_object.error->message == found.error->message);
    CHECK_FALSE(with_object.object_read);
    return;
  }
  dispatchd::json::Object expected;
  const bool readable =
      dispatchd::json::read_object(row.reply.substr(found.offset, found.length), Limits{}.max_depth, expected);
  CHECK(with_object.object_read == readable);
  if (readable) CHECK(object.compact() == expected.compact());
}

}  // namespace

TEST_CASE("extract: clean replies and whitespace need no repair", "[extract]") {
  const Row rows[] = {
      {"bare", k_obj, k_obj, {}},
      {"whitespace", "  \n\t" + k_obj + "\n\n", k_obj, {}},
      {"CRLF", "\r\n" + k_obj + "\r\n", k_obj, {}},
      {"BOM", "\xEF\xBB\xBF" + k_obj, k_obj, {"bom"}},
  };
  for (const auto& row : rows) run(row);
}

TEST_CASE("extract: code fences are stripped", "[extract]") {
  const Row rows[] = {
      {"```json", "```json\n" + k_obj + "\n```", k_obj, {"fence"}},
      {"```JSON", "```JSON\n" + k_obj + "\n```\n", k_obj, {"fence"}},
      {"bare ```", "```\n" + k_obj + "\n```", k_obj, {"fence"}},
      {"~~~", "~~~\n" + k_obj + "\n~~~", k_obj, {"fence"}},
      {"CRLF fence", "```json\r\n" + k_obj + "\r\n```\r\n", k_obj, {"fence"}},
      {"indented fence", "   ```json\n" + k_obj + "\n   ```", k_obj, {"fence"}},
      {"longer closing fence", "````\n" + k_obj + "\n`````", k_obj, {"fence"}},
      {"inline fence", "```json " + k_obj + "```", k_obj, {"fence"}},
      {"fence with prose around",
       "Sure! Here it is:\n```json\n" + k_obj + "\n```\nAnything else?",
       k_obj,
       {"fence", "prose_before", "prose_after"}},
      {"BOM then fence", "\xEF\xBB\xBF```json\n" + k_obj + "\n```", k_obj, {"bom", "fence"}},
      {"backticks inside a string do not close",
       "```json\n{\"content\":\"use ``` here\"}\n```",
       "{\"content\":\"use ``` here\"}",
       {"fence"}},
  };
  for (const auto& row : rows) run(row);
}

TEST_CASE("extract: prose before and after one object is stripped", "[extract]") {
  const Row rows[] = {
      {"before", "Here is the JSON: " + k_obj, k_obj, {"prose_before"}},
      {"after", k_obj + "\nLet me know if you need anything else.", k_obj, {"prose_after"}},
      {"both, Spanish", "Claro, aquí va:\n" + k_obj + "\n¡Saludos!", k_obj, {"prose_before", "prose_after"}},
      {"braces in prose that are not JSON", "Use the {template} format [see below]: " + k_obj, k_obj, {"prose_before"}},
      {"quotes in prose", "He said \"{not json}\" so: " + k_obj, k_obj, {"prose_before"}},
      {"inline code", "`" + k_obj + "`", k_obj, {"prose_before", "prose_after"}},
  };
  for (const auto& row : rows) run(row);
}

TEST_CASE("extract: refuses what it would have to guess", "[extract]") {
  const Row rows[] = {
      {"empty", "", "!empty", {}},
      {"only whitespace", " \r\n\t ", "!empty", {}},
      {"prose only", "I cannot help with that.", "!no_json", {}},
      {"unclosed fence", "```json\n" + k_obj + "\n", "!truncated", {}},
      {"cut off object", R"({"action":"send_message","content":"hel)", "!truncated", {}},
      {"cut off after a complete nested object",
       R"({"action":"send_message","meta":{"action":"escalate_to_human","content":"x"})",
       "!truncated",
       {}},
      {"cut off before the last brace in a fence", "```json\n{\"a\":{\"b\":1}\n```", "!truncated", {}},
      {"two different objects", k_obj + "\n" + R"({"action":"query_status"})", "!ambiguous", {}},
      {"two identical objects", k_obj + " " + k_obj, "!ambiguous", {}},
      {"object then JSON-looking array", k_obj + " and [1, 2]", "!ambiguous", {}},
      {"two fenced blocks", "```json\n" + k_obj + "\n```\n```json\n" + k_obj + "\n```", "!ambiguous", {}},
      {"fenced block then JSON outside", "```\nnotes\n```\n" + k_obj, "!ambiguous", {}},
      {"a footnote that is valid JSON counts as a second value", "As noted [1]: " + k_obj, "!ambiguous", {}},
      {"mismatched brackets", R"({"a":[1,2}})", "!syntax", {}},
      {"opening brace at the very end", "The answer is {", "!truncated", {}},
      {"too large", std::string(64 * 1024 + 1, ' '), "!too_large", {}},
      {"invalid UTF-8 in prose", "caf\xE9 " + k_obj, "!invalid_utf8", {}},
      {"deeper than the limit", std::string(33, '[') + std::string(33, ']'), "!too_deep", {}},
  };
  for (const auto& row : rows) run(row);
}

TEST_CASE("extract: single quotes and unquoted keys still count as JSON-looking", "[extract]") {
  // They are taken as the candidate so that the parse stage names the real problem,
  // instead of a fragment or "no JSON" being reported.
  const Row rows[] = {
      {"single quotes", "{'action': 'send_message'}", "{'action': 'send_message'}", {}},
      {"unquoted key", "{action: \"send_message\"}", "{action: \"send_message\"}", {}},
      {"array", "[" + k_obj + "]", "[" + k_obj + "]", {}},
  };
  for (const auto& row : rows) run(row);
}

TEST_CASE("extract: limits are configurable", "[extract]") {
  Limits small;
  small.max_reply_bytes = 10;
  CHECK(extract(k_obj, small).error->code == "too_large");
  Limits deep;
  deep.max_depth = 100;
  const std::string nested = std::string(50, '[') + std::string(50, ']');
  CHECK(extract(nested, deep).ok());
}

TEST_CASE("extract: an object inside a larger structure that is not JSON is never taken", "[extract]") {
  // Reported by the corpus review: the outer bracket does not look like JSON at its start,
  // but the object inside it is still a fragment of it.
  const Row rows[] = {
      {"block comment in the wrapper",
       "{\n  /* draft, not final */ \"draft\": " + k_obj + ",\n  \"final\": null\n}",
       "!syntax",
       {}},
      {"line comment in the wrapper", "{\n  // chosen action\n  \"response\": " + k_obj + "\n}", "!syntax", {}},
      {"array with a comment", "[ // note\n " + k_obj + " ]", "!syntax", {}},
      {"array with NaN first", "[NaN, " + k_obj + "]", "!syntax", {}},
      {"assignment", "{ answer = " + k_obj + " }", "!syntax", {}},
      {"numeric key", "{1: " + k_obj + "}", "!syntax", {}},
      {"double braces", "{{" + k_obj + "}}", "!syntax", {}},
      {"unclosed prose bracket before", "[see below " + k_obj, "!syntax", {}},
      {"closed prose brackets before are fine", "{name} [see below]: " + k_obj, k_obj, {"prose_before"}},
      {"an unclosed prose bracket after is prose", k_obj + " (see [note", k_obj, {"prose_after"}},
  };
  for (const auto& row : rows) run(row);
}

TEST_CASE("extract: JSON that continues after the object is never taken", "[extract]") {
  // The model's object was longer than what closed first: what follows it is the rest of
  // the object, not prose, and taking the first part would act on a fragment.
  const std::string es = R"({"accion":"enviar_mensaje","contenido":"hola","prioridad":"alta"})";
  const Row rows[] = {
      {"a pair after a comma, then the real closer", es + R"(, "prioridad": "baja"})", "!ambiguous", {}},
      {"the issue's example", R"({"key": "value"}, "key2": "value2"})", "!ambiguous", {}},
      {"a pair without a comma", k_obj + R"( "priority": "high"})", "!ambiguous", {}},
      {"a pair and no closer", k_obj + ",\n  \"priority\": \"high\"", "!ambiguous", {}},
      {"a pair on the next line, space before the colon", k_obj + "\n\"priority\" : \"high\"", "!ambiguous", {}},
      {"an escaped quote in the key", k_obj + R"(, "a\"b": 1})", "!ambiguous", {}},
      {"a stray closing brace", k_obj + "}", "!ambiguous", {}},
      {"a stray closing bracket", k_obj + "\n]", "!ambiguous", {}},
      {"a stray closer after prose", k_obj + " and more }", "!ambiguous", {}},
      {"a nested object closed early",
       R"({"action":"send_message","meta":{"a":1}}, "content":"hi"})",
       "!ambiguous",
       {}},
      {"an array closed early", R"([1, 2], 3])", "!ambiguous", {}},
      {"inside the fence", "```json\n" + k_obj + ", \"priority\": \"high\"}\n```", "!ambiguous", {}},
      {"after the closing fence", "```json\n" + k_obj + "\n```\n\"priority\": \"high\"}", "!ambiguous", {}},
      {"a stray closer after the closing fence", "```json\n" + k_obj + "\n```\n}", "!ambiguous", {}},
      {"after an inline fence", "```json " + k_obj + "```, \"priority\": \"high\"}", "!ambiguous", {}},
      {"a prose opener before the fence, its closer after",
       "[see below\n```json\n" + k_obj + "\n```\n]",
       "!ambiguous",
       {}},
      {"a pair then a fence around the rest", k_obj + "\n```\n\"priority\": \"high\"}\n```", "!ambiguous", {}},
  };
  for (const auto& row : rows) run(row);
}

TEST_CASE("extract: prose after the object stays prose, quotes and brackets included", "[extract]") {
  const Row rows[] = {
      {"a sentence", k_obj + " Let me know if you need anything else.", k_obj, {"prose_after"}},
      {"quoted words", k_obj + "\n\nNote: \"quoted words\" in prose", k_obj, {"prose_after"}},
      {"quoted words then a comma", k_obj + "\nI set \"priority\" to \"high\", as asked.", k_obj, {"prose_after"}},
      {"a colon that no quote precedes", k_obj + "\nNote: it ships at 10:30.", k_obj, {"prose_after"}},
      {"a lone quote", k_obj + "\nHe is 5'11\" tall.", k_obj, {"prose_after"}},
      {"balanced prose brackets", k_obj + " Use {name} or [see below] (and {this}).", k_obj, {"prose_after"}},
      {"a markdown link", k_obj + "\nSee [our FAQ](https://example.com/faq).", k_obj, {"prose_after"}},
      {"Spanish with quotes",
       k_obj + "\n\nNota: el cliente escribió \"urgente\", así que la prioridad es \"alta\".",
       k_obj,
       {"prose_after"}},
      {"quotes after a fence",
       "```json\n" + k_obj + "\n```\nI chose \"medium\" because the order is late.",
       k_obj,
       {"fence", "prose_after"}},
  };
  for (const auto& row : rows) run(row);
}
