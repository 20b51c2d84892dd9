#include <catch2/catch.hpp>
#include <string>

#include "catalog/render.h"
#include "common/strict_json.h"
#include "tests/test_util.h"

using namespace dispatchd;

TEST_CASE("JSON Schema: strict-mode friendly object with every property required", "[render]") {
  const auto schema = test::parse_json(catalog::render_json_schema(test::support_es()));
  CHECK(std::string(schema["type"].GetString()) == "object");
  CHECK(schema["additionalProperties"].IsFalse());
  const auto& required = schema["required"];
  REQUIRE(required.Size() == 4);
  CHECK(std::string(required[0].GetString()) == "accion");
  const auto& action = schema["properties"]["accion"];
  REQUIRE(action["enum"].Size() == 3);
  CHECK(std::string(action["enum"][0].GetString()) == "enviar_mensaje");
  CHECK(schema["properties"]["contenido"]["maxLength"].GetUint() == 4096);
  CHECK(std::string(schema["properties"]["prioridad"]["type"].GetString()) == "string");
}

TEST_CASE("JSON Schema: fields some action does not require are nullable", "[render]") {
  const auto schema = test::parse_json(catalog::render_json_schema(test::orders()));
  const auto& note = schema["properties"]["note"];
  REQUIRE(note["type"].IsArray());
  CHECK(std::string(note["type"][1].GetString()) == "null");
  const auto& channel = schema["properties"]["channel"];
  CHECK(std::string(channel["const"].GetString()) == "whatsapp");
  CHECK(schema["required"].Size() == 10);  // action field + 9 fields
  CHECK(std::string(schema["properties"]["order_id"]["pattern"].GetString()) == "^ORD-[0-9]{4}$");
  CHECK(std::string(schema["properties"]["delivery_date"]["format"].GetString()) == "date");
}

TEST_CASE("OpenAI dialect wraps the schema for response_format and moves lengths to descriptions", "[render]") {
  const auto format = test::parse_json(catalog::render_openai_response_format(test::support_en()));
  CHECK(std::string(format["type"].GetString()) == "json_schema");
  CHECK(format["json_schema"]["strict"].IsTrue());
  const auto& content = format["json_schema"]["schema"]["properties"]["content"];
  CHECK_FALSE(content.HasMember("maxLength"));
  CHECK(std::string(content["description"].GetString()).find("At most 4096 characters.") != std::string::npos);
  const auto orders_format = test::parse_json(catalog::render_openai_response_format(test::orders()));
  const auto& channel = orders_format["json_schema"]["schema"]["properties"]["channel"];
  CHECK_FALSE(channel.HasMember("const"));
  CHECK(channel["enum"].Size() == 2);  // "whatsapp" and null
}

TEST_CASE("Gemini dialect: upper-case types, nullable and propertyOrdering", "[render]") {
  const auto schema = test::parse_json(catalog::render_gemini_schema(test::orders()));
  CHECK(std::string(schema["type"].GetString()) == "OBJECT");
  const auto& ordering = schema["propertyOrdering"];
  REQUIRE(ordering.Size() == 10);
  CHECK(std::string(ordering[0].GetString()) == "action");
  CHECK(std::string(ordering[1].GetString()) == "recipient");
  const auto& props = schema["properties"];
  CHECK(std::string(props["quantity"]["type"].GetString()) == "INTEGER");
  CHECK(props["quantity"]["minimum"].GetDouble() == 1.0);
  CHECK(props["note"]["nullable"].IsTrue());
  CHECK_FALSE(props["order_id"].HasMember("pattern"));
  CHECK(std::string(props["order_id"]["description"].GetString()).find("^ORD-[0-9]{4}$") != std::string::npos);
  CHECK(std::string(props["delivery_date"]["description"].GetString()).find("YYYY-MM-DD") != std::string::npos);
  CHECK(props["action"]["enum"].Size() == 4);
}

TEST_CASE("prompt text lists every enumerated value and the examples", "[render]") {
  const std::string prompt = catalog::render_prompt(test::support_es());
  for (const char* value :
       {"\"enviar_mensaje\"", "\"consultar_estado\"", "\"escalar_humano\"", "\"alta\"", "\"media\"", "\"baja\""}) {
    CHECK(prompt.find(value) != std::string::npos);
  }
  CHECK(
      prompt.find(
          "Format: {\"accion\": \"enviar_mensaje\"|\"consultar_estado\"|\"escalar_humano\", \"destinatario\": string, "
          "\"contenido\": string, \"prioridad\": \"alta\"|\"media\"|\"baja\"}") != std::string::npos);
  CHECK(prompt.find("Incorrect") != std::string::npos);
  CHECK(prompt.find("Correct") != std::string::npos);
  CHECK(prompt.find("at most 4096 characters") != std::string::npos);

  const std::string enforced = catalog::render_prompt(test::support_es(), {.schema_enforced = true});
  CHECK(enforced.find("Format:") == std::string::npos);
  CHECK(enforced.find("at most 4096") == std::string::npos);
  CHECK(enforced.find("\"alta\", \"media\", \"baja\"") != std::string::npos);  // enums always listed
}

TEST_CASE("the contract line marks nullable fields", "[render]") {
  const std::string line = catalog::render_contract_line(test::orders());
  CHECK(line.find("\"action\": \"reschedule\"|\"refund\"|\"lookup\"|\"ignore\"") != std::string::npos);
  CHECK(line.find("\"note\": string|null") != std::string::npos);
  CHECK(line.find("\"channel\": \"whatsapp\"|null") != std::string::npos);
}

TEST_CASE("parse_dialect knows exactly four dialects", "[render]") {
  CHECK(catalog::parse_dialect("jsonschema") == catalog::Dialect::jsonschema);
  CHECK(catalog::parse_dialect("openai") == catalog::Dialect::openai);
  CHECK(catalog::parse_dialect("gemini") == catalog::Dialect::gemini);
  CHECK(catalog::parse_dialect("prompt") == catalog::Dialect::prompt);
  CHECK_FALSE(catalog::parse_dialect("anthropic"));
}
