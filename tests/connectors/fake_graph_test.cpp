#include <utility>  // first: Boost 1.74's Asio uses std::exchange without including it

#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "connectors/whatsapp/graph.h"
#include "net/retry_after.h"
#include "tests/fakes/fake_graph.h"
#include "tests/fakes/graph_interactive.h"
#include "tests/fakes/graph_template.h"
#include "tests/test_util.h"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using namespace std::chrono_literals;
using dispatchd::fakes::FakeGraph;
using dispatchd::fakes::ScriptedReply;
using namespace dispatchd::whatsapp;

namespace {

struct Answer {
  int status = 0;
  std::string body;
  std::string retry_after;
};

// A plain blocking Beast client: sends `request` (whose URL must be the fake's) and reads
// the answer. Only for this test; the daemon uses the net/ transport.
Answer send(std::uint16_t port, const dispatchd::net::HttpRequest& request) {
  const std::string prefix = "http://127.0.0.1:" + std::to_string(port);
  REQUIRE(request.url.starts_with(prefix));
  asio::io_context ioc;
  beast::tcp_stream stream(ioc);
  stream.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  http::request<http::string_body> req{http::string_to_verb(request.method), request.url.substr(prefix.size()), 11};
  req.set(http::field::host, "127.0.0.1");
  for (const auto& [name, value] : request.headers.fields()) req.set(name, value);
  req.body() = request.body;
  req.prepare_payload();
  http::write(stream, req);
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::read(stream, buffer, res);
  beast::error_code ignored;
  stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  return {static_cast<int>(res.result_int()), res.body(), std::string(res[http::field::retry_after])};
}

GraphAccount account_for(const FakeGraph& fake, std::string token = "test-token") {
  return {fake.base_url(), "109876543210001", std::move(token)};
}

std::expected<Sent, SendFailure> send_text(const FakeGraph& fake, const std::string& text,
                                           std::string token = "test-token") {
  const auto request = build_text_message(account_for(fake, std::move(token)), "5215512345678", text, "dispatchd-7-1");
  REQUIRE(request.has_value());
  const Answer answer = send(fake.port(), *request);
  return read_send_response(
      answer.status, answer.body,
      net::retry_after_seconds({{"Retry-After", answer.retry_after}}, std::chrono::system_clock::now()));
}

}  // namespace

TEST_CASE("fake graph: a text message round trip is recorded with a generated wamid") {
  FakeGraph fake;
  const auto first = send_text(fake, "Hola, s\xC3\xAD tenemos env\xC3\xADo.");
  const auto second = send_text(fake, "Segundo");
  REQUIRE(first.has_value());
  REQUIRE(second.has_value());
  CHECK(first->message_id.starts_with("wamid."));
  CHECK(first->message_id != second->message_id);

  const auto requests = fake.requests();
  REQUIRE(requests.size() == 2);
  const auto& r = requests[0];
  CHECK(r.method == "POST");
  CHECK(r.target == "/v21.0/109876543210001/messages");
  CHECK(r.messaging_product == "whatsapp");
  CHECK(r.to == "5215512345678");
  CHECK(r.type == "text");
  CHECK(r.text == "Hola, s\xC3\xAD tenemos env\xC3\xADo.");
  CHECK(r.tracker == "dispatchd-7-1");
  CHECK(r.answered_status == 200);
  CHECK(r.answered_wamid == first->message_id);
  bool has_auth = false;
  for (const auto& [name, value] : r.headers) has_auth |= name == "Authorization" && value == "Bearer test-token";
  CHECK(has_auth);

  const auto line = dispatchd::test::parse_json(dispatchd::fakes::to_json_line(r));
  CHECK(std::string(line["event"].GetString()) == "request");
  CHECK(std::string(line["wamid"].GetString()) == first->message_id);
  CHECK(line["answered"].GetInt() == 200);
  CHECK(line["received_ns"].GetInt64() ==
        std::chrono::duration_cast<std::chrono::nanoseconds>(r.received.time_since_epoch()).count());
  CHECK(line["received_ns"].GetInt64() > 0);
}

