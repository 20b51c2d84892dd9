// The store's PostgreSQL engine against a real server (tests/postgresql/cluster.sh, found
// through DISPATCHD_TEST_POSTGRESQL_DIR). A white-box test of the seam: it includes the
// store's internal Query (store/internal/sql.h), so its target defines the store's private
// flag. Each test case works in a schema of its own, dropped at its end; the one that
// restarts a server starts a server of its own.

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <string>

#include "store/database.h"
#include "store/internal/sql.h"
#include "store/round.h"
#include "store/tools/backup.h"
#include "store/transaction.h"
#include "tests/support/raw_sql.h"

using namespace dispatchd;
using store::Database;
using store::ErrorKind;
using store::Query;

namespace {

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

struct Server {
  std::string dir;
  std::string uri;
  std::string password;
};

Server server() {
  const char* dir = std::getenv("DISPATCHD_TEST_POSTGRESQL_DIR");
  if (!dir || !*dir)
    FAIL("DISPATCHD_TEST_POSTGRESQL_DIR is not set: run through ctest, or `tests/postgresql/cluster.sh start DIR`");
  Server s{dir, read_line(std::string(dir) + "/uri"), read_line(std::string(dir) + "/password")};
  REQUIRE_FALSE(s.uri.empty());
  return s;
}

Database connect(const Server& s) {
  auto db = Database::open(s.uri, Database::Mode::existing, {s.password});
  if (!db) FAIL(db.error().message);
  return std::move(*db);
}

// A schema of the test case's own; every connection it opens works in it.
class Scratch {
 public:
  Scratch() : m_server(server()), m_name("t_" + std::to_string(::getpid()) + "_" + std::to_string(++s_count)) {
    auto db = connect(m_server);
    REQUIRE(test::exec(db, "DROP SCHEMA IF EXISTS " + m_name + " CASCADE; CREATE SCHEMA " + m_name));
  }
  ~Scratch() {
    auto db = Database::open(m_server.uri, Database::Mode::existing, {m_server.password});
    if (db) CHECK(test::exec(*db, "DROP SCHEMA IF EXISTS " + m_name + " CASCADE"));
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  Database open() const {
    auto db = connect(m_server);
    REQUIRE(test::exec(db, "SET search_path TO " + m_name));
    return db;
  }
  const Server& server_info() const { return m_server; }

 private:
  static inline int s_count = 0;
  Server m_server;
  std::string m_name;
};

// A server of the test case's own, for a case that restarts it: restarting the shared one
// would cut the connections of every test running beside it (CTest runs them in parallel).
class PrivateServer {
 public:
  PrivateServer() {
    const Server shared = server();
    m_server.dir = shared.dir + "-private-" + std::to_string(::getpid());
    REQUIRE(cluster("start") == 0);
    m_server.uri = read_line(m_server.dir + "/uri");
    m_server.password = read_line(m_server.dir + "/password");
    REQUIRE_FALSE(m_server.uri.empty());
  }
  ~PrivateServer() {
    if (cluster("stop") != 0) std::fprintf(stderr, "could not stop the private server in %s\n", m_server.dir.c_str());
  }
  PrivateServer(const PrivateServer&) = delete;
  PrivateServer& operator=(const PrivateServer&) = delete;

  // cluster.sh COMMAND on this server: its exit status.
  int cluster(const std::string& command) const {
    const std::string line = std::string("bash ") + DISPATCHD_SOURCE_DIR + "/tests/postgresql/cluster.sh " + command +
                             " " + m_server.dir + " >/dev/null";
    return std::system(line.c_str());
  }
  const Server& info() const { return m_server; }

