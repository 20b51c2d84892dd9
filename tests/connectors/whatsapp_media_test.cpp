// Downloading a customer's file from the Cloud API (connectors/whatsapp/media_fetch.h): the
// lookup and the download over a scripted transport, and the tables behind their outcomes.
#include <catch2/catch.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "connectors/whatsapp/media_fetch.h"
#include "tests/fakes/fake_transport.h"

using namespace dispatchd;
using connectors::MediaFetchStatus;

namespace {

const whatsapp::GraphAccount k_account{"http://127.0.0.1:9/v21.0", "109876543210001", "EAAGtoken123"};
const std::string k_digest = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

std::string info(const std::string& url, std::int64_t size = 11) {
  return R"({"messaging_product":"whatsapp","url":")" + url + R"(","mime_type":"image/jpeg","sha256":")" + k_digest +
         R"(","file_size":")" + std::to_string(size) + R"(","id":"1013859600285441"})";
}

std::string header(const net::HttpRequest& request, const std::string& name) {
  for (const auto& [key, value] : request.headers.fields())
    if (key == name) return value;
  return {};
}

struct Run {
  boost::asio::io_context io;
  fakes::FakeTransport transport{io};
  std::shared_ptr<int> alive = std::make_shared<int>(0);
  std::string received;
  int chunks = 0;
  std::size_t stop_after = 0;  // 0: never stop
  std::optional<connectors::MediaFetchResult> result;

  void fetch(std::int64_t max_bytes = 1000) {
    const connectors::Post post = [this](std::move_only_function<void()> f) { boost::asio::post(io, std::move(f)); };
    whatsapp::fetch_media(
        transport, post, k_account, {"1013859600285441", max_bytes, std::chrono::seconds(30)},
        [this](std::string_view bytes) {
          received += bytes;
          ++chunks;
          return stop_after == 0 || received.size() < stop_after;
        },
        [this](connectors::MediaFetchResult r) { result = std::move(r); }, alive);
    io.run();
  }
};

}  // namespace

TEST_CASE("whatsapp media: looked up, then downloaded with the token, the bytes streamed in order", "[media]") {
  Run run;
  run.transport.stream_chunk = 4;
  run.transport.push_response(200, info("http://127.0.0.1:9/download/abc?ext=1"));
  run.transport.push_response(200, "hello world");
  run.fetch();
  REQUIRE(run.result);
  CHECK(run.result->status == MediaFetchStatus::complete);
  CHECK(run.result->content_type == "image/jpeg");
  CHECK(run.result->sha256 == k_digest);
  CHECK(run.received == "hello world");
  CHECK(run.chunks == 3);
  const auto& requests = run.transport.requests();
  REQUIRE(requests.size() == 2);
  CHECK(requests[0].method == "GET");
  CHECK(requests[0].url == "http://127.0.0.1:9/v21.0/1013859600285441");
  CHECK(header(requests[0], "Authorization") == "Bearer EAAGtoken123");
  CHECK(requests[1].url == "http://127.0.0.1:9/download/abc?ext=1");
  CHECK(header(requests[1], "Authorization") == "Bearer EAAGtoken123");
  CHECK(requests[1].max_response_bytes == 1001);
}

TEST_CASE("whatsapp media: the token never goes to a download URL elsewhere than https or Graph", "[media]") {
  Run run;
  run.transport.push_response(200, info("http://files.example.test/abc"));
  run.fetch();
  REQUIRE(run.result);
  CHECK(run.result->status == MediaFetchStatus::refused);
  CHECK(run.transport.requests().size() == 1);
}

TEST_CASE("whatsapp media: a size Graph states over the cap is too large, nothing downloaded", "[media]") {
  Run run;
  run.transport.push_response(200, info("http://127.0.0.1:9/download/abc", 52'428'800));
  run.fetch(25 * 1024 * 1024);
  REQUIRE(run.result);
  CHECK(run.result->status == MediaFetchStatus::too_large);
  CHECK(run.result->why.find("52428800") != std::string::npos);
  CHECK(run.transport.requests().size() == 1);
}