// The fake's own check of interactive payloads (graph_interactive.h) agrees with the
// builder's requests and refuses each kind of malformed one.
TEST_CASE("fake graph: interactive messages are accepted in Meta's shape only") {
  using dispatchd::interactive::Kind;
  FakeGraph fake;
  const dispatchd::interactive::Choices buttons{Kind::buttons, {{"y", "Yes"}, {"n", "No"}}, {}, {}};
  const auto request = build_interactive_message(account_for(fake), "5215512345678", "Ship it?", buttons, "k-1");
  REQUIRE(request.has_value());
  const Answer answer = send(fake.port(), *request);
  CHECK(answer.status == 200);
  REQUIRE(fake.requests().size() == 1);
  CHECK(fake.requests()[0].type == "interactive");
  const auto line = dispatchd::test::parse_json(dispatchd::fakes::to_json_line(fake.requests()[0]));
  CHECK(std::string(line["payload"].GetString()) == request->body);

  const std::string head =
      R"({"messaging_product":"whatsapp","recipient_type":"individual","to":"1","type":"interactive","interactive":)";
  struct Row {
    std::string interactive;
    const char* problem;  // "" when accepted
  };
  const Row rows[] = {
      {R"({"type":"button","body":{"text":"B"},"action":{"buttons":[{"type":"reply","reply":{"id":"a","title":"A"}}]}})",
       ""},
      {R"({"type":"button","body":{"text":"B"},"action":{"buttons":[{"type":"reply","reply":{"id":"a","title":"A"}},)"
       R"({"type":"reply","reply":{"id":"b","title":"B"}},{"type":"reply","reply":{"id":"c","title":"C"}},)"
       R"({"type":"reply","reply":{"id":"d","title":"D"}}]}})",
       "1 to 3 buttons"},
      {R"({"type":"button","body":{"text":"B"},"action":{"buttons":[{"id":"a","title":"A"}]}})",
       "a button is {type: reply, reply}"},
      {R"({"type":"button","body":{"text":"B"},"action":{"buttons":[{"type":"reply","reply":{"id":"a","title":")" +
           std::string(21, 'x') + R"("}}]}})",
       "a button title is 1 to 20 characters"},
      {R"({"type":"list","body":{"text":"B"},"action":{"button":"L","sections":[{"title":"S","rows":[{"id":"a","title":"A"}]}]}})",
       ""},
      {R"({"type":"list","body":{"text":"B"},"action":{"button":"L","sections":[{"rows":[{"id":"a","title":"A"}]}]}})",
       "a section is {title (1 to 24 characters), rows}"},
      {R"({"type":"list","body":{"text":"B"},"action":{"button":"L","sections":[{"title":"S","rows":[{"id":"a","title":"A","description":null}]}]}})",
       "a row description is at most 72 characters"},
      {R"({"type":"list","body":"B","action":{}})", "body is {text}"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.interactive);
    const auto problem = dispatchd::fakes::interactive_problem(head + row.interactive + "}");
    CHECK(problem.value_or("") == row.problem);
  }
}

TEST_CASE("fake graph: template messages must fit a template it serves") {
  const auto templates = dispatchd::fakes::FakeGraphOptions::default_templates();
  const std::string head =
      R"({"messaging_product":"whatsapp","recipient_type":"individual","to":"1","type":"template","template":)";
  struct Row {
    std::string object;
    int code;  // 0 when accepted
  };
  const Row rows[] = {
      {R"({"name":"spring_sale","language":{"code":"es"},"components":[{"type":"body","parameters":[)"
       R"({"type":"text","text":"20%"}]},{"type":"button","sub_type":"quick_reply","index":"0","parameters":[)"
       R"({"type":"payload","payload":"OFFERS"}]}]})",
       0},
      {R"({"name":"appointment_reminder","language":{"code":"es"},"components":[{"type":"body","parameters":[)"
       R"({"type":"text","parameter_name":"customer_name","text":"Ana"},)"
       R"({"type":"text","parameter_name":"date","text":"12/12"}]}]})",
       0},
      {R"({"name":"spring_sale","language":{"code":"en_US"},"components":[]})", 132001},
      {R"({"name":"spring_sale","language":{"code":"es"},"components":[]})", 132000},
      {R"({"name":"appointment_reminder","language":{"code":"es"},"components":[{"type":"body","parameters":[)"
       R"({"type":"text","text":"Ana"},{"type":"text","text":"12/12"}]}]})",
       100},
      {R"({"name":"spring_sale","language":{"code":"es"},"components":[{"type":"body","parameters":[)"
       R"({"type":"text","text":""}]}]})",
       100},
      {R"({"name":"spring_sale","language":{"code":"es"},"components":[{"type":"body","parameters":[)"
       R"({"type":"text","text":"20%"}]},{"type":"button","sub_type":"url","index":0,"parameters":[)"
       R"({"type":"text","text":"x"}]}]})",
       100},
      {R"({"name":"spring_sale","language":{"code":"es"},"components":[{"type":"body","parameters":[)"
       R"({"type":"text","text":"20%\n\nGRATIS"}]}]})",
       132018},
      {R"({"name":"spring_sale","language":{"code":"es"},"components":[{"type":"body","parameters":[)"
       R"({"type":"text","text":"20%     off"}]}]})",
       132018},
      {R"({"name":"spring_sale","language":{"code":"es"},"components":[{"type":"body","parameters":[)"
       R"({"type":"text","text":"20%    off"}]}]})",
       0},
  };
  for (const auto& row : rows) {
    CAPTURE(row.object);
    const auto problem = dispatchd::fakes::template_problem(head + row.object + "}", templates);
    CHECK((problem ? problem->code : 0) == row.code);
  }
}

