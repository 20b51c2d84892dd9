// dispatchctl queue: the escalation queue for staff. Listing and showing read the views;
// decisions go through staff/ (the validator and policy for approved or edited actions).
// Exit 0 done, 1 refused (state machine or validator), 2 usage.
#include <cstdio>
#include <string>

#include "cli/args.h"
#include "cli/clock.h"
#include "cli/queue_search.h"
#include "cli/queue_table.h"
#include "cli/target.h"
#include "common/utf8.h"
#include "connectors/window_rules.h"
#include "staff/decisions.h"
#include "staff/handover.h"
#include "staff/json.h"
#include "staff/saved_replies.h"
#include "store/views.h"
#include "validator/validator.h"

namespace dispatchd::cli {
namespace {

constexpr const char* k_queue_usage =
    "usage: dispatchctl [--config FILE | --db FILE] queue list [--status S] [--json]\n"
    "       dispatchctl ... queue show ID [--catalog FILE] [--json]\n"
    "       dispatchctl ... queue claim ID --as NAME\n"
    "       dispatchctl ... queue approve ID --as NAME [--catalog FILE]\n"
    "       dispatchctl ... queue edit ID --as NAME --action JSON [--catalog FILE] [--json]\n"
    "       dispatchctl ... queue reply ID --as NAME --text TEXT | --saved ID\n"
    "       dispatchctl ... queue dismiss ID --as NAME --note TEXT\n"
    "       dispatchctl ... queue release ID --as NAME [--note TEXT]\n"
    "       dispatchctl ... queue takeover ID --as NAME [--note TEXT]\n"
    "       dispatchctl ... queue reassign ID --to NAME --as NAME [--note TEXT]\n"
    "       dispatchctl ... queue note ID --as NAME --text TEXT\n"
    "       dispatchctl ... queue search [--customer C] [--text T] [--reason R] [--status S] [--from DAY]\n"
    "                                    [--to DAY] [--limit N] [--json]\n"
    "       dispatchctl ... queue history ID [--before MESSAGE_ID] [--limit N] [--json]";

int list_queue(Target& target, const Args& args, store::Time at) {
  std::optional<store::EscalationStatus> status;
  if (const auto text = args.get("status")) {
    status = store::from_sql<store::EscalationStatus>(*text);
    if (!status) return usage_error("--status is open, claimed, resolved or dismissed");
  }
  auto rows = store::list_escalations(target.db, {.status = status});
  if (!rows) return usage_error(rows.error().message);
  print_escalations(*rows, target_clock(target, at), args.has("json"));
  if (args.has("json")) return k_exit_ok;
  if (rows->empty())
    std::printf("(no escalations%s)\n", status ? (" with status " + std::string(store::to_sql(*status))).c_str() : "");
  return k_exit_ok;
}

// The hand-overs and the internal notes, oldest first.
void show_desk(const store::EscalationCase& item) {
  if (!item.hand_overs.empty()) std::printf("\nhand-overs:\n");
  for (const auto& h : item.hand_overs) {
    std::printf("  %s %s by %s: %s -> %s (rule %s)%s\n", h.at.c_str(), std::string(store::to_text(h.kind)).c_str(),
                h.actor.c_str(), h.from.value_or("-").c_str(), h.to.value_or("open").c_str(),
                std::string(store::to_text(h.rule)).c_str(), h.note.empty() ? "" : (": " + h.note).c_str());
  }
  if (!item.notes.empty()) std::printf("\nnotes (internal, never sent):\n");
  for (const auto& n : item.notes) std::printf("  %s %s: %s\n", n.created_at.c_str(), n.author.c_str(), n.text.c_str());
}

// Whether free-form text reaches the customer now, and the template actions otherwise.
void show_reach(const staff::CaseWindow& reach, bool have_catalog) {
  if (!reach.window) return;
  const auto& w = *reach.window;
  const std::string when = w.closes_at ? store::format_time(*w.closes_at) : "";
  if (w.open) {
    std::printf("\nreply window: open until %s\n", when.c_str());
  } else {
    std::printf("\nreply window: closed%s: only a template action reaches the customer\n",
                w.closes_at ? (" since " + when).c_str() : " (the customer never wrote)");
  }
  if (!have_catalog) {
    std::printf("  (the template actions need the catalog: --config or --catalog)\n");
    return;
  }
  if (reach.templates.empty()) std::printf("  the catalog has no template action\n");
  for (const auto& t : reach.templates) {
    std::string fills;
    for (const auto& p : t.parameters) {
      if (!fills.empty()) fills += ", ";
      fills += p.field + " -> " + template_send::to_string(p.part) +
               (p.part == catalog::TemplatePart::button ? " " + std::to_string(p.button) : "") + " {{" + p.name + "}}";
    }
    std::printf("  template action %s: %s (%s), %s%s\n", t.action.c_str(), t.name.c_str(), t.language.c_str(),
                t.status ? std::string(store::to_sql(*t.status)).c_str() : "not listed by the channel",
                fills.empty() ? "" : ("; " + fills).c_str());
  }
}

int show(Target& target, const Args& args, std::int64_t id, store::Time at) {
  auto item = store::show_escalation(target.db, id);
  if (!item) {
    std::fprintf(stderr, "dispatchctl: %s\n", item.error().message.c_str());
    return k_exit_rejected;
  }
  // The catalog names the template actions; without one (a bare --db) the window alone.
  const auto catalog = target_catalog(args, target);
  const auto& message = item->message;
  auto reach = staff::case_window(target.db, catalog ? &*catalog : nullptr, connectors::window_rule(message.channel),
                                  message.channel, message.sender, at);
  if (!reach) {
    std::fprintf(stderr, "dispatchctl: %s\n", reach.error().message.c_str());
    return k_exit_rejected;
  }
  if (args.has("json")) {
    std::printf("%s\n", staff::case_json(*item, std::nullopt, &*reach).c_str());
    return k_exit_ok;
  }
  const auto& e = item->escalation;
  std::printf("escalation %lld: %s, reason %s, created %s\n", static_cast<long long>(e.id),
              std::string(store::to_sql(e.status)).c_str(), std::string(store::to_sql(e.reason)).c_str(),
              e.created_at.c_str());
  if (e.assignee)
    std::printf("  held by %s%s\n", e.assignee->c_str(), e.claimed_at ? (" since " + *e.claimed_at).c_str() : "");
  if (e.resolution) std::printf("  resolution: %s (%s)\n", e.resolution->c_str(), e.resolved_at.value_or("").c_str());
  if (e.detail) std::printf("  detail: %s\n", e.detail->c_str());
  std::printf("\nconversation (%zu message%s, %s):\n", item->conversation.size(),
              item->conversation.size() == 1 ? "" : "s", item->message.channel.c_str());
  for (const auto& m : item->conversation) {
    std::printf("  #%lld %s %s: %s\n", static_cast<long long>(m.id), m.received_at.c_str(), m.sender.c_str(),
                m.text.c_str());
  }
  show_reach(*reach, catalog.has_value());
  std::printf("\nattempts (%zu):\n", item->attempts.size());
  for (const auto& a : item->attempts) {
    std::printf("  #%lld %s/%s %s%s, %lld ms, tokens %lld in / %lld out, finish %s\n",
                static_cast<long long>(a.attempt), a.provider.c_str(), a.model.c_str(),
                std::string(store::to_sql(a.verdict)).c_str(),
                a.error_class ? (" (" + *a.error_class + ")").c_str() : "",
                static_cast<long long>(a.latency_ms.value_or(0)), static_cast<long long>(a.input_tokens.value_or(0)),
                static_cast<long long>(a.output_tokens.value_or(0)), a.finish_reason.value_or("-").c_str());
    std::printf("     output: %s\n", a.raw_output.value_or("(none)").c_str());
    if (a.errors != "[]") std::printf("     errors: %s\n", a.errors.c_str());
  }
  std::printf("\nproposed action: %s\n", e.proposed_action.value_or("(none)").c_str());
  if (!item->actions.empty()) std::printf("\nactions:\n");
  for (const auto& a : item->actions) {
    std::printf("  #%lld %s %s by %s, to %s: %s%s\n", static_cast<long long>(a.id), a.action.c_str(),
                std::string(store::to_sql(a.status)).c_str(), a.created_by.c_str(), a.recipient.value_or("-").c_str(),
                preview(a.body.value_or(""), 60).c_str(), a.error ? (" [" + *a.error + "]").c_str() : "");
  }
  show_desk(*item);
  return k_exit_ok;
}

int refused(const staff::Refusal& refusal, const Args& args) {
  if (args.has("json") && refusal.verdict) std::printf("%s\n", validator::to_json(*refusal.verdict).c_str());
  std::fprintf(stderr, "dispatchctl: refused: %s\n", refusal.message.c_str());
  return k_exit_rejected;
}

// The hand-overs and notes. dispatchctl runs on the server with the database's own access,
// which is already full trust: it reassigns as an admin, and --as names who did it.
int desk(Target& target, const Args& args, const std::string& verb, std::int64_t id, const std::string& who,
         store::Time at) {
  if (verb == "note") {
    const auto text = args.get("text");
    if (!text) return usage_error("queue note needs --text TEXT");
    auto note = staff::add_note(target.db, id, who, *text, at);
    if (!note) return refused(note.error(), args);
    std::printf("note %lld added to escalation %lld by %s\n", static_cast<long long>(*note), static_cast<long long>(id),
                who.c_str());
    return k_exit_ok;
  }
  const auto to = args.get("to");
  if (verb == "reassign" && (!to || to->empty())) return usage_error("queue reassign needs --to NAME");
  // cmd_queue calls this for "note" or a hand-over's word only.
  const store::HandOverKind kind = store::hand_over_kind(verb).value_or(store::HandOverKind::reassign);
  const std::chrono::minutes idle_limit =
      target.config ? std::chrono::minutes(target.config->staff.claim_idle_minutes) : staff::k_default_claim_idle;
  auto rule =
      staff::hand_over(target.db, id, {kind, who, true, kind == store::HandOverKind::reassign ? to : std::nullopt},
                       args.get("note").value_or(""), at, idle_limit);
  if (!rule) return refused(rule.error(), args);
  const std::string holder = kind == store::HandOverKind::release    ? "nobody (open)"
                             : kind == store::HandOverKind::takeover ? who
                                                                     : *to;
  const char* done = kind == store::HandOverKind::release    ? "released"
                     : kind == store::HandOverKind::takeover ? "taken over"
                                                             : "reassigned";
  std::printf("escalation %lld %s by %s (rule %s): now held by %s\n", static_cast<long long>(id), done, who.c_str(),
              std::string(store::to_text(*rule)).c_str(), holder.c_str());
  return k_exit_ok;
}

}  // namespace

int cmd_queue(int argc, char** argv) {
  auto specs = target_options();
  specs.insert(specs.end(), {{"status", true},
                             {"json", false},
                             {"as", true},
                             {"action", true},
                             {"text", true},
                             {"note", true},
                             {"to", true},
                             {"saved", true},
                             {"customer", true},
                             {"reason", true},
                             {"from", true},
                             {"to", true},
                             {"before", true},
                             {"limit", true}});
  auto args = parse_args(argc, argv, 2, specs);
  if (!args) return usage_error(args.error());
  const auto& words = args->positional;
  if (words.empty()) return usage_error(k_queue_usage);
  const std::string& verb = words[0];
  const bool is_list = verb == "list" || verb == "search";
  if (is_list ? words.size() != 1 : words.size() != 2) return usage_error(k_queue_usage);
  std::optional<std::int64_t> id;
  if (!is_list) {
    id = positive_id(words[1]);
    if (!id) return usage_error("ID must be a positive whole number, not " + words[1]);
  }
  auto target = open_target(*args);
  if (!target) return usage_error(target.error());
  if (verb == "list") return list_queue(*target, *args, now());
  if (verb == "search") return search_queue(*target, *args, now());
  if (verb == "show") return show(*target, *args, *id, now());
  if (verb == "history") return show_history(*target, *args, *id);

  const auto who = args->get("as");
  if (!who || who->empty()) return usage_error("queue " + verb + " needs --as NAME (who decides is recorded)");
  const store::Time at = now();
  if (verb == "claim") {
    auto done = staff::claim(target->db, *id, *who, at);
    if (!done) return refused(done.error(), *args);
    std::printf("escalation %lld claimed by %s\n", static_cast<long long>(*id), who->c_str());
    return k_exit_ok;
  }
  if (verb == "note" || store::hand_over_kind(verb)) return desk(*target, *args, verb, *id, *who, at);
  if (verb == "dismiss") {
    const auto note = args->get("note");
    if (!note) return usage_error("queue dismiss needs --note TEXT");
    auto done = staff::dismiss(target->db, *id, *who, *note, at);
    if (!done) return refused(done.error(), *args);
    std::printf("escalation %lld dismissed by %s\n", static_cast<long long>(*id), who->c_str());
    return k_exit_ok;
  }
  std::expected<std::int64_t, staff::Refusal> action = std::unexpected(staff::Refusal{});
  if (verb == "reply") {
    const auto text = args->get("text");
    const auto saved = args->get("saved");
    if (text.has_value() == saved.has_value()) return usage_error("queue reply needs --text TEXT or --saved ID");
    if (saved) {
      const auto saved_id = positive_id(*saved);
      if (!saved_id) return usage_error("--saved takes a saved reply's id, not " + *saved);
      action = staff::reply_saved(target->db, *id, *who, *saved_id, at, &connectors::window_rule);
    } else {
      action = staff::reply(target->db, *id, *who, *text, at, &connectors::window_rule);
    }
  } else if (verb == "approve" || verb == "edit") {
    auto catalog = target_catalog(*args, *target);
    if (!catalog) return usage_error(catalog.error());
    if (verb == "approve") {
      action = staff::approve(target->db, *catalog, *id, *who, at, &connectors::window_rule);
    } else {
      const auto json = args->get("action");
      if (!json) return usage_error("queue edit needs --action JSON");
      action = staff::edit(target->db, *catalog, *id, *who, *json, at, &connectors::window_rule);
    }
  } else {
    return usage_error("unknown queue command " + verb + "\n" + k_queue_usage);
  }
  if (!action) return refused(action.error(), *args);
  std::printf("escalation %lld resolved by %s: action %lld is in the outbox\n", static_cast<long long>(*id),
              who->c_str(), static_cast<long long>(*action));
  return k_exit_ok;
}

}  // namespace dispatchd::cli
