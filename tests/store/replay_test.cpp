#include <catch2/catch.hpp>

#include "store/attempts.h"
#include "store/replay.h"
#include "tests/store/store_fixture.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using test::k_t0;

namespace {

// A message received at `at` with `attempts` recorded attempts (none: still waiting).
std::int64_t message(store::Database& db, const std::string& id, store::Time at, int attempts) {
  auto inserted = store::insert_inbound(db, {"whatsapp", id, "c-" + id, "1555" + id, "text of " + id, "{}"}, at);
  REQUIRE(inserted);
  for (int n = 1; n <= attempts; ++n) {
    REQUIRE(store::record_attempt(db,
                                  {.message_id = inserted->id,
                                   .attempt = n,
                                   .provider = "openai",
                                   .model = "m",
                                   .raw_output = "out " + id + " " + std::to_string(n),
                                   .verdict = n == attempts ? store::Verdict::valid : store::Verdict::invalid,
                                   .errors = n == attempts ? "[]" : R"([{"path":"","code":"no_json","message":"x"}])"},
                                  at + 1s));
  }
  return inserted->id;
}

std::vector<std::string> provider_ids(const std::vector<store::RecordedMessage>& page) {
  std::vector<std::string> out;
  for (const auto& m : page) out.push_back(m.provider_message_id);
  return out;
}

}  // namespace

TEST_CASE("store: recorded attempts come by received_at in pages that never split a message", "[store][replay]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  // Inserted out of received_at order; "d" has no attempts.
  message(db, "c", k_t0 + 48h, 1);
  message(db, "a", k_t0, 3);
  message(db, "d", k_t0 + 1h, 0);
  message(db, "b", k_t0 + 24h, 2);
  message(db, "e", k_t0 + 24h, 1);  // same second as "b": then by message id

  auto all = store::recorded_attempts(db, {});
  REQUIRE(all);
  CHECK(provider_ids(*all) == std::vector<std::string>{"a", "b", "e", "c"});
  const auto& a = all->front();
  CHECK(a.sender == "1555a");
  CHECK(a.text == "text of a");
  CHECK(a.received_at == "2026-11-30T12:00:00Z");
  REQUIRE(a.attempts.size() == 3);
  CHECK(a.attempts[0].attempt == 1);
  CHECK(a.attempts[0].verdict == store::Verdict::invalid);
  CHECK(a.attempts[0].errors == R"([{"path":"","code":"no_json","message":"x"}])");
  CHECK(a.attempts[2].raw_output == "out a 3");
  CHECK(a.attempts[2].verdict == store::Verdict::valid);

  SECTION("pages of one message follow the keyset") {
    std::vector<std::string> seen;
    store::ReplayPage page{.messages = 1};
    while (true) {
      auto next = store::recorded_attempts(db, page);
      REQUIRE(next);
      if (next->empty()) break;
      REQUIRE(next->size() == 1);
      seen.push_back(next->front().provider_message_id);
      CHECK_FALSE(next->front().attempts.empty());
      page.after = store::ReplayKey{next->front().received_at, next->front().id};
    }
    CHECK(seen == std::vector<std::string>{"a", "b", "e", "c"});
  }
  SECTION("since a day: received that UTC day or later") {
    auto later = store::recorded_attempts(db, {.since = "2026-12-01"});
    REQUIRE(later);
    CHECK(provider_ids(*later) == std::vector<std::string>{"b", "e", "c"});
    auto none = store::recorded_attempts(db, {.since = "2026-12-03"});
    REQUIRE(none);
    CHECK(none->empty());
  }
}
