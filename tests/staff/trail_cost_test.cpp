// The cost in one message's trail: each attempt's tokens and cost and the message's total,
// read from the store (store/trail.h) and shown in both documents (staff/trail_render.h).
#include <catch2/catch.hpp>

#include "staff/trail_render.h"
#include "store/attempts.h"
#include "tests/store/store_fixture.h"

namespace dispatchd::test {
namespace {

store::AttemptRecord priced(std::int64_t message_id, int n, std::optional<double> cost) {
  return {.message_id = message_id,
          .attempt = n,
          .provider = "anthropic",
          .model = "claude-sonnet-4",
          .request_summary = "POST /v1/messages",
          .raw_output = R"({"action":"escalate_to_human"})",
          .verdict = n == 1 ? store::Verdict::invalid : store::Verdict::valid,
          .latency_ms = 900,
          .input_tokens = 25,
          .output_tokens = 90,
          .finish_reason = "tool_use",
          .cached_input_tokens = 3000,
          .cache_write_tokens = n == 1 ? 3000 : 0,
          .reasoning_tokens = 0,
          .cost_usd = cost};
}

store::Trail trail_with(const std::vector<std::optional<double>>& costs) {
  TempDir dir;
  auto db = migrated_db(dir);
  auto message = store::insert_inbound(db, {"whatsapp", "wamid.c1", "1555", "1555", "hola", "{}"}, k_t0);
  REQUIRE(message);
  for (std::size_t i = 0; i < costs.size(); ++i)
    REQUIRE(store::record_attempt(db, priced(message->id, static_cast<int>(i + 1), costs[i]), k_t0));
  auto trail = store::load_trail(db, message->id, 10);
  REQUIRE(trail);
  return std::move(*trail);
}

}  // namespace

TEST_CASE("trail: each attempt's tokens and cost, and the message's total", "[trail][cost]") {
  const auto t = trail_with({0.0126, 0.00237});
  REQUIRE(t.attempts.size() == 2);
  CHECK(t.attempts[0].row.cache_write_tokens == 3000);
  CHECK(t.attempts[1].row.cached_input_tokens == 3000);
  REQUIRE(t.attempts[1].row.cost_usd);
  CHECK(*t.attempts[1].row.cost_usd == Approx(0.00237));
  CHECK(t.attempts[1].request_summary == "POST /v1/messages");
  REQUIRE(t.cost_usd);
  CHECK(*t.cost_usd == Approx(0.01497));

  const std::string md = staff::trail_markdown(t);
  CAPTURE(md);
  CHECK_THAT(md, Catch::Contains("| Tokens in | Tokens out | Finish | Cost USD |\n"));
  CHECK_THAT(md, Catch::Contains("| 25 | 90 | tool\\_use | 0.0126 |\n"));
  CHECK_THAT(md, Catch::Contains("| 25 | 90 | tool\\_use | 0.00237 |\n"));
  CHECK_THAT(md, Catch::Contains("\nCost of the message: 0.01497 USD\n"));
  CHECK_THAT(md, Catch::Contains("Tokens: input 25, cached input 3000, cache write 3000, output 90, reasoning 0; cost "
                                 "0.0126 USD."));

  const auto json = parse_json(staff::trail_json(t));
  CHECK(json["message"]["cost_usd"].GetDouble() == Approx(0.01497));
  const auto& first = json["attempts"][0];
  CHECK(first["cost_usd"].GetDouble() == Approx(0.0126));
  CHECK(first["cached_input_tokens"].GetInt64() == 3000);
  CHECK(first["cache_write_tokens"].GetInt64() == 3000);
  CHECK(first["reasoning_tokens"].GetInt64() == 0);
}

TEST_CASE("trail: an attempt without a price makes the message's cost unknown in both documents", "[trail][cost]") {
  const auto t = trail_with({0.0126, std::nullopt});
  CHECK_FALSE(t.cost_usd);
  const std::string md = staff::trail_markdown(t);
  CAPTURE(md);
  CHECK_THAT(md, Catch::Contains("| 25 | 90 | tool\\_use | unknown |\n"));
  CHECK_THAT(md, Catch::Contains("\nCost of the message: unknown (an attempt has no price"));
  const auto json = parse_json(staff::trail_json(t));
  CHECK(json["message"]["cost_usd"].IsNull());
  CHECK(json["attempts"][1]["cost_usd"].IsNull());
  CHECK(json["attempts"][0]["cost_usd"].GetDouble() == Approx(0.0126));
}

}  // namespace dispatchd::test
