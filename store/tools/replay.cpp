#include "store/tools/replay.h"

#include <filesystem>

#include "common/json_out.h"
#include "store/inbox.h"
#include "store/internal/sql.h"
#include "store/migrations.h"
#include "store/transaction.h"

namespace dispatchd::store {

Result<std::vector<ReplayKey>> replay_keys(Database& db, const ReplayPage& page) {
  auto query = Query::prepare(db,
                              "SELECT received_at, message_id FROM v_messages"
                              // Bounds written so that both seek the received_at index
                              // (migration 0011): '' and 0 sort before every stored key.
                              " WHERE received_at >= coalesce(?1, '')"
                              " AND (received_at, message_id) > (coalesce(?2, ''), coalesce(?3, 0))"
                              " ORDER BY received_at, message_id LIMIT ?4");
  if (!query) return std::unexpected(query.error());
  query->bind(1, page.since);
  if (page.after) query->bind(2, page.after->received_at).bind(3, page.after->message_id);
  query->bind(4, page.messages);
  std::vector<ReplayKey> out;
  while (true) {
    auto row = query->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return out;
    out.push_back({query->text(0), query->integer(1)});
  }
}

Result<std::vector<RecordedMessage>> recorded_attempts(Database& db, std::span<const ReplayKey> keys) {
  // The ids as one JSON array bound once: one cached statement for any batch size.
  JsonOut ids;
  ids.begin_array();
  for (const auto& key : keys) ids.value(key.message_id);
  ids.end_array();
  auto query = Query::prepare(
      db, per_backend(db.backend(), [](Backend b) {
        return "SELECT m.message_id, m.channel, m.provider_message_id, m.sender, m.text, m.received_at,"
               " a.attempt, a.provider, a.model, a.raw_output, a.verdict, a.errors, a.error_class, a.finish_reason"
               " FROM " +
               sql::json_integers(b, "?1", "j") +
               " JOIN v_messages m ON m.message_id = j.value"
               " JOIN v_attempts a ON a.message_id = m.message_id ORDER BY j.key, a.attempt";
      }));
  if (!query) return std::unexpected(query.error());
  query->bind(1, ids.str());
  std::vector<RecordedMessage> out;
  while (true) {
    auto row = query->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return out;
    const std::int64_t id = query->integer(0);
    if (out.empty() || out.back().id != id)
      out.push_back({id, query->text(1), query->text(2), query->text(3), query->text(4), query->text(5), {}});
    const auto verdict = from_sql<Verdict>(query->text(10));
    if (!verdict) return std::unexpected(Error::internal("attempt with an unknown verdict: " + query->text(10)));
    out.back().attempts.push_back({query->integer(6), query->text(7), query->text(8), query->optional_text(9), *verdict,
                                   query->text(11), query->optional_text(12), query->optional_text(13)});
  }
}

}  // namespace dispatchd::store

