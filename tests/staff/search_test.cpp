#include <catch2/catch.hpp>

#include "staff/search.h"

using namespace dispatchd;

TEST_CASE("search: what staff type becomes the store's search", "[search]") {
  struct Row {
    staff::SearchInput input;
    const char* error;  // nullptr: accepted
  };
  const std::vector<Row> rows = {
      {{}, nullptr},
      {{.customer = "+52 1 55-3456-7890"}, nullptr},
      {{.customer = " + ( ) "}, "customer is a number or an address"},
      {{.customer = std::string(201, '5')}, "customer is too long"},
      {{.text = "   "}, "text is empty"},
      {{.text = std::string(201, 'a')}, "text is at most 200 bytes"},
      {{.reason = "contract_failed"}, nullptr},
      {{.reason = "contract-failed"}, "unknown reason \"contract-failed\""},
      {{.status = "claimed"}, nullptr},
      {{.status = "closed"}, "status is open, claimed, resolved or dismissed"},
      {{.from = "2026-02-28", .to = "2026-02-28"}, nullptr},
      {{.from = "2026-02-29"}, "from is a date, YYYY-MM-DD"},
      {{.to = "2026-13-01"}, "to is a date, YYYY-MM-DD"},
      {{.from = "2026-12-02", .to = "2026-12-01"}, "from is after to"},
      {{.before = "17"}, nullptr},
      {{.before = "-1"}, "before is an escalation id"},
      {{.limit = "200"}, nullptr},
      {{.limit = "201"}, "limit is 1 to 200"},
      {{.limit = "0"}, "limit is 1 to 200"},
  };
  for (const auto& row : rows) {
    const auto search = staff::read_search(row.input);
    if (row.error) {
      INFO("expected: " << row.error);
      REQUIRE_FALSE(search);
      CHECK(search.error() == row.error);
    } else {
      CHECK(search);
    }
  }
}

TEST_CASE("search: numbers lose their punctuation, addresses keep theirs, days end at midnight", "[search]") {
  CHECK(staff::customer_key("+52 1 55-3456-7890") == "5215534567890");
  CHECK(staff::customer_key("(555) 123.4567") == "5551234567");
  CHECK(staff::customer_key("  Ana.Perez+shop@Example.com ") == "Ana.Perez+shop@Example.com");
  const auto search = staff::read_search(
      {.customer = "+52 1 55", .text = " factura ", .from = "2026-12-31", .to = "2026-12-31", .limit = "10"});
  REQUIRE(search);
  CHECK(search->customer == "52155");
  CHECK(search->text == "factura");
  CHECK(search->from == "2026-12-31");
  CHECK(search->until == "2027-01-01");
  CHECK(search->limit == 10);
  CHECK(staff::read_search({})->limit == staff::k_search_page_default);
  CHECK(staff::next_day("2024-02-28") == "2024-02-29");
  CHECK(staff::next_day("2026-02-28") == "2026-03-01");
  CHECK_FALSE(staff::next_day("2026-2-28"));
  CHECK_FALSE(staff::next_day("2026-02-28T00"));
}
