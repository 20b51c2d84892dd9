#include <catch2/catch.hpp>

#include "connectors/whatsapp/window.h"

using namespace std::chrono_literals;
using dispatchd::whatsapp::may_send_free_form;
using dispatchd::whatsapp::reply_window_at;
using dispatchd::whatsapp::window_closes_at;
using Time = std::chrono::sys_seconds;

TEST_CASE("window: free-form text only within 24 hours of the contact's last message") {
  const Time last{std::chrono::seconds{1796040000}};  // 2026-11-30T12:00:00Z
  struct Row {
    std::chrono::seconds after;
    std::chrono::seconds margin;
    bool open;
  };
  const Row rows[] = {
      {0s, 0s, true},        {1h, 0s, true},   {23h + 59min + 59s, 0s, true}, {24h, 0s, false},
      {24h + 1s, 0s, false}, {72h, 0s, false}, {23h + 59min, 60s, false},     {23h + 58min + 59s, 60s, true},
  };
  for (const Row& row : rows) {
    INFO("now = last + " << row.after.count() << " s, margin " << row.margin.count() << " s");
    CHECK(may_send_free_form(last, last + row.after, row.margin) == row.open);
  }
  CHECK(window_closes_at(last) == last + 24h);
}

TEST_CASE("window: closed when the contact never wrote, open when their time is ahead of ours") {
  const Time now{std::chrono::seconds{1796040000}};
  CHECK_FALSE(may_send_free_form(std::nullopt, now));
  CHECK(may_send_free_form(now + 30s, now));
}

TEST_CASE("window: the reply window as the channel seam states it") {
  const Time last{std::chrono::seconds{1796040000}};  // 2026-11-30T12:00:00Z
  struct Row {
    std::optional<Time> last;
    std::chrono::seconds after;
    bool open;
    std::optional<Time> closes_at;
  };
  const Row rows[] = {
      {last, 0s, true, last + 24h},           {last, 23h + 58min + 59s, true, last + 24h},
      {last, 23h + 59min, false, last + 24h},  // within the 60 s margin: closed already
      {last, 48h, false, last + 24h},         {std::nullopt, 0s, false, std::nullopt},  // never wrote: closed, no time
  };
  for (const Row& row : rows) {
    INFO("now = last + " << row.after.count() << " s, wrote: " << row.last.has_value());
    const auto window = reply_window_at(row.last, last + row.after, 60s);
    CHECK(window.open == row.open);
    CHECK(window.closes_at == row.closes_at);
  }
}