namespace dispatchd::store {
namespace {

// The decision held by the rows on one side of the marks: `after` picks the run's rows
// (ids from the marks on), else the recorded ones. Attempts are always the table's: before
// prepare_scratch deletes them they are the recorded ones, after it the run's.
Result<StoredDecision> decision_side(Database& db, std::int64_t message_id, bool after) {
  auto query = Query::prepare(
      db,
      "SELECT (SELECT outcome FROM inbox WHERE id = ?1),"
      " (SELECT reason FROM escalations, replay_marks k WHERE message_id = ?1"
      "   AND (CASE WHEN id >= k.first_escalation THEN 1 ELSE 0 END) = ?2 AND reason NOT IN ('send_failed', "
      "'delivery_unknown')"
      "   ORDER BY id LIMIT 1),"
      " (SELECT action || ?3 || coalesce(recipient, '') FROM actions, replay_marks k WHERE message_id = ?1"
      "   AND (CASE WHEN id >= k.first_action THEN 1 ELSE 0 END) = ?2 AND created_by = 'dispatchd' AND action <> "
      "'holding_reply'"
      "   ORDER BY id LIMIT 1),"
      " (SELECT raw_output FROM attempts WHERE message_id = ?1 AND verdict IN ('valid', 'review')"
      "   ORDER BY attempt DESC LIMIT 1)");
  if (!query) return std::unexpected(query.error());
  query->bind(1, message_id).bind(2, after ? 1 : 0).bind(3, "\n");  // ?3: the engines spell a newline differently
  auto row = query->step();
  if (!row) return std::unexpected(row.error());
  StoredDecision d;
  d.output = query->optional_text(3).value_or("");
  if (const auto action = query->optional_text(2)) {
    const auto newline = action->find('\n');
    d.action = action->substr(0, newline);
    d.recipient = action->substr(newline + 1);
  }
  if (!query->is_null(1)) {
    auto reason = query->state<EscalationReason>(1);
    if (!reason) return std::unexpected(reason.error());
    d.kind = DecisionKind::escalate;
    d.reason = *reason;
  } else if (!query->is_null(0) && query->state<Outcome>(0) == Outcome::ignored) {
    d.kind = DecisionKind::ignore;
  } else if (!d.action.empty()) {
    d.kind = DecisionKind::reply;
  }
  return d;
}

Result<void> run(Database& db, std::string_view sql, std::int64_t id) {
  auto query = Query::prepare(db, sql);
  if (!query) return std::unexpected(query.error());
  query->bind(1, id);
  return query->run();
}

}  // namespace

Result<bool> is_replay_scratch(Database& db) {
  auto n = internal::query_int(
      db, per_backend(db.backend(), [](Backend b) { return sql::table_exists(b, "replay_progress"); }));
  if (!n) return std::unexpected(n.error());
  return *n == 1;
}

Result<void> prepare_scratch(Database& db, const std::string& migrations_root,
                             std::span<const std::int64_t> message_ids) {
  auto schema = load_migrations((std::filesystem::path(migrations_root) / "replay").string(), db.backend());
  if (!schema) return std::unexpected(schema.error());
  if (schema->empty())
    return std::unexpected(Error::schema(migrations_root + "/replay/" + std::string(to_string(db.backend())) +
                                         ": no scratch schema (replay's run tables)"));
  return transaction<void>(db, [&]() -> Result<void> {
    for (const auto& file : *schema) {
      if (auto made = internal::exec(db, file.sql); !made)
        return std::unexpected(with_context(made.error(), file.name));
    }
    for (const std::int64_t id : message_ids) {
      auto old = decision_side(db, id, false);
      if (!old) return std::unexpected(old.error());
      auto insert = Query::prepare(db,
                                   "INSERT INTO replay_progress(message_id, old_kind, old_action, old_recipient,"
                                   " old_reason, old_output) VALUES (?,?,?,?,?,?)");
      if (!insert) return std::unexpected(insert.error());
      insert->bind(1, id).bind(2, old->kind).bind(3, old->action).bind(4, old->recipient);
      insert->bind(5, old->reason ? to_sql(*old->reason) : std::string_view(""));  // NOT NULL: "" for none
      insert->bind(6, old->output);
      DISPATCHD_TRY(insert->run());
    }
    DISPATCHD_TRY(internal::exec(
        db,
        "DELETE FROM attempts WHERE message_id IN (SELECT message_id FROM replay_progress);"
        "UPDATE inbox SET state = 'done' WHERE state IN ('received', 'processing')"
        " AND id NOT IN (SELECT message_id FROM replay_progress);"
        "UPDATE inbox SET state = 'received', outcome = 'pending', lease_owner = NULL, lease_expires_at = NULL"
        " WHERE id IN (SELECT message_id FROM replay_progress);"));
    return {};
  });
}

Result<std::int64_t> resume_scratch(Database& db) {
  return transaction<std::int64_t>(db, [&]() -> Result<std::int64_t> {
    DISPATCHD_TRY(internal::exec(
        db,
        "UPDATE replay_progress SET status = 'decided', detail = '' WHERE status = 'pending'"
        " AND message_id IN (SELECT id FROM inbox WHERE state IN ('decided', 'done'));"
        "UPDATE replay_progress SET status = 'pending', detail = '' WHERE status = 'failed';"
        "DELETE FROM attempts WHERE message_id IN (SELECT message_id FROM replay_progress WHERE status = 'pending');"
        "UPDATE inbox SET state = 'received', outcome = 'pending', lease_owner = NULL, lease_expires_at = NULL"
        " WHERE id IN (SELECT message_id FROM replay_progress WHERE status = 'pending');"));
    return pending_count(db);
  });
}

Result<std::int64_t> pending_count(Database& db) {
  auto left = internal::query_int(db, "SELECT count(*) FROM replay_progress WHERE status = 'pending'");
  if (!left) return std::unexpected(left.error());
  return static_cast<std::int64_t>(*left);
}

Result<std::vector<ProgressRow>> replay_progress(Database& db) {
  auto query = Query::prepare(db,
                              "SELECT p.seq, p.message_id, m.channel, m.provider_message_id, m.received_at, p.status,"
                              " p.detail, p.old_kind, p.old_action, p.old_recipient, p.old_reason, p.old_output"
                              " FROM replay_progress p JOIN inbox m ON m.id = p.message_id ORDER BY p.seq");
  if (!query) return std::unexpected(query.error());
  std::vector<ProgressRow> out;
  while (true) {
    auto row = query->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return out;
    const auto status = query->state<ProgressStatus>(5);
    if (!status) return std::unexpected(status.error());
    const auto kind = query->state<DecisionKind>(7);
    if (!kind) return std::unexpected(kind.error());
    // old_reason: "" when the recorded decision was no escalation.
    std::optional<EscalationReason> reason;
    if (!query->text(10).empty()) {
      auto stored = query->state<EscalationReason>(10);
      if (!stored) return std::unexpected(stored.error());
      reason = *stored;
    }
    out.push_back({query->integer(0),
                   query->integer(1),
                   query->text(2),
                   query->text(3),
                   query->text(4),
                   *status,
                   query->text(6),
                   {*kind, query->text(8), query->text(9), reason, query->text(11)}});
  }
}

Result<void> mark_progress(Database& db, std::int64_t message_id, ProgressStatus status, const std::string& detail) {
  auto update = Query::prepare(db, "UPDATE replay_progress SET status = ?, detail = ? WHERE message_id = ?");
  if (!update) return std::unexpected(update.error());
  update->bind(1, status).bind(2, detail).bind(3, message_id);
  return update->run();
}

Result<StoredDecision> new_decision(Database& db, std::int64_t message_id) {
  return decision_side(db, message_id, true);
}

Result<std::vector<AttemptStat>> attempt_stats(Database& db, std::int64_t message_id) {
  auto query = Query::prepare(
      db,
      "SELECT attempt, verdict, latency_ms, input_tokens, output_tokens, cost_usd FROM attempts WHERE message_id = ?"
      " ORDER BY attempt");
  if (!query) return std::unexpected(query.error());
  query->bind(1, message_id);
  std::vector<AttemptStat> out;
  while (true) {
    auto row = query->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return out;
    const auto verdict = from_sql<Verdict>(query->text(1));
    if (!verdict) return std::unexpected(Error::internal("attempt with an unknown verdict: " + query->text(1)));
    out.push_back({query->integer(0), *verdict, query->optional_integer(2), query->optional_integer(3),
                   query->optional_integer(4), query->optional_real(5)});
  }
}

Result<std::int64_t> insert_case(Database& db, const EvalCase& c) {
  const auto at = parse_time(c.received_at);
  if (!at) return std::unexpected(Error::internal("bad case time " + c.received_at));
  return transaction<std::int64_t>(db, [&]() -> Result<std::int64_t> {
    const std::size_t turns = c.history.size();
    std::int64_t last_inbound = 0;
    for (std::size_t i = 0; i <= turns; ++i) {
      const Time when = *at - std::chrono::seconds(static_cast<std::int64_t>(turns - i));
      const std::string key = c.conversation_id + "-" + std::to_string(i);
      if (i < turns && c.history[i].from_us) {
        if (last_inbound == 0) return std::unexpected(Error::refused("a history must start with the customer"));
        auto insert = Query::prepare(db,
                                     "INSERT INTO actions(message_id, action, arguments, recipient, body, status,"
                                     " created_by, idempotency_key, created_at, updated_at)"
                                     " VALUES (?1, 'history', '{}', ?2, ?3, 'sent', 'dispatchd', ?4, ?5, ?5)");
        if (!insert) return std::unexpected(insert.error());
        insert->bind(1, last_inbound).bind(2, c.sender).bind(3, c.history[i].text).bind(4, key);
        insert->bind(5, format_time(when));
        DISPATCHD_TRY(insert->run());
        continue;
      }
      const std::string& text = i < turns ? c.history[i].text : c.text;
      auto inserted = insert_inbound(db, {c.channel, key, c.conversation_id, c.sender, text, "{}", ""}, when);
      if (!inserted) return std::unexpected(inserted.error());
      last_inbound = inserted->id;
      if (i < turns)
        DISPATCHD_TRY(run(db, "UPDATE inbox SET state = 'done', outcome = 'replied' WHERE id = ?1", last_inbound));
    }
    return last_inbound;
  });
}

}  // namespace dispatchd::store
