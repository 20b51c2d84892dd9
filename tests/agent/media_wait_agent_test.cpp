// The agent waits for a turn's files (media.wait_s) before it asks the model, up to a bound.
#include <catch2/catch.hpp>

#include "store/media.h"
#include "tests/agent/harness.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using fakes::FakeReply;
using test::AgentHarness;
using test::k_customer;
using test::send_message;

namespace {

agent::Settings waiting(std::chrono::seconds bound) {
  agent::Settings settings;
  settings.media_wait = bound;
  return settings;
}

std::int64_t receive_photo(AgentHarness& h, const std::string& id) {
  store::InboundMessage message{"whatsapp", id, k_customer, k_customer, "[image: the broken lid]", "{}", "image"};
  message.media.push_back({store::MediaKind::image, "media-" + id, "image/jpeg", "", "", false});
  auto inserted = store::insert_inbound(h.db, message, h.clock);
  REQUIRE(inserted);
  return inserted->id;
}

// Downloads the message's one file as the media fetcher would, and keeps it.
void keep_file(AgentHarness& h, std::int64_t message_id) {
  auto claimed = store::claim_media(h.db, "test-worker", store::whole_seconds(h.clock), 60s);
  REQUIRE(claimed);
  REQUIRE(claimed->has_value());
  REQUIRE((*claimed)->message_id == message_id);
  auto writer = store::BlobWriter::begin(h.db, (*claimed)->id, store::whole_seconds(h.clock));
  REQUIRE(writer);
  REQUIRE(writer->append("\xFF\xD8\xFF\xE0 not really a photo"));
  REQUIRE(
      store::finish_media(h.db, (*claimed)->id, *writer, {"00", "image/jpeg", false}, store::whole_seconds(h.clock)));
}

}  // namespace

TEST_CASE("agent: a photo still downloading waits, and is asked about once it is kept", "[agent][media]") {
  AgentHarness h(waiting(60s));
  const auto id = receive_photo(h, "wamid.photo");
  h.decide(1);
  CHECK(h.decisions[0].outcome == agent::Outcome::postponed);
  CHECK(h.fake.request_count() == 0);
  CHECK(h.count("SELECT count(*) FROM inbox WHERE state = 'processing' AND lease_owner IS NULL") == 1);

  // Another message's file says nothing about this turn.
  auto other = h.agent->media_settled(id + 100);
  REQUIRE(other);
  CHECK_FALSE(*other);

  keep_file(h, id);
  h.fake.push(FakeReply::text(send_message(k_customer, "Sorry about the lid: a new one is on its way.")));
  auto woken = h.agent->media_settled(id);
  REQUIRE(woken);
  CHECK(*woken);
  h.decide(2);
  CHECK(h.decisions[1].outcome == agent::Outcome::queued);
  CHECK(h.fake.request_count() == 1);
  // Woken once: the wait is forgotten.
  auto again = h.agent->media_settled(id);
  REQUIRE(again);
  CHECK_FALSE(*again);
}

TEST_CASE("agent: a file that never arrives holds the turn only until media.wait_s has passed", "[agent][media]") {
  AgentHarness h(waiting(30s));
  receive_photo(h, "wamid.slow");
  h.decide(1);
  CHECK(h.decisions[0].outcome == agent::Outcome::postponed);
  CHECK(h.fake.request_count() == 0);

  h.clock += 29s;  // taken again inside the bound (as after a restart): waits again
  REQUIRE(test::exec(h.db, "UPDATE inbox SET lease_expires_at = '2000-01-01T00:00:00Z'"));
  h.decide(2);
  CHECK(h.decisions[1].outcome == agent::Outcome::postponed);
  CHECK(h.fake.request_count() == 0);

  h.clock += 2s;  // past the bound: the postponement has run out, and the model is asked
  h.fake.push(FakeReply::text(send_message(k_customer, "Could you send the photo again?")));
  h.decide(3);
  CHECK(h.decisions[2].outcome == agent::Outcome::queued);
  CHECK(h.fake.request_count() == 1);
}

TEST_CASE("agent: with media.wait_s 0 the model is asked at once", "[agent][media]") {
  AgentHarness h(waiting(0s));
  receive_photo(h, "wamid.now");
  h.fake.push(FakeReply::text(send_message(k_customer, "Thanks for the photo.")));
  h.decide(1);
  CHECK(h.decisions[0].outcome == agent::Outcome::queued);
  CHECK(h.fake.request_count() == 1);
}
