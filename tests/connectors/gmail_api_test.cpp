#include <catch2/catch.hpp>

#include "connectors/gmail/api.h"
#include "connectors/gmail/base64url.h"
#include "tests/test_util.h"

using namespace dispatchd;
using namespace dispatchd::gmail;
using namespace std::chrono_literals;

namespace {

constexpr std::string_view k_api_base = "https://gmail.googleapis.com";
constexpr std::string_view k_token = "ya29.a0AfH6SMBx-token";

net::HttpResult api_response(int status, std::string body, net::Headers headers = {}) {
  return net::HttpResponse{status, std::move(headers), std::move(body)};
}

net::HttpResult transport_failure(net::TransportErrorKind kind) {
  return std::unexpected(net::TransportError{kind, "curl: something happened"});
}

std::string api_header(const net::HttpRequest& request, std::string_view name) {
  return std::string(request.headers.get(name).value_or(""));
}

// Google's error object, as the handle-errors guide shows it.
std::string google_error(int code, std::string_view reason, std::string_view message, std::string_view status) {
  return R"({"error":{"code":)" + std::to_string(code) + R"(,"message":")" + std::string(message) +
         R"(","errors":[{"message":")" + std::string(message) + R"(","domain":"usageLimits","reason":")" +
         std::string(reason) + R"("}],"status":")" + std::string(status) + R"("}})";
}

ApiError error_of(const net::HttpResult& result) {
  auto read = read_ok(result);
  REQUIRE_FALSE(read.has_value());
  return read.error();
}

void check_get(const net::HttpRequest& request, std::chrono::milliseconds timeout = 30s) {
  CHECK(request.method == "GET");
  CHECK(api_header(request, "Authorization") == "Bearer ya29.a0AfH6SMBx-token");
  CHECK(api_header(request, "Accept") == "application/json");
  CHECK(request.connect_timeout == 10s);
  CHECK(request.timeout == timeout);
}

}  // namespace