 private:
  Server m_server;
};

std::int64_t count(Database& db, const std::string& sql) {
  auto n = test::query_int(db, sql);
  REQUIRE(n);
  return *n;
}

}  // namespace

TEST_CASE("postgresql: connects with the password given in the options, a wrong one is io and unnamed",
          "[postgresql]") {
  const Server s = server();
  auto db = Database::open(s.uri, Database::Mode::existing, {s.password});
  REQUIRE(db);
  CHECK(db->backend() == store::Backend::postgresql);
  CHECK(db->path() == s.uri);
  CHECK(count(*db, "SELECT 41 + 1") == 42);

  SECTION("a wrong password") {
    const std::string wrong = "not-the-password-7f3a91";
    auto refused = Database::open(s.uri, Database::Mode::existing, {wrong});
    REQUIRE_FALSE(refused);
    CHECK(refused.error().kind == ErrorKind::io);
    CHECK(refused.error().retryable());
    CHECK_THAT(refused.error().message, Catch::Contains("password authentication failed"));
    CHECK_THAT(refused.error().message, !Catch::Contains(wrong) && !Catch::Contains("\n"));
  }
  SECTION("no password at all") {
    auto refused = Database::open(s.uri, Database::Mode::existing, {});
    REQUIRE_FALSE(refused);
    CHECK(refused.error().kind == ErrorKind::io);
  }
  SECTION("a password written into the URI does not reach the message either") {
    const std::string in_uri = "secret-in-uri-55d1";
    std::string uri = s.uri;
    uri.replace(uri.find("dispatchd@"), 10, "dispatchd:" + in_uri + "@");
    auto refused = Database::open(uri, Database::Mode::existing, {});
    REQUIRE_FALSE(refused);
    CHECK(refused.error().kind == ErrorKind::io);
    CHECK_THAT(refused.error().message, !Catch::Contains(in_uri) && Catch::Contains("dispatchd:***@"));
  }
  SECTION("nothing listening") {
    auto down = Database::open("postgresql://dispatchd@127.0.0.1:1/dispatchd", Database::Mode::existing, {s.password});
    REQUIRE_FALSE(down);
    CHECK(down.error().kind == ErrorKind::io);
  }
}

TEST_CASE("postgresql: parameters and columns keep their values", "[postgresql]") {
  Scratch scratch;
  auto db = scratch.open();
  REQUIRE(test::exec(db, "CREATE TABLE v (id bigserial PRIMARY KEY, s text, i bigint, d double precision, n text)"));
  const std::string text = "naïve 'quoted' \"double\" ? $1 -- ✓ 中文 \\ end";
  constexpr auto max = std::numeric_limits<std::int64_t>::max();
  constexpr auto min = std::numeric_limits<std::int64_t>::min();

  const auto insert = [&](const std::string& s, std::int64_t i, double d, std::optional<std::string> n) {
    auto q = Query::prepare(db, "INSERT INTO v(s, i, d, n) VALUES (?, ?, ?, ?) RETURNING id");
    REQUIRE(q);
    q->bind(1, s).bind(2, i).bind(3, d).bind(4, n);
    auto id = q->inserted_id();
    REQUIRE(id);
    return *id;
  };
  const std::int64_t first = insert(text, max, 0.1, std::nullopt);
  const std::int64_t second = insert("", min, -1.5e300, std::string("set"));
  CHECK(second == first + 1);  // RETURNING gives the new row's id

  auto q = Query::prepare(db, "SELECT s, i, d, n, n IS NULL FROM v WHERE id = ?");
  REQUIRE(q);
  q->bind(1, first);
  auto row = q->step();
  REQUIRE(row);
  REQUIRE(*row);
  CHECK(q->text(0) == text);
  CHECK(q->integer(1) == max);
  CHECK(q->optional_real(2) == 0.1);
  CHECK(q->is_null(3));
  CHECK_FALSE(q->optional_text(3));
  CHECK(q->integer(4) == 1);  // a boolean reads as 1
  auto end = q->step();
  REQUIRE(end);
  CHECK_FALSE(*end);

  auto again = Query::prepare(db, "SELECT s, i, d, n FROM v WHERE id = ?");  // the same text: the cached one
  REQUIRE(again);
  again->bind(1, second);
  REQUIRE(again->step().value_or(false));
  CHECK(again->text(0).empty());
  CHECK_FALSE(again->is_null(0));  // '' is not NULL
  CHECK(again->integer(1) == min);
  CHECK(again->optional_real(2) == -1.5e300);
  CHECK(again->optional_text(3) == "set");

  SECTION("?N used twice, and a ? in a literal is not a parameter") {
    auto reuse = Query::prepare(db, "SELECT count(*), '?' FROM v WHERE s = ?1 OR n = ?1");
    REQUIRE(reuse);
    reuse->bind(1, "set");
    REQUIRE(reuse->step().value_or(false));
    CHECK(reuse->integer(0) == 1);
    CHECK(reuse->text(1) == "?");
    auto both = Query::prepare(db, "SELECT ?2::bigint - ?1::bigint, ?2::bigint");
    REQUIRE(both);
    both->bind(1, std::int64_t{40}).bind(2, std::int64_t{42});
    REQUIRE(both->step().value_or(false));
    CHECK(both->integer(0) == 2);
    CHECK(both->integer(1) == 42);
  }
  SECTION("changes: the rows the last statement changed; a query leaves it") {
    auto update = Query::prepare(db, "UPDATE v SET n = ? WHERE id >= ?");
    REQUIRE(update);
    update->bind(1, "x").bind(2, first);
    REQUIRE(update->run());
    CHECK(update->changes() == 2);
    CHECK(count(db, "SELECT count(*) FROM v WHERE n = 'x'") == 2);
    CHECK(update->changes() == 2);
    auto none = Query::prepare(db, "DELETE FROM v WHERE id < ?");
    REQUIRE(none);
    none->bind(1, first);
    REQUIRE(none->run());
    CHECK(none->changes() == 0);
  }
  SECTION("rows are stepped through in order") {
    auto all = Query::prepare(db, "SELECT i FROM v ORDER BY id");
    REQUIRE(all);
    std::vector<std::int64_t> seen;
    for (auto more = all->step(); more && *more; more = all->step()) seen.push_back(all->integer(0));
    CHECK(seen == std::vector<std::int64_t>{max, min});
  }
  SECTION("ON CONFLICT DO NOTHING ... RETURNING: no id for a duplicate") {
    REQUIRE(test::exec(db, "CREATE TABLE k (id bigserial PRIMARY KEY, key text UNIQUE)"));
    auto add = [&] {
      auto ins = Query::prepare(db, "INSERT INTO k(key) VALUES (?) ON CONFLICT (key) DO NOTHING RETURNING id");
      REQUIRE(ins);
      ins->bind(1, "once");
      auto id = ins->insert_returning_id();
      REQUIRE(id);
      return *id;
    };
    CHECK(add().has_value());
    CHECK_FALSE(add().has_value());
  }
}

TEST_CASE("postgresql: store::transaction commits, rolls back, and undoes only a failed nested part", "[postgresql]") {
  Scratch scratch;
  auto db = scratch.open();
  REQUIRE(test::exec(db, "CREATE TABLE t (k text PRIMARY KEY)"));
  const auto add = [&](const char* key) { return test::exec(db, std::string("INSERT INTO t VALUES ('") + key + "')"); };
  const auto fail = [](const char* why) -> store::Result<int> { return std::unexpected(store::Error::refused(why)); };

  auto committed = store::transaction<int>(db, [&]() -> store::Result<int> {
    CHECK(db.in_transaction());
    DISPATCHD_TRY(add("a"));
    return 1;
  });
  REQUIRE(committed);
  CHECK_FALSE(db.in_transaction());

  auto rolled_back = store::transaction<int>(db, [&]() -> store::Result<int> {
    DISPATCHD_TRY(add("b"));
    return fail("changed my mind");
  });
  REQUIRE_FALSE(rolled_back);
  CHECK(rolled_back.error().message == "changed my mind");
  CHECK_FALSE(db.in_transaction());

  auto nested = store::transaction<int>(db, [&]() -> store::Result<int> {
    DISPATCHD_TRY(add("c"));
    auto inner = store::transaction<int>(db, [&]() -> store::Result<int> {
      DISPATCHD_TRY(add("d"));
      return fail("inner fails");
    });
    CHECK_FALSE(inner);
    // A statement that fails inside a savepoint aborts only the savepoint: the outer
    // transaction goes on after its rollback.
    auto duplicate = store::transaction<int>(db, [&]() -> store::Result<int> {
      DISPATCHD_TRY(add("c"));
      return 0;
    });
    REQUIRE_FALSE(duplicate);
    CHECK(duplicate.error().kind == ErrorKind::refused);
    DISPATCHD_TRY(add("e"));
    return 2;
  });
  REQUIRE(nested);
  CHECK(count(db, "SELECT count(*) FROM t WHERE k IN ('a', 'c', 'e')") == 3);
  CHECK(count(db, "SELECT count(*) FROM t") == 3);
}

TEST_CASE("postgresql: a broken constraint is refused, a row lock past lock_timeout is busy", "[postgresql]") {
  Scratch scratch;
  auto db = scratch.open();
  REQUIRE(test::exec(
      db, "CREATE TABLE t (k text PRIMARY KEY, n bigint NOT NULL DEFAULT 0); INSERT INTO t VALUES ('a', 0)"));

  SECTION("unique violation, through exec and through a statement") {
    auto twice = test::exec(db, "INSERT INTO t VALUES ('a', 1)");
    REQUIRE_FALSE(twice);
    CHECK(twice.error().kind == ErrorKind::refused);
    CHECK_FALSE(twice.error().retryable());
    auto q = Query::prepare(db, "INSERT INTO t(k) VALUES (?)");
    REQUIRE(q);
    q->bind(1, "a");
    auto again = q->run();
    REQUIRE_FALSE(again);
    CHECK(again.error().kind == ErrorKind::refused);
    CHECK_THAT(again.error().message, Catch::Contains("duplicate key"));
    CHECK(db.last_error().kind == ErrorKind::refused);
  }
  SECTION("another connection holds the row") {
    auto other = scratch.open();
    REQUIRE(test::exec(db, "BEGIN; UPDATE t SET n = 1 WHERE k = 'a'"));
    REQUIRE(test::exec(other, "SET lock_timeout = '100ms'"));
    auto q = Query::prepare(other, "UPDATE t SET n = 2 WHERE k = ?");
    REQUIRE(q);
    q->bind(1, "a");
    auto blocked = q->run();
    REQUIRE_FALSE(blocked);
    CHECK(blocked.error().kind == ErrorKind::busy);
    CHECK(blocked.error().retryable());
    REQUIRE(test::exec(db, "COMMIT"));
    CHECK(count(other, "SELECT n FROM t WHERE k = 'a'") == 1);
  }
  SECTION("SQL the server rejects is internal, with the statement named") {
    auto bad = Query::prepare(db, "SELECT no_such_column FROM t WHERE k = ?");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().kind == ErrorKind::internal);
    CHECK_THAT(bad.error().message, Catch::Contains("no_such_column") && Catch::Contains("(in: SELECT"));
  }
}

