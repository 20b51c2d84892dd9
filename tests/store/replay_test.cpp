#include <catch2/catch.hpp>

#include "store/attempts.h"
#include "store/tools/replay.h"
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

// Every message with its attempts, read as run_offline reads them: key pages of `per_page`.
std::vector<store::RecordedMessage> read_all(store::Database& db, store::ReplayPage page) {
  std::vector<store::RecordedMessage> out;
  while (true) {
    auto keys = store::replay_keys(db, page);
    REQUIRE(keys);
    if (keys->empty()) return out;
    REQUIRE(keys->size() <= static_cast<std::size_t>(page.messages));
    page.after = keys->back();
    auto messages = store::recorded_attempts(db, *keys);
    REQUIRE(messages);
    out.insert(out.end(), messages->begin(), messages->end());
  }
}

TEST_CASE("store: recorded attempts come by received_at, keyset page after page", "[store][replay]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  // Inserted out of received_at order; "d" has no attempts.
  message(db, "c", k_t0 + 48h, 1);
  message(db, "a", k_t0, 3);
  message(db, "d", k_t0 + 1h, 0);
  message(db, "b", k_t0 + 24h, 2);
  message(db, "e", k_t0 + 24h, 1);  // same second as "b": then by message id

  auto keys = store::replay_keys(db, {});
  REQUIRE(keys);
  REQUIRE(keys->size() == 5);
  CHECK(keys->at(0).received_at == "2026-11-30T12:00:00Z");
  CHECK(keys->at(1).received_at == "2026-11-30T13:00:00Z");  // "d": a key, though it has no attempts

  const auto all = read_all(db, {});
  CHECK(provider_ids(all) == std::vector<std::string>{"a", "b", "e", "c"});
  const auto& a = all.front();
  CHECK(a.sender == "1555a");
  CHECK(a.text == "text of a");
  CHECK(a.received_at == "2026-11-30T12:00:00Z");
  REQUIRE(a.attempts.size() == 3);
  CHECK(a.attempts[0].attempt == 1);
  CHECK(a.attempts[0].verdict == store::Verdict::invalid);
  CHECK(a.attempts[0].errors == R"([{"path":"","code":"no_json","message":"x"}])");
  CHECK(a.attempts[2].raw_output == "out a 3");
  CHECK(a.attempts[2].verdict == store::Verdict::valid);

  SECTION("pages of one or two keys give the same messages") {
    CHECK(provider_ids(read_all(db, {.messages = 1})) == provider_ids(all));
    CHECK(provider_ids(read_all(db, {.messages = 2})) == provider_ids(all));
  }
  SECTION("attempts in the order of the keys given") {
    const std::vector<store::ReplayKey> reversed(keys->rbegin(), keys->rend());
    auto messages = store::recorded_attempts(db, reversed);
    REQUIRE(messages);
    CHECK(provider_ids(*messages) == std::vector<std::string>{"c", "e", "b", "a"});
  }
  SECTION("since a day: received that UTC day or later") {
    CHECK(provider_ids(read_all(db, {.since = "2026-12-01"})) == std::vector<std::string>{"b", "e", "c"});
    CHECK(read_all(db, {.since = "2026-12-03"}).empty());
  }
}
