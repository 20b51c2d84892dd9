// The Graph API's "Retrieve Media URL" answer, as tables: the documented example, each way
// the answer can be wrong, and where the access token may be sent.
#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "connectors/whatsapp/media_info.h"

using namespace dispatchd::whatsapp;

namespace {

constexpr std::string_view k_graph = "https://graph.facebook.com/v21.0";
constexpr std::string_view k_fake_graph = "http://127.0.0.1:8089/v21.0";
constexpr std::string_view k_hash = "81d3bd8a8db4868c9520ed47186e8b7c5789e61ff79f7f834be6950b808a90d3";
constexpr std::string_view k_lookaside =
    "https://lookaside.fbsbx.com/whatsapp_business/attachments/?mid=2621233374848975&ext=1723032345&hash=ATsx";

// An answer with every member as documented, one of them replaced (or left out with
// `std::nullopt` as its value) by `field`/`raw`: a raw JSON value.
std::string media_answer(std::string_view field = "", std::optional<std::string> raw = std::string()) {
  const std::pair<std::string_view, std::string> members[] = {
      {"messaging_product", "\"whatsapp\""}, {"url", "\"" + std::string(k_lookaside) + "\""},
      {"mime_type", "\"image/jpeg\""},       {"sha256", "\"" + std::string(k_hash) + "\""},
      {"file_size", "\"303833\""},           {"id", "\"2621233374848975\""},
  };
  std::string out = "{";
  for (const auto& [name, value] : members) {
    if (name == field && !raw) continue;
    if (out.size() > 1) out += ",";
    out += "\"" + std::string(name) + "\":" + (name == field ? *raw : value);
  }
  return out + "}";
}

}  // namespace

TEST_CASE("media info: the documented example") {
  const std::string body = R"({
    "messaging_product": "whatsapp",
    "url": "https://lookaside.fbsbx.com/whatsapp_business/attachments/?mid=2621233374848975&ext=1723032345&hash=ATsx",
    "mime_type": "audio/ogg; codecs=opus",
    "sha256": "81d3bd8a8db4868c9520ed47186e8b7c5789e61ff79f7f834be6950b808a90d3",
    "file_size": "303833",
    "id": "2621233374848975"
  })";
  const auto info = parse_media_info(body, k_graph);
  REQUIRE(info.has_value());
  CHECK(info->url == k_lookaside);
  CHECK(info->mime_type == "audio/ogg; codecs=opus");
  CHECK(info->sha256 == k_hash);
  CHECK(info->file_size == 303833);
  CHECK(info->id == "2621233374848975");
}

