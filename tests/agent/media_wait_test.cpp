// agent/media_wait.h: when a turn waits for its files, as a table.
#include "agent/media_wait.h"

#include <catch2/catch.hpp>

namespace dispatchd::agent {
namespace {

using namespace std::chrono_literals;

const store::Time k_now = store::parse_time("2026-12-07T10:00:00Z").value();

store::MediaRow file(store::MediaState state, std::string created_at) {
  store::MediaRow row;
  row.state = state;
  row.created_at = std::move(created_at);
  return row;
}

store::MediaRow transcribing(store::TranscriptState transcript, std::string created_at) {
  store::MediaRow row = file(store::MediaState::stored, std::move(created_at));
  row.kind = store::MediaKind::audio;
  row.transcript_state = transcript;
  return row;
}

TEST_CASE("media wait: pending files hold the turn until the earliest bound, final ones never", "[agent][media]") {
  using S = store::MediaState;
  struct Row {
    const char* name;
    std::vector<store::MediaRow> files;
    std::chrono::seconds bound;
    std::optional<store::Time> until;
  };
  const std::vector<Row> table{
      {"no files", {}, 60s, std::nullopt},
      {"one pending file recorded now", {file(S::pending, "2026-12-07T10:00:00Z")}, 60s, k_now + 60s},
      {"one pending file recorded 20 s ago", {file(S::pending, "2026-12-07T09:59:40Z")}, 60s, k_now + 40s},
      {"a pending file past its bound", {file(S::pending, "2026-12-07T09:58:00Z")}, 60s, std::nullopt},
      {"exactly at the bound", {file(S::pending, "2026-12-07T09:59:00Z")}, 60s, std::nullopt},
      {"stored", {file(S::stored, "2026-12-07T10:00:00Z")}, 60s, std::nullopt},
      {"every final state",
       {file(S::over_cap, "2026-12-07T10:00:00Z"), file(S::unfetchable, "2026-12-07T10:00:00Z"),
        file(S::expired, "2026-12-07T10:00:00Z"), file(S::mismatch, "2026-12-07T10:00:00Z"),
        file(S::purged, "2026-12-07T10:00:00Z"), file(S::erased, "2026-12-07T10:00:00Z")},
       60s,
       std::nullopt},
      {"one stored, one pending",
       {file(S::stored, "2026-12-07T09:00:00Z"), file(S::pending, "2026-12-07T09:59:50Z")},
       60s,
       k_now + 50s},
      {"two pending: the earlier bound",
       {file(S::pending, "2026-12-07T09:59:50Z"), file(S::pending, "2026-12-07T09:59:30Z")},
       60s,
       k_now + 30s},
      {"kept, its transcript still to come",
       {transcribing(store::TranscriptState::pending, "2026-12-07T09:59:30Z")},
       60s,
       k_now + 30s},
      {"kept and transcribed", {transcribing(store::TranscriptState::done, "2026-12-07T09:59:30Z")}, 60s, std::nullopt},
      {"kept, its transcription failed",
       {transcribing(store::TranscriptState::failed, "2026-12-07T09:59:30Z")},
       60s,
       std::nullopt},
      {"a bound of 0 never waits", {file(S::pending, "2026-12-07T10:00:00Z")}, 0s, std::nullopt},
      {"an unreadable time waits from now", {file(S::pending, "garbage")}, 60s, k_now + 60s},
  };
  for (const auto& row : table) {
    INFO(row.name);
    CHECK(media_wait_until(row.files, k_now, row.bound) == row.until);
  }
}

}  // namespace
}  // namespace dispatchd::agent
