#include <catch2/catch.hpp>

#include "connectors/whatsapp/graph.h"
#include "tests/test_util.h"

using namespace dispatchd::whatsapp;
using namespace std::chrono_literals;

namespace {

const GraphAccount k_account{"https://graph.facebook.com/v21.0", "109876543210001", "EAAGtoken123"};

std::string graph_error_body(long code, const std::string& message, const std::string& extra = "") {
  return R"({"error":{"message":")" + message + R"(","type":"OAuthException","code":)" + std::to_string(code) + extra +
         R"(,"fbtrace_id":"AbC123"}})";
}

SendFailure failure_of(int status, const std::string& body,
                       std::optional<std::chrono::seconds> retry_after = std::nullopt) {
  auto result = read_send_response(status, body, retry_after);
  REQUIRE_FALSE(result.has_value());
  return result.error();
}

std::string graph_header(const dispatchd::net::HttpRequest& request, const std::string& name) {
  for (const auto& [key, value] : request.headers.fields()) {
    if (key == name) return value;
  }
  return {};
}

}  // namespace

TEST_CASE("send: a text message request has the documented shape") {
  const auto request = build_text_message(k_account, "5215512345678", "Hola \xC2\xBF\"qu\xC3\xA9\"?\nListo");
  REQUIRE(request.has_value());
  CHECK(request->method == "POST");
  CHECK(request->url == "https://graph.facebook.com/v21.0/109876543210001/messages");
  CHECK(graph_header(*request, "Authorization") == "Bearer EAAGtoken123");
  CHECK(graph_header(*request, "Content-Type") == "application/json");
  CHECK(request->body ==
        R"({"messaging_product":"whatsapp","recipient_type":"individual","to":"5215512345678","type":"text",)"
        R"("text":{"preview_url":false,"body":"Hola )"
        "\xC2\xBF"
        R"(\"qu)"
        "\xC3\xA9"
        R"(\"?\nListo"}})");
  const auto doc = dispatchd::test::parse_json(request->body);
  CHECK(std::string(doc["text"]["body"].GetString()) == "Hola \xC2\xBF\"qu\xC3\xA9\"?\nListo");

  SECTION("a tracker travels as biz_opaque_callback_data") {
    const auto tracked = build_text_message(k_account, "5215512345678", "Hola", "dispatchd-42-1");
    REQUIRE(tracked.has_value());
    CHECK(std::string(dispatchd::test::parse_json(tracked->body)["biz_opaque_callback_data"].GetString()) ==
          "dispatchd-42-1");
  }
  SECTION("a trailing slash on the base URL is not doubled") {
    GraphAccount account = k_account;
    account.graph_base_url = "http://127.0.0.1:8099/v21.0/";
    CHECK(build_text_message(account, "1", "x")->url == "http://127.0.0.1:8099/v21.0/109876543210001/messages");
  }
}

TEST_CASE("send: the mark-as-read request") {
  const auto request = build_mark_read(k_account, "wamid.HBgNNTIx==");
  REQUIRE(request.has_value());
  CHECK(request->url == "https://graph.facebook.com/v21.0/109876543210001/messages");
  CHECK(graph_header(*request, "Authorization") == "Bearer EAAGtoken123");
  CHECK(request->body == R"({"messaging_product":"whatsapp","status":"read","message_id":"wamid.HBgNNTIx=="})");
  // The typing indicator rides on the read mark (Meta's "Typing indicators" page).
  const auto typing = build_mark_read(k_account, "wamid.HBgNNTIx==", Typing::shown);
  REQUIRE(typing);
  CHECK(
      typing->body ==
      R"({"messaging_product":"whatsapp","status":"read","message_id":"wamid.HBgNNTIx==","typing_indicator":{"type":"text"}})");
  CHECK_FALSE(build_mark_read(k_account, "").has_value());
  CHECK_FALSE(build_mark_read(k_account, "wamid.a b").has_value());
  CHECK(read_mark_read_response(200, R"({"success":true})").has_value());
  CHECK(read_mark_read_response(401, graph_error_body(190, "expired")).error().kind == ErrorClass::auth);
}

