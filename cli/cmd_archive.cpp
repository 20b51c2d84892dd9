// dispatchctl archive: moves old, finished messages into an archive file (store/tools/archive.h).
#include <charconv>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "cli/args.h"
#include "cli/clock.h"
#include "cli/target.h"
#include "common/json_out.h"
#include "config/config.h"
#include "store/tools/archive.h"
#include "validator/checks.h"

namespace dispatchd::cli {
namespace {

constexpr const char* k_archive_usage =
    "usage: dispatchctl [--config FILE | --db FILE] archive [--before YYYY-MM-DD | --older-than-days N] PATH\n"
    "                   [--batch N] [--pause-ms N] [--migrations DIR] [--json]";

std::optional<long long> number(const Args& args, const std::string& name, long long min, long long max,
                                std::string& error) {
  const auto text = args.get(name);
  if (!text) return std::nullopt;
  long long value = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end != text->data() + text->size() || value < min || value > max)
    error = "--" + name + " takes a whole number from " + std::to_string(min) + " to " + std::to_string(max);
  return value;
}

// The day `days` before today (UTC), as YYYY-MM-DD.
std::string days_ago(long long days) {
  const std::chrono::year_month_day day{std::chrono::floor<std::chrono::days>(now()) - std::chrono::days{days}};
  char text[16];
  std::snprintf(text, sizeof text, "%04d-%02u-%02u", static_cast<int>(day.year()), static_cast<unsigned>(day.month()),
                static_cast<unsigned>(day.day()));
  return text;
}

// A run that met the daemon's write lock past the busy timeout (a long transaction, a
// checkpoint) changed nothing it has not committed: the next run resumes. So a busy run is
// run again after a growing pause, k_busy_retries times, before the command gives up.
constexpr int k_busy_retries = 5;

std::chrono::seconds busy_pause(int retry) { return std::chrono::seconds{1 << (retry - 1)}; }

// What the runs of one command did together: counts add up, the rest is the last run's.
store::ArchiveResult add(store::ArchiveResult total, const store::ArchiveResult& run) {
  total.moved.messages += run.moved.messages;
  total.moved.audit_events += run.moved.audit_events;
  total.moved.anchor_id = run.moved.anchor_id;
  total.recovered_messages += run.recovered_messages;
  total.undone_messages += run.undone_messages;
  total.stopped_at = run.stopped_at;
  total.stop_reason = run.stop_reason;
  total.held_back = run.held_back;
  return total;
}

void print_text(const store::ArchiveResult& r, const std::string& path, const std::string& before) {
  if (r.recovered_messages > 0 || r.undone_messages > 0) {
    std::printf("archive: finished an interrupted run: %lld messages deleted from live, %lld copies taken back\n",
                static_cast<long long>(r.recovered_messages), static_cast<long long>(r.undone_messages));
  }
  std::printf("archive: %lld messages, %lld audit events moved to %s; the live chain starts after audit id %lld\n",
              static_cast<long long>(r.moved.messages), static_cast<long long>(r.moved.audit_events), path.c_str(),
              static_cast<long long>(r.moved.anchor_id));
  if (r.held_back > 0) {
    const std::string who = r.stopped_at ? "message " + std::to_string(*r.stopped_at) : "an event";
    std::printf(
        "archive: %lld finished messages received before %s stay live: %s (%s) comes first in the audit "
        "chain, which is archived only as a prefix\n",
        static_cast<long long>(r.held_back), before.c_str(), who.c_str(),
        r.stop_reason ? std::string(store::to_string(*r.stop_reason)).c_str() : "end of chain");
  }
}

void print_json(const store::ArchiveResult& r, const std::string& path, const std::string& before) {
  JsonOut out;
  out.begin_object().field("archive", path).field("before", before);
  out.field("messages", r.moved.messages).field("audit_events", r.moved.audit_events);
  out.field("anchor_id", r.moved.anchor_id).field("recovered_messages", r.recovered_messages);
  out.field("undone_messages", r.undone_messages).field("held_back", r.held_back);
  out.field("stopped_at", r.stopped_at);
  std::optional<std::string> reason;
  if (r.stop_reason) reason = std::string(store::to_string(*r.stop_reason));
  out.field("stop_reason", reason).end_object();
  std::printf("%s\n", out.str().c_str());
}

}  // namespace

