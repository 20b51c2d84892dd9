#include <catch2/catch.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "store/audit.h"
#include "store/tools/backup.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;
using namespace std::chrono_literals;
using test::k_t0;

TEST_CASE("backup: copies taken while another connection writes open and verify", "[backup][sqlite]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  std::atomic<bool> stop{false};
  std::atomic<int> written{0};
  // The daemon's stand-in: its own connection, committing inbound messages with their
  // audit events as fast as it can.
  std::thread writer([&] {
    // Catch2's assertions are not thread-safe: the main thread checks `written` instead.
    auto own = test::open_db(dir, store::Database::Mode::existing);
    if (!own) return;
    for (int i = 0; !stop; ++i) {
      const std::string id = "wamid." + std::to_string(i);
      auto ok = store::insert_inbound(*own, {"whatsapp", id, "c" + std::to_string(i % 7), "15551234567", "hola", "{}"},
                                      k_t0 + std::chrono::seconds(i));
      if (ok) ++written;
    }
  });
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (written < 50 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  REQUIRE(written >= 50);
  std::int64_t previous_events = 0;
  for (int n = 0; n < 5; ++n) {
    const std::string copy_path = dir.file("copy" + std::to_string(n) + ".db");
    auto result = store::backup(db, copy_path);
    REQUIRE(result);
    auto copy = store::Database::open(copy_path, store::Database::Mode::existing);
    REQUIRE(copy);
    auto check = store::verify_audit(*copy);
    REQUIRE(check);
    CHECK_FALSE(check->first_broken);
    CHECK(check->events == result->audit_events);
    // A consistent moment: every message has its 'received' event, and nothing is half there.
    CHECK(test::query_int(*copy, "SELECT count(*) FROM v_messages").value() ==
          test::query_int(*copy, "SELECT count(*) FROM v_audit WHERE event = 'received'").value());
    CHECK(check->events >= previous_events);
    previous_events = check->events;
    CHECK_FALSE(std::filesystem::exists(copy_path + ".partial"));
  }
  stop = true;
  writer.join();
  CHECK(written > 50);
  CHECK(previous_events > 0);
}

TEST_CASE("backup: an existing destination is never overwritten", "[backup][sqlite]") {
  test::TempDir dir;
  auto db = test::migrated_db(dir);
  { std::ofstream(dir.file("taken.db")) << "precious"; }
  auto result = store::backup(db, dir.file("taken.db"));
  REQUIRE_FALSE(result);
  CHECK_THAT(result.error().message, Catch::Contains("exists"));
  CHECK(result.error().kind == store::ErrorKind::refused);
  CHECK(test::read_file(dir.file("taken.db")) == "precious");
}