TEST_CASE("send: requests that must not leave are refused before any call") {
  const auto refused = [](const GraphAccount& account, std::string_view to, std::string_view body,
                          std::string_view tracker = {}) {
    const auto request = build_text_message(account, to, body, tracker);
    REQUIRE_FALSE(request.has_value());
    return request.error();
  };
  GraphAccount account = k_account;
  CHECK_THAT(refused(k_account, "+52 155", "x"), Catch::Contains("recipient"));
  CHECK_THAT(refused(k_account, "", "x"), Catch::Contains("recipient"));
  CHECK_THAT(refused(k_account, "1", ""), Catch::Contains("empty"));
  CHECK_THAT(refused(k_account, "1", "\xC3\x28"), Catch::Contains("UTF-8"));
  CHECK_THAT(refused(k_account, "1", std::string(4097, 'a')), Catch::Contains("4096"));
  CHECK(build_text_message(k_account, "1", std::string(4096, 'a')).has_value());
  std::string emoji;  // 4096 code points of 4 bytes each are within the limit
  for (int i = 0; i < 4096; ++i) emoji += "\xF0\x9F\x91\x8D";
  CHECK(build_text_message(k_account, "1", emoji).has_value());
  CHECK_THAT(refused(k_account, "1", "x", std::string(513, 't')), Catch::Contains("tracker"));
  account.access_token = "abc\r\nX-Injected: 1";
  CHECK_THAT(refused(account, "1", "x"), Catch::Contains("token"));
  account.access_token = "";
  CHECK_THAT(refused(account, "1", "x"), Catch::Contains("token"));
  account = k_account;
  account.phone_number_id = "123/../456";
  CHECK_THAT(refused(account, "1", "x"), Catch::Contains("phone_number_id"));
  account = k_account;
  account.graph_base_url = "graph.facebook.com/v21.0";
  CHECK_THAT(refused(account, "1", "x"), Catch::Contains("graph_base_url"));
}

TEST_CASE("send: a success response gives the message id") {
  const auto sent = read_send_response(
      200, R"({"messaging_product":"whatsapp","contacts":[{"input":"5215512345678","wa_id":"5215512345678"}],)"
           R"("messages":[{"id":"wamid.HBgLMTY1MDUwNzY1MjAVAgARGBI5QTNDQTVCM0Q0Q0Q2RTY3RTcA"}]})");
  REQUIRE(sent.has_value());
  CHECK(sent->message_id == "wamid.HBgLMTY1MDUwNzY1MjAVAgARGBI5QTNDQTVCM0Q0Q0Q2RTY3RTcA");
  CHECK(sent->message_status.empty());
  const auto held = read_send_response(200, R"({"messages":[{"id":"wamid.1","message_status":"accepted"}]})");
  CHECK(held->message_status == "accepted");
}

TEST_CASE("send: a success status without a message id is unknown, never retried") {
  for (const std::string body :
       {"", "not json", "{}", R"({"messages":[]})", R"({"messages":[{"id":""}]})", R"({"messages":[{"id":5}]})"}) {
    INFO("body: " << body);
    const SendFailure failure = failure_of(200, body);
    CHECK(failure.kind == ErrorClass::unknown);
    CHECK(failure.error.http_status == 200);
  }
}