int cmd_archive(int argc, char** argv) {
  auto specs = target_options();
  specs.insert(specs.end(), {{"before", true},
                             {"older-than-days", true},
                             {"batch", true},
                             {"pause-ms", true},
                             {"migrations", true},
                             {"json", false}});
  auto args = parse_args(argc, argv, 2, specs);
  if (!args) return usage_error(args.error());
  if (args->positional.size() != 1) return usage_error(k_archive_usage);
  std::string error;
  const auto older = number(*args, "older-than-days", 0, 100000, error);
  const auto batch = number(*args, "batch", 1, 100000, error);
  const auto pause = number(*args, "pause-ms", 0, 60000, error);
  if (!error.empty()) return usage_error(error);
  auto before = args->get("before");
  if (before && older) return usage_error("give --before YYYY-MM-DD or --older-than-days N, not both");
  auto target = open_target(*args);
  if (!target) return usage_error(target.error());
  // Neither: the configuration's retention period (what the nightly timer relies on).
  const int retention = target->config ? target->config->retention_days : 0;
  if (!before && !older && retention > 0) before = days_ago(retention);
  if (older) before = days_ago(*older);
  if (!before)
    return usage_error("give --before YYYY-MM-DD or --older-than-days N, or set retention.days in the configuration");
  if (!validator::is_calendar_date(*before)) return usage_error("--before takes a UTC day written YYYY-MM-DD");
  const std::string folder =
      args->get("migrations")
          .value_or(target->config ? target->config->migrations_dir : config::default_migrations_dir());
  auto migrations = store::load_migrations(folder);
  if (!migrations) return usage_error(migrations.error().message);

  store::ArchiveOptions options;
  options.before = *before;
  options.batch_messages = static_cast<std::size_t>(batch.value_or(500));
  options.migrations = std::move(*migrations);
  options.now = store::format_time(now());
  // A pause between batches leaves the daemon's writers the lock.
  if (pause.value_or(0) > 0) {
    options.after_batch = [ms = *pause](const store::ArchiveProgress&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    };
  }
  const std::string& path = args->positional[0];
  store::ArchiveResult total;
  // Batches committed by a run that then failed are not lost: the progress callback counts
  // them, and the next run starts after them.
  store::ArchiveProgress committed;
  auto pause_after = options.after_batch;
  options.after_batch = [&committed, pause_after](const store::ArchiveProgress& progress) {
    committed = progress;
    if (pause_after) pause_after(progress);
  };
  for (int retry = 0;; ++retry) {
    committed = {};
    const auto result = store::archive_before(target->db, path, options);
    if (result) {
      total = add(std::move(total), *result);
      break;
    }
    total.moved.messages += committed.messages;
    total.moved.audit_events += committed.audit_events;
    if (result.error().kind != store::ErrorKind::busy || retry == k_busy_retries) {
      std::fprintf(stderr, "dispatchctl: archive: %s\n", result.error().message.c_str());
      if (total.moved.messages > 0)
        std::fprintf(stderr, "dispatchctl: archive: %lld messages were moved before it; the next run goes on\n",
                     static_cast<long long>(total.moved.messages));
      return k_exit_rejected;
    }
    const auto pause_s = busy_pause(retry + 1);
    std::fprintf(stderr, "dispatchctl: archive: %s; the live database is busy, retrying in %lld s (%d of %d)\n",
                 result.error().message.c_str(), static_cast<long long>(pause_s.count()), retry + 1, k_busy_retries);
    std::this_thread::sleep_for(pause_s);
  }
  if (args->has("json"))
    print_json(total, path, *before);
  else
    print_text(total, path, *before);
  return k_exit_ok;
}

}  // namespace dispatchd::cli
