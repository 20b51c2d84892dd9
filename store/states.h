#pragma once
// The states and codes the store writes as text. Their SQL text is the audit contract
// (docs/sql.md's views: v_attempts.verdict, v_messages.outcome, v_actions.status,
// v_escalations.reason, status and resolution, v_audit.event), so each enum has exactly one
// table to and from it, here; code passes the enums, and a typo in a state does not compile.
//
//   to_sql(e)          the text stored for e
//   from_sql<E>(text)  the enum for a stored text; nullopt for any other text

#include <array>
#include <optional>
#include <string_view>
#include <utility>

#include "common/media_kind.h"

namespace dispatchd::store {

// The validator's verdict on one model attempt (v_attempts.verdict). invalid and error
// count toward the re-ask budget.
enum class Verdict { valid, review, invalid, error };

// Where an inbound message is (v_messages.state; store/inbox.h draws the machine): stored,
// taken by a worker under a lease, decided (its actions queued), done.
enum class InboxState { received, processing, decided, done };

// How a message ended (v_messages.outcome), pending until it has. The store writes pending
// only for a new message (and a replay run's messages); finishing one takes the others.
enum class Outcome { pending, replied, escalated, ignored };

// An outbox row's state (v_actions.status); store/outbox.h draws the machine.
enum class ActionStatus { proposed, approved, sending, sent, failed, unknown, rejected };

// Why a message went to staff (v_escalations.reason).
enum class EscalationReason {
  contract_failed,
  model_escalated,
  needs_approval,
  review_flags,
  policy_violation,
  provider_unavailable,
  send_failed,
  delivery_unknown,
  undecodable,
  tool_failed,         // an MCP tool the decision called answered with an error, or was not called
  conversation_limit,  // the conversation is past its reply limits (agent/runaway.h): held
  suspected_loop,      // the counterpart behaves as a bot or echoes our replies: held
  budget_exhausted,    // the model's spend budget is used up
  window_closed,       // the channel refused a free-form send: the counterpart's reply window had closed
};

// What a provider reported about one of our messages (store/outbox.h's DeliveryReport): sent,
// delivered and read confirm it, failed fails it; any other report is recorded only.
enum class DeliveryStatus { sent, delivered, read, failed, other };

// An escalation's state (v_escalations.status); store/queue.h draws the machine.
enum class EscalationStatus { open, claimed, resolved, dismissed };

// Which kind of catalog tool a call was (v_tool_calls.kind).
enum class ToolKind { http, mcp };

// What became of a catalog tool call (v_tool_calls.outcome): answered (ok), answered as a
// failure (tool_error: an MCP isError, an HTTP status of 400 or more), refused by the
// server (rejected: a JSON-RPC error), not answered (unavailable, timed_out), answered with
// something unreadable (bad_answer), or never made (disabled: the action is not pinned to a
// compatible tool).
enum class ToolOutcome { ok, tool_error, rejected, unavailable, timed_out, bad_answer, disabled };

// How staff resolved an escalation (v_escalations.resolution of a resolved one): approved
// its proposal as it was, edited it, or wrote their own reply. A dismissed escalation's
// resolution is staff's note instead, free text.
enum class Resolution { approved, edited, replied };

// What an audit row records (v_audit.event; docs/sql.md lists each with its detail). A row
// keeps its kind as text, and the chain commits to that text: a row written by a newer
// version may name a kind this one does not know, and still verifies and lists.
enum class AuditKind {
  received,
  attempt,
  decided,
  done,
  escalation,
  action,
  delivery,
  staff_claim,
  staff_resolved,
  staff_dismissed,
  staff_release,
  staff_takeover,
  staff_reassign,
  escalation_breached,
  staff_note,
  staff_account_added,
  staff_account_revoked,
  staff_account_admin,
  saved_reply_added,
  saved_reply_changed,
  saved_reply_removed,
  staff_login,
  staff_logout,
  tool_call,
  templates_refreshed,
  template_status,
  template_category,
  config_reload,
  chain_migrated,
  erased,
  media,
  transcript,
};

// A customer's media file (media.kind): the channel's kind, or a mail attachment's by its type.
using MediaKind = common::MediaKind;

// Where one media file is (media.state; store/media.h draws the machine): waiting to be
// fetched, kept, or not kept and why; a kept file's bytes go at the end of its retention
// (purged) or with its customer's data (erased).
enum class MediaState { pending, stored, over_cap, unfetchable, expired, mismatch, purged, erased };

// Where a kept audio file's transcript is (media.transcript_state; media.transcription): not
// to be made, waiting for the speech-to-text endpoint, made, or given up on.
enum class TranscriptState { none, pending, done, failed };

template <typename E>
struct SqlNames;

template <>
struct SqlNames<ToolKind> {
  static constexpr std::array<std::pair<ToolKind, std::string_view>, 2> table{{
      {ToolKind::http, "http"},
      {ToolKind::mcp, "mcp"},
  }};
};

template <>
struct SqlNames<ToolOutcome> {
  static constexpr std::array<std::pair<ToolOutcome, std::string_view>, 7> table{{
      {ToolOutcome::ok, "ok"},
      {ToolOutcome::tool_error, "tool_error"},
      {ToolOutcome::rejected, "rejected"},
      {ToolOutcome::unavailable, "unavailable"},
      {ToolOutcome::timed_out, "timed_out"},
      {ToolOutcome::bad_answer, "bad_answer"},
      {ToolOutcome::disabled, "disabled"},
  }};
};

template <>
struct SqlNames<Verdict> {
  static constexpr std::array<std::pair<Verdict, std::string_view>, 4> table{{
      {Verdict::valid, "valid"},
      {Verdict::review, "review"},
      {Verdict::invalid, "invalid"},
      {Verdict::error, "error"},
  }};
};

template <>
struct SqlNames<InboxState> {
  static constexpr std::array<std::pair<InboxState, std::string_view>, 4> table{{
      {InboxState::received, "received"},
      {InboxState::processing, "processing"},
      {InboxState::decided, "decided"},
      {InboxState::done, "done"},
  }};
};

template <>
struct SqlNames<Outcome> {
  static constexpr std::array<std::pair<Outcome, std::string_view>, 4> table{{
      {Outcome::pending, "pending"},
      {Outcome::replied, "replied"},
      {Outcome::escalated, "escalated"},
      {Outcome::ignored, "ignored"},
  }};
};

template <>
struct SqlNames<ActionStatus> {
  static constexpr std::array<std::pair<ActionStatus, std::string_view>, 7> table{{
      {ActionStatus::proposed, "proposed"},
      {ActionStatus::approved, "approved"},
      {ActionStatus::sending, "sending"},
      {ActionStatus::sent, "sent"},
      {ActionStatus::failed, "failed"},
      {ActionStatus::unknown, "unknown"},
      {ActionStatus::rejected, "rejected"},
  }};
};

template <>
struct SqlNames<EscalationReason> {
  static constexpr std::array<std::pair<EscalationReason, std::string_view>, 14> table{{
      {EscalationReason::contract_failed, "contract_failed"},
      {EscalationReason::model_escalated, "model_escalated"},
      {EscalationReason::needs_approval, "needs_approval"},
      {EscalationReason::review_flags, "review_flags"},
      {EscalationReason::policy_violation, "policy_violation"},
      {EscalationReason::provider_unavailable, "provider_unavailable"},
      {EscalationReason::send_failed, "send_failed"},
      {EscalationReason::delivery_unknown, "delivery_unknown"},
      {EscalationReason::undecodable, "undecodable"},
      {EscalationReason::tool_failed, "tool_failed"},
      {EscalationReason::conversation_limit, "conversation_limit"},
      {EscalationReason::suspected_loop, "suspected_loop"},
      {EscalationReason::budget_exhausted, "budget_exhausted"},
      {EscalationReason::window_closed, "window_closed"},
  }};
};

// The texts the providers send (WhatsApp's statuses) and the audit events record.
template <>
struct SqlNames<DeliveryStatus> {
  static constexpr std::array<std::pair<DeliveryStatus, std::string_view>, 5> table{{
      {DeliveryStatus::sent, "sent"},
      {DeliveryStatus::delivered, "delivered"},
      {DeliveryStatus::read, "read"},
      {DeliveryStatus::failed, "failed"},
      {DeliveryStatus::other, "other"},
  }};
};

template <>
struct SqlNames<EscalationStatus> {
  static constexpr std::array<std::pair<EscalationStatus, std::string_view>, 4> table{{
      {EscalationStatus::open, "open"},
      {EscalationStatus::claimed, "claimed"},
      {EscalationStatus::resolved, "resolved"},
      {EscalationStatus::dismissed, "dismissed"},
  }};
};

template <>
struct SqlNames<Resolution> {
  static constexpr std::array<std::pair<Resolution, std::string_view>, 3> table{{
      {Resolution::approved, "approved"},
      {Resolution::edited, "edited"},
      {Resolution::replied, "replied"},
  }};
};

template <>
struct SqlNames<AuditKind> {
  static constexpr std::array<std::pair<AuditKind, std::string_view>, 32> table{{
      {AuditKind::received, "received"},
      {AuditKind::attempt, "attempt"},
      {AuditKind::decided, "decided"},
      {AuditKind::done, "done"},
      {AuditKind::escalation, "escalation"},
      {AuditKind::action, "action"},
      {AuditKind::delivery, "delivery"},
      {AuditKind::staff_claim, "staff_claim"},
      {AuditKind::staff_resolved, "staff_resolved"},
      {AuditKind::staff_dismissed, "staff_dismissed"},
      {AuditKind::staff_release, "staff_release"},
      {AuditKind::staff_takeover, "staff_takeover"},
      {AuditKind::staff_reassign, "staff_reassign"},
      {AuditKind::escalation_breached, "escalation_breached"},
      {AuditKind::staff_note, "staff_note"},
      {AuditKind::staff_account_added, "staff_account_added"},
      {AuditKind::staff_account_revoked, "staff_account_revoked"},
      {AuditKind::staff_account_admin, "staff_account_admin"},
      {AuditKind::saved_reply_added, "saved_reply_added"},
      {AuditKind::saved_reply_changed, "saved_reply_changed"},
      {AuditKind::saved_reply_removed, "saved_reply_removed"},
      {AuditKind::staff_login, "staff_login"},
      {AuditKind::staff_logout, "staff_logout"},
      {AuditKind::tool_call, "tool_call"},
      {AuditKind::templates_refreshed, "templates_refreshed"},
      {AuditKind::template_status, "template_status"},
      {AuditKind::template_category, "template_category"},
      {AuditKind::config_reload, "config_reload"},
      {AuditKind::chain_migrated, "chain_migrated"},
      {AuditKind::erased, "erased"},
      {AuditKind::media, "media"},
      {AuditKind::transcript, "transcript"},
  }};
};

template <>
struct SqlNames<MediaKind> {
  static constexpr std::array<std::pair<MediaKind, std::string_view>, 5> table{{
      {MediaKind::image, "image"},
      {MediaKind::audio, "audio"},
      {MediaKind::video, "video"},
      {MediaKind::document, "document"},
      {MediaKind::sticker, "sticker"},
  }};
};

template <>
struct SqlNames<MediaState> {
  static constexpr std::array<std::pair<MediaState, std::string_view>, 8> table{{
      {MediaState::pending, "pending"},
      {MediaState::stored, "stored"},
      {MediaState::over_cap, "over_cap"},
      {MediaState::unfetchable, "unfetchable"},
      {MediaState::expired, "expired"},
      {MediaState::mismatch, "mismatch"},
      {MediaState::purged, "purged"},
      {MediaState::erased, "erased"},
  }};
};

template <>
struct SqlNames<TranscriptState> {
  static constexpr std::array<std::pair<TranscriptState, std::string_view>, 4> table{{
      {TranscriptState::none, "none"},
      {TranscriptState::pending, "pending"},
      {TranscriptState::done, "done"},
      {TranscriptState::failed, "failed"},
  }};
};

template <typename E>
constexpr std::string_view to_sql(E value) {
  for (const auto& [e, text] : SqlNames<E>::table) {
    if (e == value) return text;
  }
  return {};  // unreachable: every enumerator has a row (tests/store/states_test.cpp)
}

template <typename E>
constexpr std::optional<E> from_sql(std::string_view text) {
  for (const auto& [e, name] : SqlNames<E>::table) {
    if (name == text) return e;
  }
  return std::nullopt;
}

// What a decision of the agent's took: a valid or a review verdict is acted on, an invalid
// or error one counts toward the re-ask budget.
constexpr bool accepted(Verdict verdict) { return verdict == Verdict::valid || verdict == Verdict::review; }

// A delivery state no one changes any more (store/outbox.h's machine ends there).
constexpr bool final_state(ActionStatus status) {
  return status == ActionStatus::sent || status == ActionStatus::failed || status == ActionStatus::unknown ||
         status == ActionStatus::rejected;
}

// An escalation still waiting for a person: open or claimed.
constexpr bool waiting(EscalationStatus status) {
  return status == EscalationStatus::open || status == EscalationStatus::claimed;
}

}  // namespace dispatchd::store
