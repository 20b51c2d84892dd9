// large_db: a database holding a long history, written through the store's own functions
// (so every row, state and audit event is what the daemon would have written), for the
// large-history benchmark (bench/large_db_bench.py).
//
//   large_db PATH MESSAGES [--migrations DIR] [--per-day N] [--leave-open yes|no]
//
// The history: MESSAGES inbound messages (85% WhatsApp, 15% Gmail) from 50,000 customers,
// --per-day of them a day (10,000) ending now. Of every 100 messages: 88 answered on the
// first attempt, 5 answered after a re-ask, 4 escalated by the model (3 resolved by staff
// with a reply, 1 left open; with --leave-open no, all 4 resolved: a history that retention
// can archive whole), 2 that failed the contract three times (escalated, then
// dismissed) and 1 ignored. Writes 2,000 messages per transaction and prints progress.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "store/attempts.h"
#include "store/database.h"
#include "store/inbox.h"
#include "store/migrations.h"
#include "store/outbox.h"
#include "store/queue.h"
#include "store/transaction.h"
#include "tests/support/raw_sql.h"

namespace {

using namespace dispatchd;
using namespace std::chrono_literals;
using store::Result;

constexpr int k_batch = 2000;

std::string send_json(const std::string& to, const std::string& content) {
  return R"({"action":"send_message","recipient":")" + to + R"(","content":")" + content + R"(","priority":"medium"})";
}

class History {
 public:
  History(store::Database& db, bool leave_open) : m_db(db), m_leave_open(leave_open) {}

  Result<void> message(long long n, store::Time at) {
    const bool gmail = n % 100 >= 85;
    const std::string channel = gmail ? "gmail" : "whatsapp";
    const long long customer = (n * 7919) % 50000;
    const std::string sender =
        gmail ? "customer" + std::to_string(customer) + "@example.com" : std::to_string(34600000000LL + customer);
    const std::string id = (gmail ? "18c" : "wamid.large") + std::to_string(n);
    const std::string text = "Hola, ¿dónde está mi pedido ORD-" + std::to_string(100000 + n) + "?";
    auto inserted = store::insert_inbound(m_db, {channel, id, sender, sender, text, R"({"large_db":true})"}, at);
    if (!inserted) return std::unexpected(inserted.error());
    auto taken = store::take_next(m_db, "large_db", at, 300s);
    if (!taken) return std::unexpected(taken.error());
    const std::int64_t message = inserted->id;
    const int kind = static_cast<int>(n % 100);
    const std::string answer = "Su pedido ORD-" + std::to_string(100000 + n) + " sale mañana.";
    if (kind < 93) {
      if (kind >= 88) {
        if (auto a = attempt(message, 1, "{\"accion\":", store::Verdict::invalid, "truncated", at); !a) return a;
      }
      if (auto a = attempt(message, kind >= 88 ? 2 : 1, send_json(sender, answer), store::Verdict::valid, {}, at); !a)
        return a;
      if (auto a = store::add_action(m_db, reply(message, sender, answer), at + 2s); !a)
        return std::unexpected(a.error());
      if (auto d = deliver(at + 3s); !d) return d;
      return store::finish(m_db, message, store::Outcome::replied, at + 4s);
    }
    if (kind < 97) {
      if (auto a = attempt(message, 1, R"({"action":"escalate_to_human"})", store::Verdict::valid, {}, at); !a)
        return a;
      return escalate(message, store::EscalationReason::model_escalated, kind < 96 || !m_leave_open, sender, at);
    }
    if (kind < 99) {
      for (int i = 1; i <= 3; ++i) {
        if (auto a = attempt(message, i, "not json", store::Verdict::invalid, "parse", at); !a) return a;
      }
      return escalate(message, store::EscalationReason::contract_failed, true, "", at);
    }
    return store::finish(m_db, message, store::Outcome::ignored, at + 1s, "reaction");
  }

 private:
  Result<void> attempt(std::int64_t message, int n, const std::string& raw, store::Verdict verdict,
                       std::optional<std::string> error_class, store::Time at) {
    store::AttemptRecord record{.message_id = message,
                                .attempt = n,
                                .provider = "openai",
                                .model = "gpt-4o-mini",
                                .request_summary = R"({"turns":2})",
                                .raw_output = raw,
                                .verdict = verdict,
                                .errors = error_class ? R"([{"path":"","code":"parse","message":"not JSON"}])" : "[]",
                                .error_class = error_class,
                                .latency_ms = 400 + (message * 37) % 2600,
                                .input_tokens = 420,
                                .output_tokens = 40,
                                .finish_reason = "stop"};
    auto recorded = store::record_attempt(m_db, record, at + std::chrono::seconds(n));
    if (!recorded) return std::unexpected(recorded.error());
    return {};
  }

