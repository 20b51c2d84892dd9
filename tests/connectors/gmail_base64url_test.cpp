#include "connectors/gmail/base64url.h"

#include <catch2/catch.hpp>
#include <string>

using dispatchd::gmail::base64url_decode;
using dispatchd::gmail::base64url_encode;

TEST_CASE("base64url: RFC 4648 test vectors, unpadded, and back") {
  const std::pair<std::string, std::string> vectors[] = {
      {"", ""},           {"f", "Zg"},          {"fo", "Zm8"},         {"foo", "Zm9v"},
      {"foob", "Zm9vYg"}, {"fooba", "Zm9vYmE"}, {"foobar", "Zm9vYmFy"}};
  for (const auto& [bytes, text] : vectors) {
    CHECK(base64url_encode(bytes) == text);
    CHECK(base64url_decode(text) == bytes);
  }
}

TEST_CASE("base64url: the URL-safe alphabet, padding accepted at the end only") {
  const std::string bytes = "\xfb\xff\xfe";
  CHECK(base64url_encode(bytes) == "-__-");
  CHECK(base64url_decode("-__-") == bytes);
  CHECK(base64url_decode("Zm8=") == "fo");
  CHECK(base64url_decode("Zg==") == "f");
  CHECK_FALSE(base64url_decode("+//+"));  // the standard alphabet is not base64url
  CHECK_FALSE(
      base64url_decode("Zg=="
                       "Zg=="));  // padding in the middle
  CHECK_FALSE(base64url_decode("Zm9=v"));
  CHECK_FALSE(base64url_decode("Z"));       // no length has a remainder of 1
  CHECK_FALSE(base64url_decode("Zh"));      // leftover bits set: "Zg" is the only spelling of "f"
  CHECK_FALSE(base64url_decode("Zm9v\n"));  // no whitespace
}

TEST_CASE("base64url: every byte value round-trips") {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  for (std::size_t n = 0; n <= all.size(); n += 37)
    CHECK(base64url_decode(base64url_encode(all.substr(0, n))) == all.substr(0, n));
}