TEST_CASE("media info: what each member may be") {
  struct Row {
    const char* what;
    std::string body;
    std::string_view base;
    std::optional<MediaInfoErrorCode> refused;  // nullopt: read
    std::optional<std::int64_t> file_size = 303833;
    std::string_view sha256 = k_hash;
  };
  const std::string upper_hash = "81D3BD8A8DB4868C9520ED47186E8B7C5789E61FF79F7F834BE6950B808A90D3";
  const Row rows[] = {
      {"as documented", media_answer(), k_graph, std::nullopt},
      {"file_size as a JSON integer", media_answer("file_size", "303833"), k_graph, std::nullopt},
      {"file_size left out", media_answer("file_size", std::nullopt), k_graph, std::nullopt, std::nullopt},
      {"file_size null", media_answer("file_size", "null"), k_graph, std::nullopt, std::nullopt},
      {"file_size zero", media_answer("file_size", "\"0\""), k_graph, std::nullopt, 0},
      {"file_size of 18 digits", media_answer("file_size", "\"999999999999999999\""), k_graph, std::nullopt,
       999'999'999'999'999'999},
      {"an upper-case hash, read lower-case", media_answer("sha256", "\"" + upper_hash + "\""), k_graph, std::nullopt},
      {"messaging_product left out", media_answer("messaging_product", std::nullopt), k_graph, std::nullopt},
      {"a member this version does not know", media_answer("id", "\"1\",\"extra\":[1,{}]"), k_graph, std::nullopt},
      {"a media URL on the fake Graph's own origin", media_answer("url", "\"http://127.0.0.1:8089/media/1\""),
       k_fake_graph, std::nullopt},
      // not JSON
      {"empty", "", k_graph, MediaInfoErrorCode::not_json},
      {"HTML from a proxy", "<html>502 Bad Gateway</html>", k_graph, MediaInfoErrorCode::not_json},
      {"truncated", media_answer().substr(0, 40), k_graph, MediaInfoErrorCode::not_json},
      {"a duplicate key", media_answer("id", "\"1\",\"url\":\"https://evil.test/\""), k_graph,
       MediaInfoErrorCode::not_json},
      {"over 64 KiB", media_answer("id", "\"1\",\"pad\":\"" + std::string(65536, 'a') + "\""), k_graph,
       MediaInfoErrorCode::too_large},
      // the wrong shape
      {"an array", "[" + media_answer() + "]", k_graph, MediaInfoErrorCode::wrong_shape},
      {"a Graph error object", R"({"error":{"message":"Unsupported get request","code":100}})", k_graph,
       MediaInfoErrorCode::wrong_shape},
      {"another messaging_product", media_answer("messaging_product", "\"instagram\""), k_graph,
       MediaInfoErrorCode::wrong_shape},
      {"url missing", media_answer("url", std::nullopt), k_graph, MediaInfoErrorCode::wrong_shape},
      {"url empty", media_answer("url", "\"\""), k_graph, MediaInfoErrorCode::wrong_shape},
      {"url a number", media_answer("url", "1"), k_graph, MediaInfoErrorCode::wrong_shape},
      {"mime_type missing", media_answer("mime_type", std::nullopt), k_graph, MediaInfoErrorCode::wrong_shape},
      {"mime_type null", media_answer("mime_type", "null"), k_graph, MediaInfoErrorCode::wrong_shape},
      {"id missing", media_answer("id", std::nullopt), k_graph, MediaInfoErrorCode::wrong_shape},
      {"id a number", media_answer("id", "2621233374848975"), k_graph, MediaInfoErrorCode::wrong_shape},
      {"sha256 missing", media_answer("sha256", std::nullopt), k_graph, MediaInfoErrorCode::wrong_shape},
      {"sha256 empty", media_answer("sha256", "\"\""), k_graph, MediaInfoErrorCode::wrong_shape},
      {"sha256 as base64 (the webhook's form)",
       media_answer("sha256", "\"gdO9io22SGyVIO1HGG6LfFeJ5h/3n382vmlQuwiKkNM=\""), k_graph,
       MediaInfoErrorCode::wrong_shape},
      {"sha256 one digit short", media_answer("sha256", "\"" + std::string(k_hash.substr(1)) + "\""), k_graph,
       MediaInfoErrorCode::wrong_shape},
      {"sha256 with a letter past f", media_answer("sha256", "\"" + std::string(k_hash.substr(1)) + "g\""), k_graph,
       MediaInfoErrorCode::wrong_shape},
      {"file_size negative", media_answer("file_size", "-1"), k_graph, MediaInfoErrorCode::wrong_shape},
      {"file_size negative in a string", media_answer("file_size", "\"-1\""), k_graph, MediaInfoErrorCode::wrong_shape},
      {"file_size a fraction", media_answer("file_size", "1.5"), k_graph, MediaInfoErrorCode::wrong_shape},
      {"file_size 1.0", media_answer("file_size", "1.0"), k_graph, MediaInfoErrorCode::wrong_shape},
      {"file_size an empty string", media_answer("file_size", "\"\""), k_graph, MediaInfoErrorCode::wrong_shape},
      {"file_size with a sign", media_answer("file_size", "\"+12\""), k_graph, MediaInfoErrorCode::wrong_shape},
      {"file_size with a space", media_answer("file_size", "\" 12\""), k_graph, MediaInfoErrorCode::wrong_shape},
      {"file_size with a unit", media_answer("file_size", "\"12KB\""), k_graph, MediaInfoErrorCode::wrong_shape},
      {"file_size of 19 digits", media_answer("file_size", "\"1000000000000000000\""), k_graph,
       MediaInfoErrorCode::wrong_shape},
      {"file_size past int64", media_answer("file_size", "18446744073709551615"), k_graph,
       MediaInfoErrorCode::wrong_shape},
      {"file_size a boolean", media_answer("file_size", "true"), k_graph, MediaInfoErrorCode::wrong_shape},
      // a URL the token may not go to
      {"plain http to another host", media_answer("url", "\"http://lookaside.fbsbx.com/a\""), k_graph,
       MediaInfoErrorCode::bad_url},
      {"userinfo in the authority", media_answer("url", "\"https://graph.facebook.com@evil.test/a\""), k_graph,
       MediaInfoErrorCode::bad_url},
      {"a file URL", media_answer("url", "\"file:///etc/passwd\""), k_graph, MediaInfoErrorCode::bad_url},
      {"a relative URL", media_answer("url", "\"/v21.0/media\""), k_graph, MediaInfoErrorCode::bad_url},
      {"http to the fake Graph's host on another port", media_answer("url", "\"http://127.0.0.1:8090/media/1\""),
       k_fake_graph, MediaInfoErrorCode::bad_url},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    const auto info = parse_media_info(row.body, row.base);
    if (row.refused) {
      REQUIRE_FALSE(info.has_value());
      CHECK(info.error().code == *row.refused);
      CHECK_FALSE(info.error().message.empty());
      CHECK(info.error().message.find('\n') == std::string::npos);
    } else {
      REQUIRE(info.has_value());
      CHECK(info->file_size == row.file_size);
      CHECK(info->sha256 == row.sha256);
    }
  }
}

TEST_CASE("media info: where the access token may go") {
  struct Row {
    std::string_view url;
    std::string_view graph_base_url;
    bool allowed;
  };
  const Row rows[] = {
      // https anywhere: Meta's media host is not Graph's
      {k_lookaside, k_graph, true},
      {"https://graph.facebook.com/v21.0/123", k_graph, true},
      {"HTTPS://Lookaside.FBSBX.com/a", k_graph, true},
      {"https://lookaside.fbsbx.com", k_graph, true},
      {"https://lookaside.fbsbx.com:443/a", k_graph, true},
      {"https://lookaside.fbsbx.com?mid=1", k_graph, true},
      {"https://[2a03:2880:f10c::1]/a", k_graph, true},
      {"https://[2a03:2880:f10c::1]:8443/a", k_graph, true},
      {"https://127.0.0.1:8089/a", k_fake_graph, true},
      // http only to the Graph API's own origin
      {"http://127.0.0.1:8089/media/1", k_fake_graph, true},
      {"http://127.0.0.1:8089", k_fake_graph, true},
      {"HTTP://127.0.0.1:8089/a", k_fake_graph, true},
      {"http://LOCALHOST:8089/a", "http://localhost:8089", true},
      {"http://127.0.0.1:8090/media/1", k_fake_graph, false},
      {"http://127.0.0.1/media/1", k_fake_graph, false},
      {"http://localhost:8089/media/1", k_fake_graph, false},
      {"http://127.0.0.1:8089/a", "https://127.0.0.1:8089/v21.0", false},
      {"http://graph.facebook.com/v21.0/1", k_graph, false},
      {"http://lookaside.fbsbx.com/a", k_graph, false},
      {"http://127.0.0.1:8089/a", "not a url", false},
      {"http://127.0.0.1:8089/a", "", false},
      // refused whatever the scheme
      {"https://user:pass@lookaside.fbsbx.com/a", k_graph, false},
      {"https://graph.facebook.com@evil.test/", k_graph, false},
      {"http://127.0.0.1:8089@evil.test/", k_fake_graph, false},
      {"https:///a", k_graph, false},
      {"https://:443/a", k_graph, false},
      {"https://", k_graph, false},
      {"https://[]/a", k_graph, false},
      {"https://[::1/a", k_graph, false},
      {"https://[::1]x/a", k_graph, false},
      {"https://[fe80::1%25eth0]/a", k_graph, false},
      {"https://lookaside.fbsbx.com:/a", k_graph, false},
      {"https://lookaside.fbsbx.com:0/a", k_graph, false},
      {"https://lookaside.fbsbx.com:65536/a", k_graph, false},
      {"https://lookaside.fbsbx.com:0443/a", k_graph, false},
      {"http://127.0.0.1:08089/media/1", k_fake_graph, false},
      {"https://lookaside.fbsbx.com:-1/a", k_graph, false},
      {"https://lookaside.fbsbx.com:443:443/a", k_graph, false},
      {"https://evil%2etest/a", k_graph, false},
      {"https://lookaside.fbsbx.com /a", k_graph, false},
      {"https://lookaside.fbsbx.com/a b", k_graph, false},
      {" https://lookaside.fbsbx.com/a", k_graph, false},
      {"https://lookaside.fbsbx.com/a\r\nX-Injected: 1", k_graph, false},
      {"https://lookaside.fbsbx.com/a\t", k_graph, false},
      {"https://evil.test\\@lookaside.fbsbx.com/", k_graph, false},
      {"https://l\xC3\xB6okaside.fbsbx.com/a", k_graph, false},
      {"ftp://lookaside.fbsbx.com/a", k_graph, false},
      {"file:///etc/passwd", k_graph, false},
      {"javascript:alert(1)", k_graph, false},
      {"//lookaside.fbsbx.com/a", k_graph, false},
      {"lookaside.fbsbx.com/a", k_graph, false},
      {"", k_graph, false},
  };
  for (const Row& row : rows) {
    INFO(row.url << " with graph " << row.graph_base_url);
    CHECK(may_send_token_to(row.url, row.graph_base_url) == row.allowed);
  }
}