  static store::NewAction reply(std::int64_t message, const std::string& to, const std::string& body) {
    return {.message_id = message,
            .action = "send_message",
            .arguments = send_json(to, body),
            .recipient = to,
            .body = body};
  }

  Result<void> deliver(store::Time at) {
    auto item = store::begin_send(m_db, at);
    if (!item) return std::unexpected(item.error());
    if (!*item) return std::unexpected(store::Error::internal("large_db: nothing to send"));
    return store::complete_send(m_db, (*item)->id, "out." + (*item)->idempotency_key, at + 1s);
  }

  // Opens an escalation; `closed` ones are answered by staff (a reply when `sender` is
  // given, else dismissed) ten minutes later.
  Result<void> escalate(std::int64_t message, store::EscalationReason reason, bool closed, const std::string& sender,
                        store::Time at) {
    auto opened = store::open_escalation(m_db, {message, reason, R"({"attempts":1})", std::nullopt, std::nullopt}, at);
    if (!opened) return std::unexpected(opened.error());
    if (auto done = store::finish(m_db, message, store::Outcome::escalated, at + 5s); !done) return done;
    if (!closed) return {};
    if (auto claimed = store::claim_escalation(m_db, *opened, "ana", at + 10min); !claimed) return claimed;
    if (sender.empty())
      return store::close_escalation(m_db, *opened, "ana", store::EscalationStatus::dismissed, "spam", at + 11min);
    auto resolved = store::resolve_with_action(m_db, *opened, "ana", reply(message, sender, "Lo revisamos."),
                                               store::Resolution::replied, at + 11min);
    if (!resolved) return std::unexpected(resolved.error());
    return deliver(at + 12min);
  }

  store::Database& m_db;
  bool m_leave_open;
};

int usage() {
  std::fprintf(stderr, "usage: large_db PATH MESSAGES [--migrations DIR] [--per-day N] [--leave-open yes|no]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  const std::string path = argv[1];
  const long long total = std::atoll(argv[2]);
  std::string migrations_dir = DISPATCHD_MIGRATIONS_DIR;
  long long per_day = 10000;
  bool leave_open = true;
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--migrations")
      migrations_dir = argv[i + 1];
    else if (flag == "--per-day")
      per_day = std::atoll(argv[i + 1]);
    else if (flag == "--leave-open")
      leave_open = std::string(argv[i + 1]) != "no";
    else
      return usage();
  }
  if (total <= 0 || per_day <= 0) return usage();
  auto db = store::Database::open(path);
  auto migrations = store::load_migrations(migrations_dir);
  const auto now = std::chrono::time_point_cast<std::chrono::seconds>(std::chrono::system_clock::now());
  if (!db || !migrations) {
    std::fprintf(stderr, "large_db: %s\n", (!db ? db.error() : migrations.error()).message.c_str());
    return 1;
  }
  if (auto migrated = store::migrate(*db, *migrations, store::format_time(now)); !migrated) {
    std::fprintf(stderr, "large_db: %s\n", migrated.error().message.c_str());
    return 1;
  }
  // A page cache that holds the indexes (SQLite's default is 2 MB): beyond a million
  // messages every insert would otherwise read its index pages back from the OS.
  if (auto cached = test::exec(*db, "PRAGMA cache_size=-1048576"); !cached) {
    std::fprintf(stderr, "large_db: %s\n", cached.error().message.c_str());
    return 1;
  }
  History history(*db, leave_open);
  const auto start = now - std::chrono::seconds(total * 86400 / per_day);
  const auto began = std::chrono::steady_clock::now();
  for (long long first = 0; first < total; first += k_batch) {
    auto written = store::transaction<void>(*db, [&]() -> Result<void> {
      for (long long n = first; n < std::min(total, first + k_batch); ++n) {
        if (auto ok = history.message(n, start + std::chrono::seconds(n * 86400 / per_day)); !ok) return ok;
      }
      return {};
    });
    if (!written) {
      std::fprintf(stderr, "large_db: %s\n", written.error().message.c_str());
      return 1;
    }
    if ((first / k_batch) % 50 == 49 || first + k_batch >= total) {
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
      std::printf("{\"messages\":%lld,\"seconds\":%.1f}\n", std::min(total, first + k_batch), seconds);
      std::fflush(stdout);
    }
  }
  return 0;
}
