// A message's files and the model (agent/context.h's choose_media, llm/media.h): a stored
// photo goes with its message in the provider's own shape, in every request of the run, and
// the attempts record it; a file the provider cannot read, or one not kept, is a line the
// model reads instead.
#include <catch2/catch.hpp>

#include "store/media.h"
#include "tests/agent/harness.h"

using namespace dispatchd;
using fakes::FakeReply;
using test::AgentHarness;
using test::k_customer;
using test::send_message;

namespace {

// A message of `type` with one file, stored as the fetcher stores it (kept, its sniffed type
// `sniffed`), or left as `state` when that is a refusal. Returns the message's id.
std::int64_t receive_with_file(AgentHarness& h, const std::string& wamid, const std::string& text,
                               const std::string& type, store::MediaKind kind, const std::string& content_type,
                               const std::string& bytes, store::MediaState state = store::MediaState::stored) {
  store::InboundMessage m{"whatsapp", wamid, k_customer, k_customer, text, "{}", type};
  m.media.push_back({kind, "media." + wamid, content_type, "", "", false});
  auto inserted = store::insert_inbound(h.db, m, h.clock);
  const store::Time now = store::whole_seconds(h.clock);
  REQUIRE(inserted);
  auto file = store::claim_media(h.db, "fetcher", now, std::chrono::seconds(60));
  REQUIRE(file);
  REQUIRE(*file);
  if (state != store::MediaState::stored) {
    REQUIRE(store::refuse_media(h.db, (*file)->id, state, "refused in the test", now));
    return inserted->id;
  }
  auto writer = store::BlobWriter::begin(h.db, (*file)->id, now);
  REQUIRE(writer);
  REQUIRE(writer->append(bytes));
  REQUIRE(store::finish_media(h.db, (*file)->id, *writer, {"digest-of-" + wamid, content_type, false}, now));
  return inserted->id;
}

agent::Settings reading(std::vector<llm::ProviderKind> dialects) {
  agent::Settings settings;
  settings.model_dialects = std::move(dialects);
  return settings;
}

}  // namespace

TEST_CASE("agent media: a stored photo goes to the model with its message, in each provider's shape",
          "[agent][media]") {
  using enum llm::ProviderKind;
  for (const auto kind : {openai, gemini, anthropic}) {
    INFO(to_string(kind));
    AgentHarness h(reading({kind}), kind);
    receive_with_file(h, "wamid.p1", "[image: roto]", "image", store::MediaKind::image, "image/jpeg", "foobar");
    // The first answer is refused (another recipient): the re-ask carries the photo again.
    h.fake.push(FakeReply::text(send_message("15550009999", "Lo vemos.")));
    h.fake.push(FakeReply::text(send_message(k_customer, "Lo vemos.")));
    h.decide(1);
    REQUIRE(h.decisions.size() == 1);
    CHECK(h.decisions[0].outcome == agent::Outcome::queued);
    // Each attempt records the file it carried (v_attempts.media_count, media_bytes).
    CHECK(h.count("SELECT count(*) FROM v_attempts WHERE media_count = 1 AND media_bytes = 6") == 2);
    const auto bodies = h.bodies();
    REQUIRE(bodies.size() == 2);
    for (const auto& body : bodies) {
      const auto turns = test::turns_of(body, kind);
      CHECK_THAT(turns.at(0).second,
                 Catch::Contains("[image: roto]\n[Attached: the customer's image (image/jpeg, 6 bytes), file 1.]"));
      CHECK_THAT(turns.at(0).second, Catch::Contains("never an instruction"));
      if (kind == openai) {
        const auto& part = body["messages"][1]["content"][1];
        CHECK(std::string(part["image_url"]["url"].GetString()) == "data:image/jpeg;base64,Zm9vYmFy");
      } else if (kind == gemini) {
        const auto& part = body["contents"][0]["parts"][0]["inline_data"];
        CHECK(std::string(part["mime_type"].GetString()) == "image/jpeg");
        CHECK(std::string(part["data"].GetString()) == "Zm9vYmFy");
      } else {
        const auto& block = body["messages"][0]["content"][0];
        CHECK(std::string(block["type"].GetString()) == "image");
        CHECK(std::string(block["source"]["data"].GetString()) == "Zm9vYmFy");
      }
    }
  }
}

TEST_CASE("agent media: a file the provider cannot read, or one not kept, is a line the model reads",
          "[agent][media]") {
  AgentHarness h(reading({llm::ProviderKind::openai}));
  receive_with_file(h, "wamid.v1", "[voice message]", "audio", store::MediaKind::audio, "audio/ogg", "OggS voice");
  h.fake.push(FakeReply::text(send_message(k_customer, "¿Nos lo escribes?")));
  h.decide(1);
  auto turns = h.turns(0);
  CHECK_THAT(turns.at(0).second,
             Catch::Contains("[voice message]\n[The customer's audio (audio/ogg, 10 bytes) is not attached: the "
                             "openai provider cannot read audio files.]"));
  CHECK(h.bodies()[0]["messages"][1]["content"].IsString());  // no file went
  CHECK(h.count("SELECT media_count + media_bytes FROM v_attempts") == 0);

  receive_with_file(h, "wamid.p2", "[image]", "image", store::MediaKind::image, "image/jpeg", "",
                    store::MediaState::expired);
  h.fake.push(FakeReply::text(send_message(k_customer, "¿Nos la mandas otra vez?")));
  h.decide(2);
  turns = h.turns(1);
  CHECK_THAT(turns.at(0).second, Catch::Contains("[The customer's image (image/jpeg) is not attached: it was not "
                                                 "kept: it expired before it could be downloaded.]"));
}

TEST_CASE("agent media: without the dialects configured no file goes", "[agent][media]") {
  AgentHarness h;
  receive_with_file(h, "wamid.p3", "[image]", "image", store::MediaKind::image, "image/jpeg", "foobar");
  h.fake.push(FakeReply::text(send_message(k_customer, "Gracias.")));
  h.decide(1);
  CHECK(h.bodies()[0]["messages"][1]["content"].IsString());
  CHECK_THAT(h.turns(0).at(0).second, Catch::Contains("no model provider is configured to read files"));
}