TEST_CASE("whatsapp media: an expired download URL, a receiver that stops, a transport cap", "[media]") {
  SECTION("the URL answers 404: fetched again later, looked up anew") {
    Run run;
    run.transport.push_response(200, info("http://127.0.0.1:9/download/abc"));
    run.transport.push_response(404, "URL signature expired");
    run.fetch();
    REQUIRE(run.result);
    CHECK(run.result->status == MediaFetchStatus::retry);
    CHECK(run.result->why.find("expired") != std::string::npos);
    CHECK(run.received.empty());  // the error page is not the file
  }
  SECTION("the receiver stops") {
    Run run;
    run.transport.stream_chunk = 2;
    run.stop_after = 4;
    run.transport.push_response(200, info("http://127.0.0.1:9/download/abc"));
    run.transport.push_response(200, "0123456789");
    run.fetch();
    REQUIRE(run.result);
    CHECK(run.result->status == MediaFetchStatus::stopped);
    CHECK(run.received == "0123");
  }
  SECTION("the transport's cap") {
    Run run;
    run.transport.push_response(200, info("http://127.0.0.1:9/download/abc"));
    run.transport.push_error(net::TransportErrorKind::too_large, "response larger than 1001 bytes");
    run.fetch();
    REQUIRE(run.result);
    CHECK(run.result->status == MediaFetchStatus::too_large);
  }
  SECTION("a media id that is not a plain token is refused without a request") {
    Run run;
    boost::asio::io_context& io = run.io;
    const connectors::Post post = [&io](std::move_only_function<void()> f) { boost::asio::post(io, std::move(f)); };
    whatsapp::fetch_media(
        run.transport, post, k_account, {"../../me", 1000, std::chrono::seconds(30)},
        [](std::string_view) { return true; }, [&run](connectors::MediaFetchResult r) { run.result = std::move(r); },
        run.alive);
    CHECK_FALSE(run.result);  // never from inside the call
    io.run();
    REQUIRE(run.result);
    CHECK(run.result->status == MediaFetchStatus::refused);
    CHECK(run.transport.requests().empty());
  }
}

TEST_CASE("whatsapp media: the channel gone, nothing is answered", "[media]") {
  Run run;
  run.transport.push_response(200, info("http://127.0.0.1:9/download/abc"));
  run.transport.push_response(200, "bytes");
  run.alive.reset();
  run.fetch();
  CHECK_FALSE(run.result);
  CHECK(run.received.empty());
}

TEST_CASE("whatsapp media: what a lookup's refusal means", "[media]") {
  struct Row {
    int status;
    std::string body;
    MediaFetchStatus expected;
  };
  const std::vector<Row> rows = {
      {404, "", MediaFetchStatus::expired},
      {400,
       R"({"error":{"message":"Unsupported get request. Object with ID '1' does not exist","type":"GraphMethodException","code":100,"error_subcode":33}})",
       MediaFetchStatus::expired},
      {401, R"({"error":{"message":"Error validating access token","type":"OAuthException","code":190}})",
       MediaFetchStatus::retry},
      {429, "", MediaFetchStatus::retry},
      {503, R"({"error":{"message":"Service temporarily unavailable","code":2}})", MediaFetchStatus::retry},
      {500, "", MediaFetchStatus::retry},
      {400, R"({"error":{"message":"something else","code":131026}})", MediaFetchStatus::refused},
      {403, "", MediaFetchStatus::refused},
  };
  for (const auto& row : rows) {
    INFO(row.status << " " << row.body);
    const auto result = whatsapp::lookup_failure(row.status, row.body, std::nullopt);
    CHECK(result.status == row.expected);
    CHECK(result.why.starts_with("lookup: "));
  }
  CHECK(whatsapp::lookup_failure(429, "", std::chrono::seconds(30)).retry_after == std::chrono::seconds(30));
}

TEST_CASE("whatsapp media: what a download's status means", "[media]") {
  const std::vector<std::pair<int, MediaFetchStatus>> rows = {
      {200, MediaFetchStatus::complete}, {206, MediaFetchStatus::complete}, {401, MediaFetchStatus::retry},
      {403, MediaFetchStatus::retry},    {404, MediaFetchStatus::retry},    {410, MediaFetchStatus::retry},
      {500, MediaFetchStatus::retry},    {302, MediaFetchStatus::retry},
  };
  for (const auto& [status, expected] : rows) {
    INFO(status);
    CHECK(whatsapp::download_result(status, "audio/ogg").status == expected);
  }
  CHECK(whatsapp::download_result(200, "audio/ogg").content_type == "audio/ogg");
}