TEST_CASE("send: every error class from the Graph error object and the status") {
  struct Row {
    int status;
    std::string body;
    ErrorClass kind;
  };
  const Row rows[] = {
      {400, graph_error_body(131047, "(#131047) Re-engagement message"), ErrorClass::window_closed},
      {400, graph_error_body(130429, "(#130429) Rate limit hit"), ErrorClass::retry},
      {400, graph_error_body(131056, "(#131056) pair rate limit hit"), ErrorClass::retry},
      {400, graph_error_body(4, "(#4) Application request limit reached"), ErrorClass::retry},
      {400, graph_error_body(80007, "(#80007) Rate limit issues"), ErrorClass::retry},
      {503, graph_error_body(2, "(#2) Service temporarily unavailable"), ErrorClass::retry},
      {500, graph_error_body(1, "An unknown error occurred"), ErrorClass::retry},
      {429, "", ErrorClass::retry},
      {500, "", ErrorClass::retry},
      {503, "<html>Service Unavailable</html>", ErrorClass::retry},
      {502, "<html>Bad Gateway</html>", ErrorClass::unknown},
      {504, "", ErrorClass::unknown},
      {401, graph_error_body(190, "Error validating access token: Session has expired", R"(,"error_subcode":463)"),
       ErrorClass::auth},
      {400, graph_error_body(190, "Invalid OAuth access token"), ErrorClass::auth},
      {403, graph_error_body(10, "(#10) Application does not have permission"), ErrorClass::auth},
      {403, graph_error_body(200, "(#200) Permissions error"), ErrorClass::auth},
      {401, "", ErrorClass::auth},
      {400, graph_error_body(100, "(#100) Invalid parameter"), ErrorClass::permanent},
      {400, graph_error_body(131026, "(#131026) Message Undeliverable"), ErrorClass::permanent},
      {404, "", ErrorClass::permanent},
      {301, "", ErrorClass::permanent},
  };
  for (const Row& row : rows) {
    INFO("status " << row.status << " body " << row.body);
    CHECK(failure_of(row.status, row.body).kind == row.kind);
  }
}

