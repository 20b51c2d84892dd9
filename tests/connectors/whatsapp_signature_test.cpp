#include <catch2/catch.hpp>

#include "connectors/whatsapp/signature.h"
#include "tests/test_util.h"

using dispatchd::whatsapp::sign_body;
using dispatchd::whatsapp::SignatureError;
using dispatchd::whatsapp::verify_signature;

namespace {

constexpr std::string_view k_secret = "app-secret-for-tests";

SignatureError error_of(std::string_view body, std::string_view header, std::string_view secret = k_secret) {
  const auto result = verify_signature(body, header, secret);
  REQUIRE_FALSE(result.has_value());
  return result.error();
}

}  // namespace

TEST_CASE("signature: a known HMAC-SHA256 vector verifies, in either hex case") {
  // An independent vector (published for another webhook provider using the same scheme).
  const std::string body = R"({"examplePayload":true})";
  const std::string hex = "bcdbb89e3031905f3cc1a20d16b5f969a17a7d8fa0c26e4a807c2193402d66f4";
  CHECK(sign_body(body, "my-shared-secret") == "sha256=" + hex);
  CHECK(verify_signature(body, "sha256=" + hex, "my-shared-secret").has_value());
  std::string upper = hex;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  CHECK(verify_signature(body, "sha256=" + upper, "my-shared-secret").has_value());
  CHECK(verify_signature(body, "  sha256=" + hex + " ", "my-shared-secret").has_value());
}

TEST_CASE("signature: verified over the raw bytes Meta sent, backslash-u escapes and all") {
  // Meta serializes with non-ASCII escaped; the fixture keeps those bytes.
  const std::string raw = dispatchd::test::read_file(dispatchd::test::source_path("tests/data/whatsapp/text.json"));
  REQUIRE(raw.find("\\u00bf") != std::string::npos);
  const std::string header = sign_body(raw, k_secret);
  CHECK(verify_signature(raw, header, k_secret).has_value());

  SECTION("the same text with the characters unescaped is a different body") {
    std::string unescaped = raw;
    unescaped.replace(unescaped.find("\\u00bf"), 6, "\xC2\xBF");
    CHECK(error_of(unescaped, header) == SignatureError::mismatch);
  }
  SECTION("re-serialized (whitespace removed) no longer verifies") {
    CHECK(error_of(dispatchd::json::minify(raw), header) == SignatureError::mismatch);
  }
  SECTION("one changed byte fails") {
    std::string tampered = raw;
    tampered[tampered.find("Monterrey")] = 'N';
    CHECK(error_of(tampered, header) == SignatureError::mismatch);
  }
  SECTION("a different secret fails") { CHECK(error_of(raw, header, "another-secret") == SignatureError::mismatch); }
}

TEST_CASE("signature: a missing or malformed header is told apart from a mismatch") {
  const std::string body = R"({"object":"whatsapp_business_account","entry":[]})";
  const std::string good = sign_body(body, k_secret);
  const std::string hex = good.substr(7);
  CHECK(error_of(body, "") == SignatureError::missing);
  CHECK(error_of(body, "   ") == SignatureError::missing);
  CHECK(error_of(body, hex) == SignatureError::malformed);                          // no prefix
  CHECK(error_of(body, "sha1=" + hex.substr(0, 40)) == SignatureError::malformed);  // X-Hub-Signature (SHA-1)
  CHECK(error_of(body, "sha256=" + hex.substr(1)) == SignatureError::malformed);    // 63 digits
  CHECK(error_of(body, "sha256=" + hex + "00") == SignatureError::malformed);       // 66 digits
  CHECK(error_of(body, "sha256=" + std::string(63, 'a') + "g") == SignatureError::malformed);
  CHECK(error_of(body, "SHA256=" + hex) == SignatureError::malformed);
  CHECK(error_of(body, "sha256=" + std::string(64, '0')) == SignatureError::mismatch);
}

TEST_CASE("signature: an empty app secret never verifies, even a body signed with it") {
  const std::string body = "{}";
  CHECK(error_of(body, sign_body(body, ""), "") == SignatureError::no_secret);
}

TEST_CASE("signature: every error has a message that quotes nothing secret") {
  for (const auto error :
       {SignatureError::no_secret, SignatureError::missing, SignatureError::malformed, SignatureError::mismatch}) {
    const std::string message = dispatchd::whatsapp::to_string(error);
    CHECK_FALSE(message.empty());
    CHECK(message.find(k_secret) == std::string::npos);
  }
}