TEST_CASE("fake graph: mark as read") {
  FakeGraph fake;
  const auto request = build_mark_read(account_for(fake), "wamid.HBgN123");
  REQUIRE(request.has_value());
  const Answer answer = send(fake.port(), *request);
  CHECK(read_mark_read_response(answer.status, answer.body).has_value());
  REQUIRE(fake.requests().size() == 1);
  CHECK(fake.requests()[0].status == "read");
  CHECK(fake.requests()[0].message_id == "wamid.HBgN123");
}

TEST_CASE("fake graph: a wrong bearer token is refused as Graph does (190, auth)") {
  FakeGraph fake;
  const auto result = send_text(fake, "Hola", "expired-token");
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().kind == ErrorClass::auth);
  CHECK(result.error().error.code == 190);
  CHECK(fake.requests().at(0).answered_status == 401);
}

TEST_CASE("fake graph: scripted errors map to their classes, in order") {
  FakeGraph fake;
  fake.script(ScriptedReply::graph_error(131047));
  fake.script(ScriptedReply::graph_error(130429));
  fake.script(ScriptedReply::graph_error(131056));
  fake.script(ScriptedReply::graph_error(190));
  ScriptedReply throttled = ScriptedReply::status(429);
  throttled.retry_after = "17";
  fake.script(throttled);
  fake.script(ScriptedReply::status(500, "internal error"));
  fake.script(ScriptedReply::graph_error(131026));

  struct Expect {
    ErrorClass kind;
    std::optional<std::int64_t> code;
  };
  const Expect expected[] = {{ErrorClass::window_closed, 131047}, {ErrorClass::retry, 130429},
                             {ErrorClass::retry, 131056},         {ErrorClass::auth, 190},
                             {ErrorClass::retry, std::nullopt},   {ErrorClass::retry, std::nullopt},
                             {ErrorClass::permanent, 131026}};
  for (const Expect& e : expected) {
    const auto result = send_text(fake, "Hola");
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().kind == e.kind);
    CHECK(result.error().error.code == e.code);
  }
  const auto throttled_result = fake.requests().at(4);
  CHECK(throttled_result.answered_status == 429);
  // The script is used up: the next message is sent.
  CHECK(send_text(fake, "Hola").has_value());
  CHECK(fake.requests().size() == 8);
}

TEST_CASE("fake graph: Retry-After reaches the classification") {
  FakeGraph fake;
  ScriptedReply throttled = ScriptedReply::status(429);
  throttled.retry_after = "17";
  fake.script(throttled);
  const auto result = send_text(fake, "Hola");
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().retry_after == 17s);
}

TEST_CASE("fake graph: a scripted delay holds the answer back") {
  FakeGraph fake;
  fake.script(ScriptedReply::delayed(300ms));
  const auto start = std::chrono::steady_clock::now();
  CHECK(send_text(fake, "Hola").has_value());
  CHECK(std::chrono::steady_clock::now() - start >= 300ms);
}

TEST_CASE("fake graph: wrong path, wrong phone number and bad bodies are refused") {
  FakeGraph fake;
  dispatchd::net::HttpRequest request = *build_text_message(account_for(fake), "1", "x");
  SECTION("another phone number id: 400, code 100") {
    request.url = fake.base_url() + "/999/messages";
    const Answer answer = send(fake.port(), request);
    CHECK(answer.status == 400);
    CHECK(read_send_response(answer.status, answer.body).error().error.code == 100);
  }
  SECTION("an unknown path: 404") {
    request.url = fake.base_url() + "/109876543210001/media";
    CHECK(send(fake.port(), request).status == 404);
  }
  SECTION("not JSON: 400") {
    request.body = "to=1&text=x";
    CHECK(send(fake.port(), request).status == 400);
  }
  SECTION("no messaging_product: 400") {
    request.body = R"({"to":"1","type":"text","text":{"body":"x"}})";
    CHECK(send(fake.port(), request).status == 400);
  }
  CHECK(fake.requests().size() == 1);
}

TEST_CASE("fake graph: stops cleanly, also with a client still connected") {
  auto fake = std::make_unique<FakeGraph>();
  asio::io_context ioc;
  beast::tcp_stream idle(ioc);
  idle.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), fake->port()));
  fake->stop();
  fake->stop();  // idempotent
  fake.reset();
  SUCCEED("stopped");
}