TEST_CASE("postgresql: after a server restart the old connection fails io and a new one works", "[postgresql]") {
  PrivateServer server;
  auto db = connect(server.info());
  REQUIRE(test::exec(db, "CREATE TABLE t (k text PRIMARY KEY); INSERT INTO t VALUES ('kept')"));
  {
    auto q = Query::prepare(db, "SELECT count(*) FROM t WHERE k = ?");
    REQUIRE(q);
    q->bind(1, "kept");
    REQUIRE(q->step().value_or(false));
    CHECK(q->integer(0) == 1);
  }

  REQUIRE(server.cluster("restart") == 0);

  auto lost = test::query_int(db, "SELECT count(*) FROM t");
  REQUIRE_FALSE(lost);
  CHECK(lost.error().kind == ErrorKind::io);
  CHECK(lost.error().retryable());
  auto still_lost = Query::prepare(db, "SELECT count(*) FROM t WHERE k = ?");  // prepared before: cached
  REQUIRE(still_lost);
  still_lost->bind(1, "kept");
  auto step = still_lost->step();
  REQUIRE_FALSE(step);
  CHECK(step.error().kind == ErrorKind::io);

  auto fresh = connect(server.info());
  CHECK(count(fresh, "SELECT count(*) FROM t WHERE k = 'kept'") == 1);
}

