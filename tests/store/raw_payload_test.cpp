// store/raw_payload.h: which payloads are stored as they are and which as base64, and that
// every byte comes back; the stored row through insert_inbound and stored_inbound.
#include <catch2/catch.hpp>

#include <string>

#include "common/utf8.h"
#include "store/inbox.h"
#include "store/raw_payload.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;

TEST_CASE("raw payload: UTF-8 is stored as it is, anything else as base64, every byte back", "[raw_payload]") {
  struct Row {
    std::string bytes;
    bool as_is;
  };
  std::string all_bytes;
  for (int b = 0; b < 256; ++b) all_bytes += static_cast<char>(b);
  const Row rows[] = {
      {"", true},
      {"{\"object\":\"whatsapp_business_account\"}", true},
      {"Subject: \xC2\xBF"
       "Env\xC3\xADo?",
       true},  // UTF-8
      {"Subject: \xBF"
       "Env\xEDo?",
       false},                  // ISO-8859-1
      {"\xC3", false},          // a cut sequence
      {"\xED\xA0\x80", false},  // a surrogate
      {all_bytes, false},
      {all_bytes.substr(0, 255), false},  // the three padding cases
      {all_bytes.substr(0, 254), false},
  };
  for (const auto& row : rows) {
    INFO("size " << row.bytes.size());
    const auto stored = store::store_payload(row.bytes);
    CHECK(stored.encoding.has_value() == !row.as_is);
    if (row.as_is) CHECK(stored.text == row.bytes);
    CHECK(utf8::is_valid(stored.text));
    const auto back = store::payload_bytes(stored.text, stored.encoding);
    REQUIRE(back);
    CHECK(*back == row.bytes);
  }
  CHECK(store::store_payload("\xE9").text == "6Q==");
  CHECK_FALSE(store::payload_bytes("6Q=", std::string("base64")));   // not a whole block
  CHECK_FALSE(store::payload_bytes("6Q*=", std::string("base64")));  // not base64
  CHECK_FALSE(store::payload_bytes("6Q==", std::string("gzip")));    // an encoding never written
}

TEST_CASE("raw payload: a mail in ISO-8859-1 is stored and read back byte for byte", "[raw_payload]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  const std::string raw = "From: jose@cliente.example\r\nSubject: Env\xEDo\r\n\r\n\xBFTienen env\xEDo?\r\n";
  auto stored =
      store::insert_inbound(db, {"gmail", "18c1", "t1", "jose@cliente.example", "\xC2\xBFTienen?", raw}, test::k_t0);
  REQUIRE(stored);
  auto back = store::stored_inbound(db, stored->id);
  REQUIRE(back);
  CHECK(back->raw_payload == raw);
  auto encoding = test::query_int(db, "SELECT count(*) FROM inbox WHERE raw_encoding = 'base64'");
  REQUIRE(encoding);
  CHECK(*encoding == 1);
}
