#include <catch2/catch.hpp>
#include <optional>
#include <string>

#include "tests/test_util.h"
#include "validator/outbound.h"
#include "validator/validator.h"

using namespace dispatchd;

namespace {

std::string outbound_send_to(const std::string& recipient) {
  return R"({"action":"send_message","recipient":")" + recipient + R"(","content":"Hi","priority":"low"})";
}

}  // namespace

TEST_CASE("outbound: every form of the counterpart the policy accepts is sent to the counterpart as stored",
          "[outbound]") {
  struct Row {
    const char* sender;   // the counterpart as the inbox stores it
    const char* written;  // what the reply wrote
  };
  const Row rows[] = {
      {"5215512345678", "5215512345678"},  // as stored: nothing to record
      {"5215512345678", "+5215512345678"},     {"5215512345678", "5215512345678 "},
      {"5215512345678", "+52 1 55 1234 5678"}, {"5215512345678", "52-1-55-1234-5678"},
      {"5215512345678", "52.1.55.1234.5678"},  {"5215512345678", "+52 (1) 55 1234-5678"},
      {"15551234567", "+1 (555) 123-4567"},    {"ana@example.com", "Ana@Example.COM"},
      {"ana@example.com", "ANA@EXAMPLE.COM"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.sender, row.written);
    const auto verdict =
        validator::validate(test::support_en(), outbound_send_to(row.written), {.sender = row.sender, .source = {}});
    REQUIRE(verdict.ok);
    const auto outbound = validator::outbound_of(test::support_en(), verdict, row.sender);
    REQUIRE(outbound);
    CHECK(outbound->recipient == row.sender);
    CHECK(outbound->body == "Hi");
    const std::optional<std::string> written =
        std::string(row.written) == row.sender ? std::nullopt : std::optional<std::string>(row.written);
    CHECK(outbound->recipient_written == written);
  }
}

TEST_CASE("outbound: a recipient that is not the counterpart is never sent to", "[outbound]") {
  // A verdict checked without a sender (recipient_unchecked) does not make another number the
  // counterpart's.
  const auto unchecked = validator::validate(test::support_en(), outbound_send_to("15559999999"), {});
  REQUIRE(unchecked.ok);
  CHECK_FALSE(validator::outbound_of(test::support_en(), unchecked, "15551234567"));
}

TEST_CASE("outbound: only a valid reply action sends anything", "[outbound]") {
  const auto escalate = validator::validate(
      test::support_en(),
      R"({"action":"escalate_to_human","recipient":"15551234567","content":"a manager","priority":"high"})",
      {.sender = "15551234567", .source = {}});
  REQUIRE(escalate.ok);
  CHECK_FALSE(validator::outbound_of(test::support_en(), escalate, "15551234567"));
  const auto refused =
      validator::validate(test::support_en(), outbound_send_to("15559999999"), {.sender = "15551234567", .source = {}});
  REQUIRE_FALSE(refused.ok);
  CHECK_FALSE(validator::outbound_of(test::support_en(), refused, "15551234567"));
}
