#include <catch2/catch.hpp>
#include <string>

#include "common/strict_json.h"
#include "tests/test_util.h"
#include "validator/validator.h"

using namespace dispatchd;

namespace {

const validator::Context k_ctx{.sender = "5215512345678", .source = {}};

}  // namespace

TEST_CASE("verdict JSON on success: ok, output, repairs, review", "[verdict]") {
  const auto v = validator::validate(test::support_es(),
                                     "```json\n{\"accion\":\"enviar_mensaje\",\"destinatario\":\"5215512345678\","
                                     "\"contenido\":\"Hola\",\"prioridad\":\"alta\"}\n```",
                                     k_ctx);
  REQUIRE(v.ok);
  CHECK(v.action == "enviar_mensaje");
  const auto doc = test::parse_json(validator::to_json(v));
  CHECK(doc["ok"].IsTrue());
  CHECK(std::string(doc["output"]["accion"].GetString()) == "enviar_mensaje");
  CHECK(std::string(doc["output"]["contenido"].GetString()) == "Hola");
  REQUIRE(doc["repairs"].Size() == 1);
  CHECK(std::string(doc["repairs"][0]["code"].GetString()) == "fence");
  CHECK(doc["review"].Size() == 0);
  CHECK_FALSE(doc.HasMember("errors"));
}

TEST_CASE("verdict JSON on failure: errors with path, code, message, and the feedback", "[verdict]") {
  const auto v = validator::validate(
      test::support_es(), R"({"accion":"enviar","destinatario":"5215512345678","contenido":"Hola","prioridad":"alta"})",
      k_ctx);
  REQUIRE_FALSE(v.ok);
  const auto doc = test::parse_json(validator::to_json(v));
  CHECK(doc["ok"].IsFalse());
  CHECK(std::string(doc["stage"].GetString()) == "contract");
  REQUIRE(doc["errors"].Size() == 1);
  CHECK(std::string(doc["errors"][0]["path"].GetString()) == "/accion");
  CHECK(std::string(doc["errors"][0]["code"].GetString()) == "enum");
  CHECK(std::string(doc["feedback"].GetString()) == v.feedback);
  CHECK_FALSE(doc.HasMember("output"));
}

TEST_CASE("feedback: count, compact list, exact format, one instruction", "[verdict]") {
  const auto v = validator::validate(test::support_es(),
                                     R"({"accion":"enviar","destinatario":"5215512345678","contenido":"Hola"})", k_ctx);
  REQUIRE_FALSE(v.ok);
  CHECK(v.feedback ==
        "Your previous reply was rejected: 2 errors.\n"
        "- /accion (enum): string \"enviar\" is not an action; allowed values: \"enviar_mensaje\", "
        "\"consultar_estado\" or "
        "\"escalar_humano\" (did you mean \"enviar_mensaje\"?)\n"
        "- /prioridad (required): missing required field \"prioridad\"\n"
        "Reply with exactly ONE JSON object and nothing else, in this format:\n"
        "{\"accion\": \"enviar_mensaje\"|\"consultar_estado\"|\"escalar_humano\", \"destinatario\": string, "
        "\"contenido\": string, \"prioridad\": \"alta\"|\"media\"|\"baja\"}\n"
        "Fix every error listed above and reply again.");
}

TEST_CASE("verdict: parse errors give the offset in the whole reply", "[verdict]") {
  const auto v = validator::validate(test::support_es(), R"(Aquí: {"accion":"x","accion":"y"})", k_ctx);
  REQUIRE_FALSE(v.ok);
  CHECK(v.failed_stage == validator::Stage::parse);
  CHECK(v.errors[0].code == "duplicate_key");
  CHECK(v.errors[0].message.find("of the reply") != std::string::npos);
}

TEST_CASE("verdict: the validated output is the reply's object on one line, escapes as written", "[verdict]") {
  const auto v =
      validator::validate(test::support_es(),
                          "{\r\n  \"accion\": \"escalar_humano\",\r\n  \"destinatario\": \"ana@example.com\",\r\n"
                          "  \"contenido\": \"Reembolso \\u00f1 \\ud83d\\ude00\",\r\n  \"prioridad\": \"baja\"\r\n}",
                          k_ctx);
  REQUIRE(v.ok);
  CHECK(v.output ==
        "{\"accion\":\"escalar_humano\",\"destinatario\":\"ana@example.com\",\"contenido\":\"Reembolso "
        "\\u00f1 \\ud83d\\ude00\",\"prioridad\":\"baja\"}");
  const auto spaced =
      validator::validate(test::support_es(),
                          "{ \"accion\" : \"escalar_humano\" , \"destinatario\":\"a b\", \"contenido\":\"x  \\\" y\","
                          " \"prioridad\":\"baja\" }",
                          k_ctx);
  REQUIRE(spaced.ok);
  CHECK(spaced.output ==
        R"({"accion":"escalar_humano","destinatario":"a b","contenido":"x  \" y","prioridad":"baja"})");
  const auto comma = validator::validate(
      test::support_es(), R"({"accion":"escalar_humano","destinatario":"a","contenido":"\u00f1","prioridad":"baja",})",
      k_ctx);
  REQUIRE(comma.ok);
  CHECK(comma.output ==
        "{\"accion\":\"escalar_humano\",\"destinatario\":\"a\",\"contenido\":\"\xC3\xB1\",\"prioridad\":\"baja\"}");
}
