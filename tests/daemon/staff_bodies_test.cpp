// The staff API's body readers (daemon/staff_bodies.h): the 400s the API answers with.

#include <catch2/catch.hpp>

#include "daemon/staff_bodies.h"

using namespace dispatchd::daemon;

TEST_CASE("log-in and account bodies need their string members", "[staff][bodies]") {
  const auto login = read_login(R"({"name":"ana","token":"t0k"})");
  REQUIRE(login);
  CHECK(login->name == "ana");
  CHECK(login->token == "t0k");
  const auto missing = read_login(R"({"name":"ana","token":5})");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().kind == BodyErrorKind::missing_field);
  CHECK(missing.error().message == "\"name\" and \"token\" are required");
  CHECK(read_account(R"({"name":"luis"})").value().name == "luis");
  CHECK(read_account("{}").error().message == "\"name\" is required");
}

TEST_CASE("a body must be one strict JSON object", "[staff][bodies]") {
  CHECK(read_login("[]").error().kind == BodyErrorKind::not_object);
  CHECK(read_login(R"({"name":"a","name":"b","token":"t"})").error().kind == BodyErrorKind::not_json);
  CHECK(read_login("{\"name\":\"\xff\",\"token\":\"t\"}").error().kind == BodyErrorKind::not_json);
  const auto deep = read_decision(std::string(40, '[') + std::string(40, ']'), false);
  CHECK(deep.error().message.starts_with("the body is not valid JSON: "));
}

TEST_CASE("a decision reads note, text and the edited action as text", "[staff][bodies]") {
  const auto empty = read_decision("{}", false);
  REQUIRE(empty);
  CHECK(empty->note.empty());
  CHECK(empty->text.empty());
  CHECK_FALSE(empty->action);
  CHECK(read_decision("{}", true).error().message == "\"action\" is required");
  CHECK(read_decision(R"({"note":"spam","text":7})", false).value().note == "spam");
  CHECK(read_decision(R"({"action":"{\"a\": 1}"})", true).value().action == R"({"a": 1})");
  CHECK(read_decision(R"({"action":{"a": [1, "x"]}})", true).value().action == R"({"a":[1,"x"]})");
}
