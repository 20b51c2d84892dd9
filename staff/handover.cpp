#include "staff/handover.h"

#include <algorithm>

#include "common/utf8.h"
#include "store/staff.h"
#include "store/transaction.h"

namespace dispatchd::staff {
namespace {

using Refused = std::unexpected<HandOverRefusal>;

Refused refused(HandOverRefusalKind kind, const store::ClaimState& claim) {
  return Refused(HandOverRefusal{kind, claim.holder, 0});
}

std::expected<store::HandOverRule, HandOverRefusal> takeover_rule(const store::ClaimState& claim,
                                                                  const HandOverAsk& ask, store::Time now,
                                                                  std::chrono::minutes idle_limit) {
  if (claim.holder == ask.actor) return refused(HandOverRefusalKind::already_holder, claim);
  if (claim.holder_revoked) return store::HandOverRule::holder_revoked;
  // A claim without its time (written before claims were timed) has been idle forever.
  if (!claim.active_at) return store::HandOverRule::idle;
  const auto idle = now - *claim.active_at;
  if (idle >= idle_limit) return store::HandOverRule::idle;
  const auto left = std::chrono::ceil<std::chrono::minutes>(idle_limit - idle);
  return Refused(HandOverRefusal{HandOverRefusalKind::not_idle, claim.holder, std::max<std::int64_t>(1, left.count())});
}

std::expected<void, Refusal> checked_note(const std::string& note, bool required) {
  if (!utf8::is_valid(note)) return std::unexpected(Refusal{RefusalKind::invalid, "the note is not valid UTF-8", {}});
  const std::size_t length = utf8::code_points(note);
  if (required && length == 0) return std::unexpected(Refusal{RefusalKind::invalid, "the note is empty", {}});
  if (length > k_max_note_code_points) {
    return std::unexpected(Refusal{RefusalKind::invalid,
                                   "the note has " + std::to_string(length) + " characters; at most " +
                                       std::to_string(k_max_note_code_points) + " are kept",
                                   {}});
  }
  return {};
}

}  // namespace

std::expected<store::HandOverRule, HandOverRefusal> hand_over_rule(const store::ClaimState& claim,
                                                                   const HandOverAsk& ask, store::Time now,
                                                                   std::chrono::minutes idle_limit) {
  if (claim.status == store::EscalationStatus::resolved || claim.status == store::EscalationStatus::dismissed)
    return refused(HandOverRefusalKind::closed, claim);
  if (claim.status != store::EscalationStatus::claimed || !claim.holder)
    return refused(HandOverRefusalKind::not_claimed, claim);
  switch (ask.kind) {
    case store::HandOverKind::release:
      if (claim.holder != ask.actor) return refused(HandOverRefusalKind::not_holder, claim);
      return store::HandOverRule::holder;
    case store::HandOverKind::takeover: return takeover_rule(claim, ask, now, idle_limit);
    case store::HandOverKind::reassign:
      if (!ask.actor_is_admin) return refused(HandOverRefusalKind::not_admin, claim);
      if (!ask.to || !ask.to_active) return refused(HandOverRefusalKind::target_not_active, claim);
      if (claim.holder == ask.to) return refused(HandOverRefusalKind::already_holder, claim);
      return store::HandOverRule::admin;
  }
  return refused(HandOverRefusalKind::not_claimed, claim);
}

std::string describe(const HandOverRefusal& refusal, std::int64_t escalation) {
  const std::string it = "escalation " + std::to_string(escalation);
  const std::string holder = refusal.holder.value_or("nobody");
  switch (refusal.kind) {
    case HandOverRefusalKind::closed: return it + " is closed";
    case HandOverRefusalKind::not_claimed: return it + " is not claimed";
    case HandOverRefusalKind::not_holder: return it + " is claimed by " + holder + ": only the holder releases it";
    case HandOverRefusalKind::already_holder: return it + " is already claimed by " + holder;
    case HandOverRefusalKind::not_idle:
      return it + " is claimed by " + holder + " and not idle yet: a take-over is allowed in " +
             std::to_string(refusal.minutes_left) + (refusal.minutes_left == 1 ? " minute" : " minutes");
    case HandOverRefusalKind::not_admin: return "only an admin reassigns a claim (" + it + ")";
    case HandOverRefusalKind::target_not_active: return "no active account to reassign " + it + " to";
  }
  return it + " cannot be handed over";
}

RefusalKind refusal_kind(HandOverRefusalKind kind) {
  switch (kind) {
    case HandOverRefusalKind::not_admin: return RefusalKind::forbidden;
    case HandOverRefusalKind::target_not_active: return RefusalKind::not_found;
    default: return RefusalKind::state;
  }
}

std::expected<store::HandOverRule, Refusal> hand_over(store::Database& db, std::int64_t escalation,
                                                      const HandOverAsk& ask, const std::string& note, store::Time now,
                                                      std::chrono::minutes idle_limit) {
  if (auto ok = checked_note(note, false); !ok) return std::unexpected(std::move(ok.error()));
  std::optional<HandOverRefusal> refusal;
  auto done = store::transaction<store::HandOverRule>(db, [&]() -> store::Result<store::HandOverRule> {
    auto claim = store::claim_state(db, escalation);
    if (!claim) return std::unexpected(claim.error());
    HandOverAsk checked = ask;
    if (ask.kind == store::HandOverKind::reassign && ask.to) {
      auto hash = store::staff_token_hash(db, *ask.to);
      if (!hash) return std::unexpected(hash.error());
      checked.to_active = hash->has_value();
    }
    auto rule = hand_over_rule(*claim, checked, now, idle_limit);
    if (!rule) {
      refusal = rule.error();
      return std::unexpected(store::Error::refused(describe(rule.error(), escalation)));
    }
    const std::optional<std::string> to = ask.kind == store::HandOverKind::release ? std::nullopt
                                          : ask.kind == store::HandOverKind::takeover
                                              ? std::optional<std::string>(ask.actor)
                                              : ask.to;
    auto recorded =
        store::record_hand_over(db, escalation, {ask.kind, *rule, ask.actor, *claim->holder, to, note}, now);
    if (!recorded) return std::unexpected(recorded.error());
    return *rule;
  });
  if (done) return *done;
  if (refusal) return std::unexpected(Refusal{refusal_kind(refusal->kind), std::move(done.error().message), {}});
  return std::unexpected(to_refusal(std::move(done.error())));
}

std::expected<std::int64_t, Refusal> add_note(store::Database& db, std::int64_t escalation, const std::string& author,
                                              const std::string& text, store::Time now) {
  if (auto ok = checked_note(text, true); !ok) return std::unexpected(std::move(ok.error()));
  auto id = store::add_note(db, escalation, author, text, now);
  if (!id) return std::unexpected(to_refusal(std::move(id.error())));
  return *id;
}

}  // namespace dispatchd::staff
