// audit_append_bench: what the audit chain's serialized tail costs several instances
// (store/audit.cpp, store/instances.h). W writers, each on its own connection as an
// instance would be, append E events each, every event in a transaction of its own
// (store::record_event); the bench prints appends per second for each W. With --hold MS each
// transaction also waits MS milliseconds after its append before it commits: a transaction
// that does more work after its first audit event (the daemon's group commit) holds the tail
// that long, and the others wait for it.
//
//   audit_append_bench TARGET [--password-file FILE] [--events E] [--writers 1,3] [--hold 0,2]
//
// TARGET is a postgresql:// URI of a server where the role may CREATE DATABASE (the bench
// makes a database of its own and drops it), or a SQLite file path (made, then removed).
// Not a test: it prints numbers and never fails on timing.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <latch>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "store/audit.h"
#include "store/database.h"
#include "store/inbox.h"
#include "store/migrations.h"
#include "store/transaction.h"
#include "tests/support/raw_sql.h"

namespace {

using namespace dispatchd;
using store::Result;

struct Options {
  std::string target;
  std::string password;
  int events = 500;
  std::vector<int> writers{1, 3};
  std::vector<int> holds_ms{0, 2};
};

std::vector<int> numbers(const std::string& list) {
  std::vector<int> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::atoi(item.c_str()));
  return out;
}

bool parse(int argc, char** argv, Options& o) {
  if (argc < 2) return false;
  o.target = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--password-file") {
      std::ifstream in(value);
      std::getline(in, o.password);
    } else if (flag == "--events") {
      o.events = std::atoi(value.c_str());
    } else if (flag == "--writers") {
      o.writers = numbers(value);
    } else if (flag == "--hold") {
      o.holds_ms = numbers(value);
    } else {
      return false;
    }
  }
  return o.events > 0 && !o.writers.empty() && !o.holds_ms.empty();
}

// A fresh database on `o.target`'s engine: its target, and what removes it.
struct Scratch {
  std::string target;
  std::string drop;  // PostgreSQL: the database's name
};

Result<Scratch> make_scratch(const Options& o) {
  if (store::backend_of(o.target) == store::Backend::sqlite) return Scratch{o.target, ""};
  auto admin = store::Database::open(o.target, store::Database::Mode::existing, {o.password});
  if (!admin) return std::unexpected(admin.error());
  const std::string name = "audit_bench_" + std::to_string(::getpid());
  if (auto made = test::exec(*admin, "CREATE DATABASE " + name); !made) return std::unexpected(made.error());
  return Scratch{o.target.substr(0, o.target.rfind('/') + 1) + name, name};
}

void remove_scratch(const Options& o, const Scratch& s) {
  if (s.drop.empty()) {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(s.target + suffix);
    return;
  }
  auto admin = store::Database::open(o.target, store::Database::Mode::existing, {o.password});
  if (admin && !test::exec(*admin, "DROP DATABASE IF EXISTS " + s.drop + " WITH (FORCE)"))
    std::fprintf(stderr, "could not drop %s\n", s.drop.c_str());
}

// One run: `writers` threads appending `events` each; appends per second, or an error.
Result<double> run(const Options& o, const std::string& target, int writers, int hold_ms) {
  std::vector<store::Database> dbs;
  for (int i = 0; i < writers; ++i) {
    auto db = store::Database::open(target, store::Database::Mode::existing, {o.password});
    if (!db) return std::unexpected(db.error());
    dbs.push_back(std::move(*db));
  }
  std::vector<std::string> errors(static_cast<std::size_t>(writers));
  std::latch go(writers + 1);
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w) {
    threads.emplace_back([&, w] {
      auto& db = dbs[static_cast<std::size_t>(w)];
      go.arrive_and_wait();
      for (int n = 0; n < o.events; ++n) {
        const store::AuditEvent event{"2026-12-02T12:00:00Z", store::AuditKind::config_reload, std::nullopt,
                                      "writer-" + std::to_string(w), "{\"n\":" + std::to_string(n) + "}"};
        auto ok = store::transaction<void>(db, [&]() -> Result<void> {
          if (auto hash = store::append_audit(db, event); !hash) return std::unexpected(hash.error());
          if (hold_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
          return {};
        });
        if (!ok) {
          errors[static_cast<std::size_t>(w)] = ok.error().message;
          return;
        }
      }
    });
  }
  const auto start = std::chrono::steady_clock::now();
  go.arrive_and_wait();
  for (auto& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const auto& e : errors)
    if (!e.empty()) return std::unexpected(store::Error::internal(e));
  return writers * o.events / seconds;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr,
                 "usage: audit_append_bench TARGET [--password-file FILE] [--events E] [--writers 1,3] [--hold 0,2]\n");
    return 2;
  }
  const auto backend = store::backend_of(o.target);
  auto scratch = make_scratch(o);
  if (!scratch) {
    std::fprintf(stderr, "%s\n", scratch.error().message.c_str());
    return 1;
  }
  int status = 0;
  {
    auto db = store::Database::open(scratch->target, store::Database::Mode::create, {o.password});
    auto migrations = store::load_migrations(DISPATCHD_MIGRATIONS_DIR, backend);
    if (!db || !migrations || !store::migrate(*db, *migrations, "2026-12-02T12:00:00Z")) {
      std::fprintf(stderr, "cannot prepare the database\n");
      status = 1;
    }
  }
  std::printf("engine\twriters\thold_ms\tevents\tappends_per_s\n");
  for (const int hold : o.holds_ms) {
    for (const int writers : o.writers) {
      if (status != 0) break;
      auto rate = run(o, scratch->target, writers, hold);
      if (!rate) {
        std::fprintf(stderr, "%d writers: %s\n", writers, rate.error().message.c_str());
        status = 1;
        break;
      }
      std::printf("%s\t%d\t%d\t%d\t%.0f\n", std::string(store::to_string(backend)).c_str(), writers, hold,
                  writers * o.events, *rate);
      std::fflush(stdout);
    }
  }
  if (status == 0) {
    auto db = store::Database::open(scratch->target, store::Database::Mode::existing, {o.password});
    auto check = db ? store::verify_audit(*db) : Result<store::AuditCheck>(std::unexpected(db.error()));
    if (!check || check->first_broken) {
      std::fprintf(stderr, "the chain does not verify after the runs\n");
      status = 1;
    } else {
      std::printf("# audit verify: ok, %lld events\n", static_cast<long long>(check->events));
    }
  }
  remove_scratch(o, *scratch);
  return status;
}