TEST_CASE("send: the Graph error's fields are kept and described in one line") {
  const SendFailure failure = failure_of(
      400, R"({"error":{"message":"(#131047) Re-engagement message","type":"OAuthException","code":131047,)"
           R"("error_subcode":2494010,"error_data":{"messaging_product":"whatsapp","details":"More than 24 hours."},)"
           R"("fbtrace_id":"Az8or2yhqkZfEZ-_4Qn_Bam"}})");
  CHECK(failure.error.http_status == 400);
  CHECK(failure.error.code == 131047);
  CHECK(failure.error.subcode == 2494010);
  CHECK(failure.error.type == "OAuthException");
  CHECK(failure.error.details == "More than 24 hours.");
  CHECK(failure.error.fbtrace_id == "Az8or2yhqkZfEZ-_4Qn_Bam");
  CHECK(describe(failure.error) ==
        "graph error 131047/2494010 (http 400): (#131047) Re-engagement message: More than 24 hours. "
        "[fbtrace_id Az8or2yhqkZfEZ-_4Qn_Bam]");
  CHECK(describe(failure_of(502, "<html>Bad Gateway</html>").error) ==
        "graph error (http 502): response body \"<html>Bad Gateway</html>\"");
}

TEST_CASE("send: Retry-After and the code's pace set the retry delay") {
  const SendFailure throttled = failure_of(429, "", 120s);
  REQUIRE(throttled.retry_after.has_value());
  CHECK(*throttled.retry_after == 120s);
  CHECK(retry_delay(throttled.error, 1, throttled.retry_after) == 120s);

  GraphError pair;
  pair.code = 131056;
  GraphError plain;
  plain.http_status = 503;
  struct Row {
    const GraphError* error;
    int failures;
    std::optional<std::chrono::seconds> retry_after;
    std::chrono::seconds expected;
  };
  const Row rows[] = {
      {&plain, 1, std::nullopt, 2s},
      {&plain, 2, std::nullopt, 4s},
      {&plain, 5, std::nullopt, 32s},
      {&plain, 9, std::nullopt, 300s},
      {&plain, 50, std::nullopt, 300s},
      {&plain, 0, std::nullopt, 2s},
      {&pair, 1, std::nullopt, 6s},
      {&pair, 3, std::nullopt, 8s},
      {&plain, 1, 30s, 30s},
      {&plain, 1, std::chrono::seconds{-5}, 2s},
      {&plain, 1, std::chrono::seconds{10'000'000}, 86400s},
  };
  for (const Row& row : rows) {
    INFO("failures " << row.failures);
    CHECK(retry_delay(*row.error, row.failures, row.retry_after) == row.expected);
  }
}

TEST_CASE("send: error classes have stable names") {
  CHECK(std::string(to_string(ErrorClass::window_closed)) == "window_closed");
  CHECK(std::string(to_string(ErrorClass::retry)) == "retry");
  CHECK(std::string(to_string(ErrorClass::auth)) == "auth");
  CHECK(std::string(to_string(ErrorClass::unknown)) == "unknown");
  CHECK(std::string(to_string(ErrorClass::permanent)) == "permanent");
}

// The shapes of Meta's request references "Interactive reply buttons messages" and
// "Interactive list messages" (developers.facebook.com/documentation/business-messaging/
// whatsapp/messages/), also what public SDKs send (e.g. EvgenyLat/whatsapp-saas's
// InteractiveMessagePayload, Mapetere/latterpay's menu_with_buttons payload): type
// "interactive", interactive.type "button" with action.buttons[{type:"reply",reply:{id,title}}],
// or "list" with action.button and action.sections[{title,rows[{id,title,description?}]}].
TEST_CASE("send: an interactive request has the documented shape") {
  using dispatchd::interactive::Choices;
  using dispatchd::interactive::Kind;
  const Choices buttons{Kind::buttons, {{"yes_1042", "S\xC3\xAD"}, {"no_1042", "No"}}, {}, {}};
  const Choices list{Kind::list,
                     {},
                     "Horarios",
                     {{"Lunes",
                       {{"mon_10", "10:00",
                         "Ma\xC3\xB1"
                         "ana"},
                        {"mon_16", "16:00", std::nullopt}}},
                      {"Martes", {{"tue_10", "10:00", ""}}}}};
  struct Row {
    const Choices* choices;
    const char* tracker;
    const char* body;
  };
  const Row table[] = {
      {&buttons, "",
       R"({"messaging_product":"whatsapp","recipient_type":"individual","to":"5215512345678","type":"interactive",)"
       R"("interactive":{"type":"button","body":{"text":"¿Enviamos?"},"action":{"buttons":[)"
       R"({"type":"reply","reply":{"id":"yes_1042","title":"Sí"}},{"type":"reply","reply":{"id":"no_1042","title":"No"}}]}}})"},
      {&list, "dispatchd-7-1",
       R"({"messaging_product":"whatsapp","recipient_type":"individual","to":"5215512345678","type":"interactive",)"
       R"("interactive":{"type":"list","body":{"text":"¿Enviamos?"},"action":{"button":"Horarios","sections":[)"
       R"({"title":"Lunes","rows":[{"id":"mon_10","title":"10:00","description":"Mañana"},{"id":"mon_16","title":"16:00"}]},)"
       R"({"title":"Martes","rows":[{"id":"tue_10","title":"10:00"}]}]}},"biz_opaque_callback_data":"dispatchd-7-1"})"},
  };
  for (const auto& row : table) {
    const auto request = build_interactive_message(k_account, "5215512345678",
                                                   "\xC2\xBF"
                                                   "Enviamos?",
                                                   *row.choices, row.tracker);
    REQUIRE(request.has_value());
    CHECK(request->method == "POST");
    CHECK(request->url == "https://graph.facebook.com/v21.0/109876543210001/messages");
    CHECK(request->body == row.body);
  }
  SECTION("the body above the choices is held to Meta's limit for their kind") {
    CHECK(build_interactive_message(k_account, "1", std::string(1024, 'a'), buttons).has_value());
    CHECK(build_interactive_message(k_account, "1", std::string(1025, 'a'), buttons).error() ==
          "message body is longer than 1024 characters");
    CHECK(build_interactive_message(k_account, "1", std::string(4096, 'a'), list).has_value());
    CHECK_FALSE(build_interactive_message(k_account, "1", std::string(4097, 'a'), list).has_value());
    CHECK_FALSE(build_interactive_message(k_account, "1", "", buttons).has_value());
  }
}
