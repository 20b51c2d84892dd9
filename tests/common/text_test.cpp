#include <catch2/catch.hpp>
#include <string>

#include "common/text.h"

using namespace dispatchd;

TEST_CASE("text::quote escapes and shortens what it quotes", "[text]") {
  CHECK(text::quote("hi") == "\"hi\"");
  CHECK(text::quote("a\"b\\c\nd") == "\"a\\\"b\\\\c\\nd\"");
  CHECK(text::quote(std::string(100, 'x'), 5) == "\"xxxxx…\"");
  CHECK(text::quote("\xC3\xB1\xC3\xB1\xC3\xB1", 2) == "\"\xC3\xB1\xC3\xB1…\"");  // cut between characters
  CHECK(text::quote(std::string("\x01", 1)) == "\"\\x01\"");
  CHECK(text::quote("bad \xFF byte").find("\\xff") != std::string::npos);
}

TEST_CASE("text::pointer_token escapes per RFC 6901", "[text]") {
  CHECK(text::pointer_token("a/b~c") == "a~1b~0c");
  CHECK(text::pointer_token("plain") == "plain");
}

TEST_CASE("text::edit_distance is capped", "[text]") {
  CHECK(text::edit_distance("kitten", "sitting", 5) == 3);
  CHECK(text::edit_distance("same", "same", 2) == 0);
  CHECK(text::edit_distance("a", "abcdefgh", 2) == 3);  // cap + 1 without computing
  CHECK(text::edit_distance("abcd", "wxyz", 2) == 3);
}

TEST_CASE("text::constant_time_equal compares every byte and the length", "[text]") {
  CHECK(text::constant_time_equal("s3cret-token", "s3cret-token"));
  CHECK(text::constant_time_equal("", ""));
  CHECK_FALSE(text::constant_time_equal("s3cret-token", "x3cret-token"));  // first byte
  CHECK_FALSE(text::constant_time_equal("s3cret-token", "s3cret-tokem"));  // last byte
  CHECK_FALSE(text::constant_time_equal("s3cret-token", "s3cret-toke"));   // a prefix
  CHECK_FALSE(text::constant_time_equal("s3cret", "s3cret-token"));
  CHECK_FALSE(text::constant_time_equal("", "x"));
  // Bytes, not C strings: a NUL does not end the comparison, and high bits count.
  CHECK(text::constant_time_equal(std::string("a\0b", 3), std::string("a\0b", 3)));
  CHECK_FALSE(text::constant_time_equal(std::string("a\0b", 3), std::string("a\0c", 3)));
  CHECK_FALSE(text::constant_time_equal("\x80", "\x00"));
  CHECK_FALSE(text::constant_time_equal("\xFF\xFF", "\xFF\x7F"));
}

TEST_CASE("text::form_decode reads what URLSearchParams writes", "[text]") {
  CHECK(text::form_decode("factura+de+octubre") == "factura de octubre");
  CHECK(text::form_decode("%2B52%201%2055") == "+52 1 55");
  CHECK(text::form_decode("ana%40example.com") == "ana@example.com");
  CHECK(text::form_decode("%C2%BFfactura%3F") ==
        "\xC2\xBF"
        "factura?");
  CHECK(text::form_decode("a%2b") == "a+");
  CHECK(text::form_decode("") == "");
  CHECK_FALSE(text::form_decode("100%"));
  CHECK_FALSE(text::form_decode("100%2"));
  CHECK_FALSE(text::form_decode("%zz"));
}