TEST_CASE("postgresql: a round is one plain transaction, its waiters hear after the COMMIT", "[postgresql]") {
  Scratch scratch;
  auto db = scratch.open();
  auto observer = scratch.open();
  REQUIRE(test::exec(db, "CREATE TABLE t (k text PRIMARY KEY)"));
  std::deque<std::function<void()>> posted;  // the loop's queue, run by hand
  const auto run_queue = [&] {
    while (!posted.empty()) {
      auto f = std::move(posted.front());
      posted.pop_front();
      f();
    }
  };
  std::vector<bool> heard;
  {
    store::Round round(db, [&](std::function<void()> f) { posted.push_back(std::move(f)); });
    CHECK(round.setting_failures().empty());
    for (const char* key : {"a", "b"}) {
      REQUIRE(store::transaction<int>(db, [&]() -> store::Result<int> {
        DISPATCHD_TRY(test::exec(db, std::string("INSERT INTO t VALUES ('") + key + "')"));
        return 0;
      }));
      store::after_commit(db, [&](bool durable) { heard.push_back(durable); });
    }
    CHECK(db.in_transaction());  // both calls joined the round's transaction
    CHECK(count(observer, "SELECT count(*) FROM t") == 0);
    CHECK(heard.empty());
    run_queue();  // the round's end: COMMIT, then the waiters
    CHECK(heard == std::vector<bool>{true, true});
    CHECK(count(observer, "SELECT count(*) FROM t") == 2);
    CHECK(round.stats().commits == 1);
    CHECK(round.stats().syncs == 0);  // the server synced its own log

    REQUIRE(store::transaction<int>(db, [&]() -> store::Result<int> {
      DISPATCHD_TRY(test::exec(db, "INSERT INTO t VALUES ('c')"));
      return 0;
    }));
    store::after_commit(db, [&](bool durable) { heard.push_back(durable); });
  }  // the Round's end commits what is open and answers its waiters
  CHECK(heard == std::vector<bool>{true, true, true});
  CHECK(count(observer, "SELECT count(*) FROM t") == 3);
  CHECK_FALSE(db.in_transaction());
  // No round holds the database any more: a transaction commits by itself.
  REQUIRE(store::transaction<int>(db, [&]() -> store::Result<int> {
    DISPATCHD_TRY(test::exec(db, "INSERT INTO t VALUES ('after')"));
    return 0;
  }));
  CHECK(count(observer, "SELECT count(*) FROM t") == 4);
}

TEST_CASE("postgresql: dispatchctl's file backup is refused, naming pg_dump", "[postgresql]") {
  Scratch scratch;
  auto db = scratch.open();
  auto copy = store::backup(db, "/tmp/never-written.db");
  REQUIRE_FALSE(copy);
  CHECK(copy.error().kind == ErrorKind::refused);
  CHECK_THAT(copy.error().message, Catch::StartsWith("use pg_dump"));
}
