// dispatchctl staff: named staff accounts. `add` prints the new personal token alone on the
// first line of stdout (it is shown once; the database keeps only its hash), so that a
// script can read it with `head -1`. Exit 0 done, 1 refused, 2 usage.
#include <cstdio>
#include <string>

#include "cli/args.h"
#include "cli/clock.h"
#include "cli/target.h"
#include "common/json_out.h"
#include "staff/accounts.h"
#include "store/staff.h"

namespace dispatchd::cli {
namespace {

constexpr const char* k_staff_usage =
    "usage: dispatchctl [--config FILE | --db FILE] staff add NAME [--admin]\n"
    "       dispatchctl ... staff list [--json]\n"
    "       dispatchctl ... staff admin NAME on|off\n"
    "       dispatchctl ... staff revoke NAME";

int refused(const staff::Refusal& refusal) {
  std::fprintf(stderr, "dispatchctl: refused: %s\n", refusal.message.c_str());
  return k_exit_rejected;
}

int list_staff(Target& target, const Args& args) {
  auto accounts = store::list_staff(target.db);
  if (!accounts) return usage_error(accounts.error().message);
  if (args.has("json")) {
    JsonOut out;
    out.begin_array();
    for (const auto& a : *accounts) {
      out.begin_object().field("name", a.name).field("created_at", a.created_at).field("revoked_at", a.revoked_at);
      out.field("sessions", a.sessions).field("admin", a.admin).end_object();
    }
    std::printf("%s\n", out.end_array().str().c_str());
    return k_exit_ok;
  }
  std::printf("%-24s %-8s %-21s %-8s %s\n", "NAME", "STATE", "SINCE", "SESSIONS", "ADMIN");
  for (const auto& a : *accounts) {
    std::printf("%-24s %-8s %-21s %-8lld %s\n", a.name.c_str(), a.revoked_at ? "revoked" : "active",
                a.revoked_at.value_or(a.created_at).c_str(), static_cast<long long>(a.sessions),
                a.admin ? "admin" : "-");
  }
  if (accounts->empty()) std::printf("(no staff accounts; add one with: dispatchctl staff add NAME)\n");
  return k_exit_ok;
}

}  // namespace

int cmd_staff(int argc, char** argv) {
  auto specs = target_options();
  specs.push_back({"json", false});
  specs.push_back({"admin", false});
  auto args = parse_args(argc, argv, 2, specs);
  if (!args) return usage_error(args.error());
  const auto& words = args->positional;
  if (words.empty()) return usage_error(k_staff_usage);
  const std::string& verb = words[0];
  const bool is_list = verb == "list";
  const std::size_t wanted = is_list ? 1 : verb == "admin" ? 3 : 2;
  if (words.size() != wanted) return usage_error(k_staff_usage);
  auto target = open_target(*args);
  if (!target) return usage_error(target.error());
  if (is_list) return list_staff(*target, *args);
  const std::string& name = words[1];
  if (verb == "add") {
    auto token = staff::add_account(target->db, name, operator_actor(), now(), args->has("admin"));
    if (!token) return refused(token.error());
    std::printf("%s\n", token->c_str());
    std::fprintf(stderr, "staff account %s%s added; the token above is shown once: give it to %s\n", name.c_str(),
                 args->has("admin") ? " (admin)" : "", name.c_str());
    return k_exit_ok;
  }
  if (verb == "admin") {
    const std::string& mark = words[2];
    if (mark != "on" && mark != "off") return usage_error("staff admin NAME takes on or off, not " + mark);
    auto done = staff::set_admin(target->db, name, mark == "on", operator_actor(), now());
    if (!done) return refused(done.error());
    std::printf("staff account %s is %s\n", name.c_str(), mark == "on" ? "an admin" : "not an admin");
    return k_exit_ok;
  }
  if (verb == "revoke") {
    auto revoked = staff::revoke_account(target->db, name, operator_actor(), now());
    if (!revoked) return refused(revoked.error());
    std::printf("staff account %s revoked; its sessions are ended\n", name.c_str());
    return k_exit_ok;
  }
  return usage_error("unknown staff command " + verb + "\n" + k_staff_usage);
}

}  // namespace dispatchd::cli
