// dispatchctl audit: lists the audit trail, or verifies its hash chain.
#include <charconv>
#include <cstdio>
#include <string>

#include "cli/args.h"
#include "cli/target.h"
#include "common/json_out.h"
#include "store/audit.h"
#include "store/views.h"

namespace dispatchd::cli {
namespace {

constexpr const char* k_audit_usage =
    "usage: dispatchctl [--config FILE | --db FILE] audit [--message ID] [--since TIME] [--json]\n"
    "       dispatchctl [--config FILE | --db FILE] audit verify [--archive PATH]";

// "ok, N events, chain intact" or "BROKEN at ..." for one chain; false when broken.
bool print_check(const char* label, const store::AuditCheck& check) {
  if (check.first_broken) {
    std::printf("%s: BROKEN at audit id %lld after %lld events: %s\n", label,
                static_cast<long long>(*check.first_broken), static_cast<long long>(check.events - 1),
                check.reason.c_str());
    return false;
  }
  const std::string from =
      check.anchor ? " from the anchor after audit id " + std::to_string(check.anchor->last_id) : "";
  std::printf("%s: ok, %lld events, chain intact%s\n", label, static_cast<long long>(check.events), from.c_str());
  return true;
}

int verify(Target& target, const std::optional<std::string>& archive_path) {
  const auto check = store::verify_audit(target.db);
  if (!check) return usage_error("cannot read the audit trail: " + check.error().message);
  bool ok = print_check("audit", *check);
  if (archive_path) {
    auto archive = store::Database::open(*archive_path, store::Database::Mode::existing);
    if (!archive) return usage_error(archive.error().message);
    const auto checked = store::verify_audit_archive(target.db, *archive);
    if (!checked) return usage_error("cannot read the archive's audit trail: " + checked.error().message);
    ok = print_check("archive", checked->archive) && ok;
    const bool joined = checked->link == store::ArchiveLink::linked || checked->link == store::ArchiveLink::overlap ||
                        checked->link == store::ArchiveLink::empty;
    std::printf("link: %s: %s\n", joined ? "ok" : "BROKEN", checked->detail.c_str());
    ok = ok && joined;
  }
  return ok ? k_exit_ok : k_exit_rejected;
}

// "2026-11-30", "2026-11-30T12", ... "2026-11-30T12:00:00Z": a prefix of the store's format.
bool is_time_prefix(const std::string& t) {
  static const std::string shape = "dddd-dd-ddTdd:dd:ddZ";
  if (t.size() < 4 || t.size() > shape.size()) return false;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (shape[i] == 'd' ? !(t[i] >= '0' && t[i] <= '9') : t[i] != shape[i]) return false;
  }
  return true;
}

}  // namespace

int cmd_audit(int argc, char** argv) {
  auto specs = target_options();
  specs.insert(specs.end(), {{"message", true}, {"since", true}, {"json", false}, {"archive", true}});
  auto args = parse_args(argc, argv, 2, specs);
  if (!args) return usage_error(args.error());
  const bool is_verify = args->positional == std::vector<std::string>{"verify"};
  if (!is_verify && !args->positional.empty()) return usage_error(k_audit_usage);
  std::optional<std::int64_t> message;
  if (const auto text = args->get("message")) {
    std::int64_t id = 0;
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), id);
    if (ec != std::errc() || end != text->data() + text->size() || id <= 0) return usage_error("--message takes an id");
    message = id;
  }
  const auto since = args->get("since");
  if (since && !is_time_prefix(*since))
    return usage_error("--since takes a UTC time such as 2026-11-30 or 2026-11-30T12:00:00Z");
  auto target = open_target(*args);
  if (!target) return usage_error(target.error());
  if (is_verify) return verify(*target, args->get("archive"));
  if (args->has("archive")) return usage_error("--archive goes with audit verify");

  auto rows = store::list_audit(target->db, message, since);
  if (!rows) return usage_error(rows.error().message);
  if (args->has("json")) {
    JsonOut out;
    out.begin_array();
    for (const auto& r : *rows) {
      out.begin_object().field("audit_id", r.id).field("at", r.at).field("event", r.event);
      out.field("message_id", r.message_id).field("actor", r.actor).raw_or_null("detail", r.detail);
      out.field("prev_hash", r.prev_hash).field("hash", r.hash).end_object();
    }
    out.end_array();
    std::printf("%s\n", out.str().c_str());
    return k_exit_ok;
  }
  std::printf("%-6s %-20s %-16s %-7s %-12s %s\n", "ID", "AT", "EVENT", "MESSAGE", "ACTOR", "DETAIL");
  for (const auto& r : *rows) {
    std::printf("%-6lld %-20s %-16s %-7s %-12s %s\n", static_cast<long long>(r.id), r.at.c_str(), r.event.c_str(),
                r.message_id ? std::to_string(*r.message_id).c_str() : "-", r.actor.c_str(), r.detail.c_str());
  }
  return k_exit_ok;
}

}  // namespace dispatchd::cli