TEST_CASE("gmail api: GET requests have the documented URLs and headers", "[gmail]") {
  SECTION("profile") {
    const auto request = profile_request(k_api_base, k_token);
    check_get(request);
    CHECK(request.url == "https://gmail.googleapis.com/gmail/v1/users/me/profile");
  }
  SECTION("history: messageAdded on the label, the page token percent-encoded") {
    const auto request = history_request("http://127.0.0.1:9/", k_token, "123456", "Label_7", "tok/en+1=");
    check_get(request);
    CHECK(request.url ==
          "http://127.0.0.1:9/gmail/v1/users/me/history?startHistoryId=123456&historyTypes=messageAdded"
          "&labelId=Label_7&pageToken=tok%2Fen%2B1%3D&maxResults=500");
  }
  SECTION("history: no label and no page token leave those parameters out") {
    CHECK(history_request(k_api_base, k_token, "9", "", "").url ==
          "https://gmail.googleapis.com/gmail/v1/users/me/history?startHistoryId=9&historyTypes=messageAdded"
          "&maxResults=500");
  }
  SECTION("list: the query's spaces, colons and angle brackets are percent-encoded") {
    const auto request =
        list_request(k_api_base, k_token, query_message_id("<dispatchd.42@example.com>"), "INBOX", "p1", 50);
    check_get(request);
    CHECK(request.url ==
          "https://gmail.googleapis.com/gmail/v1/users/me/messages?q=rfc822msgid%3Adispatchd.42%40example.com%20"
          "in%3Aanywhere&labelIds=INBOX&pageToken=p1&maxResults=50");
    CHECK(list_request(k_api_base, k_token, "a <b>", "", "", 50).url.ends_with("?q=a%20%3Cb%3E&maxResults=50"));
  }
  SECTION("list: maxResults is clamped to Gmail's 1..500") {
    CHECK(list_request(k_api_base, k_token, "x", "", "", 10'000).url.ends_with("&maxResults=500"));
    CHECK(list_request(k_api_base, k_token, "x", "", "", 0).url.ends_with("&maxResults=1"));
  }
  SECTION("get raw: the id is a path segment, 60 s for large messages") {
    const auto request = get_raw_request(k_api_base, k_token, "18c2f0a1b2c3d4e5");
    check_get(request, 60s);
    CHECK(request.url == "https://gmail.googleapis.com/gmail/v1/users/me/messages/18c2f0a1b2c3d4e5?format=raw");
    CHECK(get_raw_request(k_api_base, k_token, "../labels").url ==
          "https://gmail.googleapis.com/gmail/v1/users/me/messages/..%2Flabels?format=raw");
  }
  SECTION("labels") {
    const auto request = labels_request(k_api_base, k_token);
    check_get(request);
    CHECK(request.url == "https://gmail.googleapis.com/gmail/v1/users/me/labels");
  }
}

TEST_CASE("gmail api: POST requests carry JSON bodies", "[gmail]") {
  SECTION("send: the raw message base64url-encoded, in its thread, 60 s") {
    const std::string raw = "From: a@example.com\r\nSubject: Re: ?\r\n\r\n\xC3\xA9\xFF\xFE>>?";
    const auto request = send_request(k_api_base, k_token, raw, "18c2f0a1b2c3d4e5");
    CHECK(request.method == "POST");
    CHECK(request.url == "https://gmail.googleapis.com/gmail/v1/users/me/messages/send");
    CHECK(api_header(request, "Authorization") == "Bearer ya29.a0AfH6SMBx-token");
    CHECK(api_header(request, "Content-Type") == "application/json");
    CHECK(request.timeout == 60s);
    const auto doc = test::parse_json(request.body);
    const std::string encoded = doc["raw"].GetString();
    CHECK(encoded.find_first_of("+/=") == std::string::npos);
    CHECK(base64url_decode(encoded) == raw);
    CHECK(std::string(doc["threadId"].GetString()) == "18c2f0a1b2c3d4e5");
    CHECK(doc.MemberCount() == 2);
  }
  SECTION("send: a new thread has no threadId") {
    const auto doc = test::parse_json(send_request(k_api_base, k_token, "x", "").body);
    CHECK_FALSE(doc.HasMember("threadId"));
  }
  SECTION("modify adds labels and removes none") {
    const std::vector<std::string> labels{"Label_12", "Label_3"};
    const auto request = modify_request(k_api_base, k_token, "18c2f0a1b2c3d4e5", labels);
    CHECK(request.method == "POST");
    CHECK(request.url == "https://gmail.googleapis.com/gmail/v1/users/me/messages/18c2f0a1b2c3d4e5/modify");
    CHECK(request.body == R"({"addLabelIds":["Label_12","Label_3"],"removeLabelIds":[]})");
    CHECK(request.timeout == 30s);
  }
  SECTION("create label, with a name that needs escaping") {
    const auto request = create_label_request(k_api_base, k_token, "dispatchd/\"handled\"");
    CHECK(request.url == "https://gmail.googleapis.com/gmail/v1/users/me/labels");
    const auto doc = test::parse_json(request.body);
    CHECK(std::string(doc["name"].GetString()) == "dispatchd/\"handled\"");
    CHECK(std::string(doc["labelListVisibility"].GetString()) == "labelShow");
    CHECK(std::string(doc["messageListVisibility"].GetString()) == "show");
  }
}

TEST_CASE("gmail api: readers on realistic answers", "[gmail]") {
  SECTION("profile") {
    const auto profile = read_profile(api_response(
        200,
        R"({"emailAddress":"support@example.com","messagesTotal":1203,"threadsTotal":877,"historyId":"4242917"})"));
    REQUIRE(profile.has_value());
    CHECK(profile->email_address == "support@example.com");
    CHECK(profile->history_id == "4242917");
  }
  SECTION("history: messagesAdded in order, each id once, other records skipped") {
    const auto page = read_history(api_response(200, R"({
      "history": [
        {"id": "4243001", "messages": [{"id": "m1", "threadId": "t1"}],
         "messagesAdded": [{"message": {"id": "m1", "threadId": "t1", "labelIds": ["UNREAD", "INBOX"]}}]},
        {"id": "4243002", "messages": [{"id": "m2", "threadId": "t1"}],
         "labelsAdded": [{"message": {"id": "m1", "threadId": "t1"}, "labelIds": ["STARRED"]}]},
        {"id": "4243003", "messages": [{"id": "m2", "threadId": "t1"}, {"id": "m3", "threadId": "t3"}],
         "messagesAdded": [{"message": {"id": "m2", "threadId": "t1", "labelIds": ["SENT"]}},
                           {"message": {"id": "m3", "threadId": "t3", "labelIds": ["INBOX"]}},
                           {"message": {"id": "m1", "threadId": "t1", "labelIds": ["INBOX"]}}]}
      ],
      "nextPageToken": "08123456789",
      "historyId": "4243100"})"));
    REQUIRE(page.has_value());
    REQUIRE(page->added.size() == 3);
    CHECK(page->added[0].id == "m1");
    CHECK(page->added[0].thread_id == "t1");
    CHECK(page->added[0].label_ids == std::vector<std::string>{"UNREAD", "INBOX"});
    CHECK(page->added[1].id == "m2");
    CHECK(page->added[1].label_ids == std::vector<std::string>{"SENT"});
    CHECK(page->added[2].id == "m3");
    CHECK(page->next_page_token == "08123456789");
    CHECK(page->history_id == "4243100");
  }
  SECTION("history: an idle mailbox answers only its historyId") {
    const auto page = read_history(api_response(200, R"({"historyId":"4243100"})"));
    REQUIRE(page.has_value());
    CHECK(page->added.empty());
    CHECK(page->next_page_token.empty());
    CHECK(page->history_id == "4243100");
  }
  SECTION("history: an added message without an id makes the page unreadable") {
    const auto page =
        read_history(api_response(200, R"({"history":[{"id":"1","messagesAdded":[{"message":{}}]}],"historyId":"2"})"));
    REQUIRE_FALSE(page.has_value());
    CHECK(page.error().kind == ApiErrorKind::uncertain);
  }
  SECTION("list") {
    const auto page =
        read_list(api_response(200, R"({"messages":[{"id":"m9","threadId":"t9"},{"id":"m8","threadId":"t8"}],
                                                  "nextPageToken":"p2","resultSizeEstimate":201})"));
    REQUIRE(page.has_value());
    REQUIRE(page->messages.size() == 2);
    CHECK(page->messages[0].id == "m9");
    CHECK(page->messages[1].thread_id == "t8");
    CHECK(page->next_page_token == "p2");
  }
  SECTION("list: a search that found nothing") {
    const auto page = read_list(api_response(200, R"({"resultSizeEstimate":0})"));
    REQUIRE(page.has_value());
    CHECK(page->messages.empty());
  }
  SECTION("body of a raw get, as it came") {
    const std::string body = R"({"id":"m1","threadId":"t1","raw":"RnJvbTogYQ0K"})";
    CHECK(read_body(api_response(200, body)) == body);
  }
  SECTION("sent message") {
    const auto sent = read_sent(api_response(200, R"({"id":"18c3","threadId":"18c2","labelIds":["SENT"]})"));
    REQUIRE(sent.has_value());
    CHECK(sent->id == "18c3");
    CHECK(sent->thread_id == "18c2");
    CHECK(sent->label_ids == std::vector<std::string>{"SENT"});
  }
  SECTION("labels and a created label") {
    const auto labels = read_labels(api_response(200, R"({"labels":[
        {"id":"INBOX","name":"INBOX","messageListVisibility":"hide","labelListVisibility":"labelShow","type":"system"},
        {"id":"Label_12","name":"dispatchd/handled","type":"user"}]})"));
    REQUIRE(labels.has_value());
    REQUIRE(labels->size() == 2);
    CHECK((*labels)[1].id == "Label_12");
    CHECK((*labels)[1].name == "dispatchd/handled");
    const auto label = read_label(api_response(200, R"({"id":"Label_13","name":"x","type":"user"})"));
    REQUIRE(label.has_value());
    CHECK(label->id == "Label_13");
  }
  SECTION("modify: any 2xx") {
    CHECK(read_ok(api_response(200, R"({"id":"m1","labelIds":["Label_12"]})")).has_value());
  }
}

TEST_CASE("gmail api: the error classification table", "[gmail]") {
  struct Row {
    const char* name;
    net::HttpResult result;
    ApiErrorKind kind;
    std::string reason;
  };
  const Row rows[] = {
      {"401", api_response(401, google_error(401, "authError", "Invalid Credentials", "UNAUTHENTICATED")),
       ApiErrorKind::unauthorized, "authError"},
      {"404 stale history",
       api_response(
           404, R"({"error":{"code":404,"message":"Requested entity was not found.","errors":[{"message":)"
                R"("Requested entity was not found.","domain":"global","reason":"notFound"}],"status":"NOT_FOUND"}})"),
       ApiErrorKind::not_found, "notFound"},
      {"429",
       api_response(
           429, google_error(429, "rateLimitExceeded", "Too many concurrent requests for user", "RESOURCE_EXHAUSTED")),
       ApiErrorKind::rate_limited, "rateLimitExceeded"},
      {"403 userRateLimitExceeded",
       api_response(403, google_error(403, "userRateLimitExceeded", "User-rate limit exceeded", "PERMISSION_DENIED")),
       ApiErrorKind::rate_limited, "userRateLimitExceeded"},
      {"403 rateLimitExceeded", api_response(403, google_error(403, "rateLimitExceeded", "Rate Limit Exceeded", "")),
       ApiErrorKind::rate_limited, "rateLimitExceeded"},
      {"403 forbidden",
       api_response(403, google_error(403, "insufficientPermissions", "Insufficient Permission", "PERMISSION_DENIED")),
       ApiErrorKind::permanent, "insufficientPermissions"},
      {"400", api_response(400, google_error(400, "invalidArgument", "Invalid label name", "INVALID_ARGUMENT")),
       ApiErrorKind::permanent, "invalidArgument"},
      {"500", api_response(500, google_error(500, "backendError", "Backend Error", "INTERNAL")), ApiErrorKind::server,
       "backendError"},
      {"503 html from a gateway", api_response(503, "<html><body>Service Unavailable</body></html>"),
       ApiErrorKind::server, ""},
      {"connect failed", transport_failure(net::TransportErrorKind::connect_failed), ApiErrorKind::unreachable,
       "connect_failed"},
      {"timed out", transport_failure(net::TransportErrorKind::timed_out), ApiErrorKind::uncertain, "timed_out"},
      {"reset", transport_failure(net::TransportErrorKind::other), ApiErrorKind::uncertain, "other"},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    const auto error = error_of(row.result);
    CHECK(error.kind == row.kind);
    CHECK(error.reason == row.reason);
    CHECK(error.status == (row.result ? row.result->status : 0));
    CHECK_FALSE(error.message.empty());
  }
  CHECK(error_of(rows[1].result).message == "\"Requested entity was not found.\"");
}

TEST_CASE("gmail api: Retry-After, garbage 2xx, describe and retryable", "[gmail]") {
  SECTION("429 with Retry-After") {
    const auto error = error_of(api_response(
        429, google_error(429, "rateLimitExceeded", "slow down", "RESOURCE_EXHAUSTED"), {{"retry-after", "37"}}));
    CHECK(error.kind == ApiErrorKind::rate_limited);
    CHECK(error.retry_after == 37s);
    CHECK(describe(error) == "gmail api rate_limited (http 429, rateLimitExceeded): \"slow down\"");
  }
  SECTION("an HTTP-date Retry-After is read as a date (net/retry_after.h): one already past waits nothing") {
    CHECK(error_of(api_response(503, "", {{"Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT"}})).retry_after == 0s);
    CHECK_FALSE(error_of(api_response(503, "", {{"Retry-After", "soon"}})).retry_after.has_value());
  }
  SECTION("a 2xx that is not the expected JSON is uncertain for every JSON reader") {
    for (const char* body : {"<html>ok</html>", "", R"({"id":)", R"({"threadId":"t1"})", "[]"}) {
      INFO(body);
      const auto sent = read_sent(api_response(200, body));
      REQUIRE_FALSE(sent.has_value());
      CHECK(sent.error().kind == ApiErrorKind::uncertain);
      CHECK(sent.error().status == 200);
    }
    CHECK(read_profile(api_response(200, R"({"emailAddress":"a@b"})")).error().kind == ApiErrorKind::uncertain);
    CHECK(read_history(api_response(200, "{}")).error().kind == ApiErrorKind::uncertain);
    CHECK(read_list(api_response(200, R"({"messages":[{"threadId":"t"}]})")).error().kind == ApiErrorKind::uncertain);
    CHECK(read_labels(api_response(200, R"({"labels":[{"name":"x"}]})")).error().kind == ApiErrorKind::uncertain);
    CHECK(read_label(api_response(204, "")).error().kind == ApiErrorKind::uncertain);
  }
  SECTION("read_body and read_ok classify failures too") {
    CHECK(read_body(api_response(404, "")).error().kind == ApiErrorKind::not_found);
    CHECK(read_body(transport_failure(net::TransportErrorKind::too_large)).error().kind == ApiErrorKind::uncertain);
  }
  SECTION("retryable") {
    CHECK(retryable(ApiErrorKind::unauthorized));
    CHECK(retryable(ApiErrorKind::rate_limited));
    CHECK(retryable(ApiErrorKind::server));
    CHECK(retryable(ApiErrorKind::unreachable));
    CHECK_FALSE(retryable(ApiErrorKind::uncertain));
    CHECK_FALSE(retryable(ApiErrorKind::not_found));
    CHECK_FALSE(retryable(ApiErrorKind::permanent));
    CHECK(to_string(ApiErrorKind::not_found) == "not_found");
  }
  SECTION("an error message quotes Google's message, bounded") {
    const auto error = error_of(api_response(400, google_error(400, "invalidArgument", std::string(5000, 'x'), "")));
    CHECK(error.message.size() < 300);
  }
}

TEST_CASE("gmail api: search queries", "[gmail]") {
  CHECK(query_after(std::chrono::sys_seconds{1'700'000'000s}) == "after:1700000000");
  CHECK(query_message_id("<dispatchd.7f3a@mail.example.com>") ==
        "rfc822msgid:dispatchd.7f3a@mail.example.com in:anywhere");
  CHECK(query_message_id("dispatchd.7f3a@mail.example.com") ==
        "rfc822msgid:dispatchd.7f3a@mail.example.com in:anywhere");
}
