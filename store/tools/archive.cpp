#include "store/tools/archive.h"

#include <algorithm>
#include <limits>
#include <unordered_set>
#include <utility>

#include "store/internal/sql.h"
#include "store/media.h"
#include "store/migrations.h"
#include "store/tools/internal/archive_steps.h"

namespace dispatchd::store {

namespace internal {

std::string segment_messages(const char* schema) {
  return std::string("(SELECT message_id FROM ") + schema +
         ".audit WHERE id > ?1 AND id <= ?2 AND message_id IS NOT NULL)";
}

std::string segment_blobs(const char* schema) {
  return std::string("(SELECT blob_id FROM ") + schema + ".media WHERE blob_id IS NOT NULL AND message_id IN " +
         segment_messages(schema) + ")";
}

std::string where_message(const ArchiveTable& t, const char* schema) {
  return std::string(" WHERE ") + t.key + " IN " + segment_messages(schema);
}

Result<std::int64_t> segment_int(Database& db, const std::string& sql, std::int64_t from, std::int64_t to) {
  auto q = Query::prepare(db, sql);
  if (!q) return std::unexpected(q.error());
  q->bind(1, from).bind(2, to);
  auto row = q->step();
  if (!row) return std::unexpected(row.error());
  return *row ? q->integer(0) : 0;
}

Result<void> segment_run(Database& db, const std::string& sql, std::int64_t from, std::int64_t to) {
  auto q = Query::prepare(db, sql);
  if (!q) return std::unexpected(q.error());
  q->bind(1, from).bind(2, to);
  return q->run();
}

Result<std::vector<std::string>> first_column(Query& q) {
  std::vector<std::string> out;
  while (true) {
    auto row = q.step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return out;
    out.push_back(q.text(0));
  }
}

Result<Segment> pending_segment(Database& live, Database& archive, std::string_view last_archived) {
  auto anchor = audit_anchor(live);
  if (!anchor) return std::unexpected(anchor.error());
  auto archived_to = internal::query_int(archive, last_archived);
  if (!archived_to) return std::unexpected(archived_to.error());
  return Segment{*anchor ? (*anchor)->last_id : 0, static_cast<std::int64_t>(*archived_to)};
}

Result<std::int64_t> undo_archived(Database& db, const char* schema, std::int64_t from) {
  const std::string archive = schema;
  DISPATCHD_TRY(internal::exec(db,
                               "CREATE TEMP TABLE IF NOT EXISTS archive_undo (id INTEGER PRIMARY KEY);"
                               "DELETE FROM temp.archive_undo"));
  DISPATCHD_TRY(segment_run(db,
                            "INSERT OR IGNORE INTO temp.archive_undo SELECT message_id FROM " + archive +
                                ".audit WHERE id > ?1 AND id <= ?2 AND message_id IS NOT NULL",
                            from, std::numeric_limits<std::int64_t>::max()));
  auto count = internal::query_int(db, "SELECT count(*) FROM temp.archive_undo");
  if (!count) return std::unexpected(count.error());
  DISPATCHD_TRY(segment_run(db, "DELETE FROM " + archive + ".audit WHERE id > ?1 AND id <= ?2", from,
                            std::numeric_limits<std::int64_t>::max()));
  auto version = schema_version(db);
  if (!version) return std::unexpected(version.error());
  const auto tables = archive_tables(*version);
  for (auto t = tables.rbegin(); t != tables.rend(); ++t) {
    DISPATCHD_TRY(internal::exec(
        db, "DELETE FROM " + archive + "." + t->name + " WHERE " + t->key + " IN (SELECT id FROM temp.archive_undo)"));
  }
  if (*version >= k_media_since) {
    DISPATCHD_TRY(internal::exec(db, "DELETE FROM " + archive + ".media_blobs WHERE NOT EXISTS (SELECT 1 FROM " +
                                         archive + ".media m WHERE m.blob_id = " + archive + ".media_blobs.id)"));
  }
  return *count;
}

}  // namespace internal

namespace {

using internal::archive_tables;
using internal::ArchiveTable;
using internal::Committed;
using internal::segment_int;
using internal::segment_messages;
using internal::segment_run;
using internal::Walked;
using internal::where_message;

// The live database's SQL: on SQLite its tables are `main.`'s, beside the ATTACHed archive;
// on PostgreSQL no archive sits beside them and they go unqualified.
std::string live_sql(Backend backend, std::string sql) {
  if (backend == Backend::sqlite) return sql;
  for (auto at = sql.find("main."); at != std::string::npos; at = sql.find("main.", at)) sql.erase(at, 5);
  return sql;
}

// The column names of `schema`.`table`, in order.
Result<std::vector<std::string>> columns(Database& db, const char* table, const char* schema) {
  auto q = Query::prepare(db, "SELECT name FROM pragma_table_info(?1, ?2) ORDER BY cid");
  if (!q) return std::unexpected(q.error());
  q->bind(1, table).bind(2, schema);
  return internal::first_column(*q);
}

// "INSERT INTO arch.t (c1, c2) SELECT c1, c2 FROM main.t" after checking that both files
// give the table the same columns: rows are copied by name, never by position.
Result<std::string> copy_statement(Database& db, const char* table) {
  auto live = columns(db, table, "main");
  if (!live) return std::unexpected(live.error());
  auto archived = columns(db, table, "arch");
  if (!archived) return std::unexpected(archived.error());
  if (*live != *archived || live->empty())
    return std::unexpected(
        Error::schema(std::string("the archive's table ") + table + " has other columns than the live one"));
  std::string list;
  for (const auto& c : *live) list += (list.empty() ? "" : ", ") + c;
  return std::string("INSERT INTO arch.") + table + " (" + list + ") SELECT " + list + " FROM main." + table;
}

class Walker {
 public:
  Walker(Database& db, const ArchiveOptions& options) : m_db(db), m_options(options) {}

  // Walks the live chain after `from` (inside the caller's read transaction).
  Result<Walked> walk(std::int64_t from) {
    DISPATCHD_TRY(read_newest());
    std::unordered_set<std::int64_t> seen;
    std::int64_t frontier = from;  // the last event of any message seen so far
    Walked clean{from, 0, std::nullopt, std::nullopt};
    const std::size_t limit = std::max<std::size_t>(1, m_options.batch_messages);
    for (std::int64_t pos = from;;) {
      auto q = Query::prepare(m_db, per_backend(m_db.backend(), [](Backend b) {
                                return live_sql(
                                    b, "SELECT id, message_id, at FROM main.audit WHERE id > ? ORDER BY id LIMIT 2048");
                              }));
      if (!q) return std::unexpected(q.error());
      q->bind(1, pos);
      bool any = false;
      while (true) {
        auto row = q->step();
        if (!row) return std::unexpected(row.error());
        if (!*row) break;
        any = true;
        const std::int64_t id = q->integer(0);
        const auto message = q->optional_integer(1);
        if (!message && q->text(2) >= m_options.before) return stop(clean, std::nullopt, HoldReason::too_recent);
        if (message && !seen.contains(*message)) {
          std::int64_t last_event = id;
          auto held = hold(*message, last_event);
          if (!held) return std::unexpected(held.error());
          if (*held) return stop(clean, *message, **held);
          seen.insert(*message);
          frontier = std::max(frontier, last_event);
        }
        pos = id;
        // A clean cut: every message seen so far has all its events at or before here.
        if (frontier <= pos) {
          clean.end = pos;
          clean.messages = static_cast<std::int64_t>(seen.size());
          if (seen.size() >= limit) return clean;
        }
        // Messages interleaved without a clean cut for this long: take the last one.
        if (seen.size() > 20 * limit) return clean;
      }
      if (!any) return clean;  // the end of the chain
    }
  }

 private:
  static Walked stop(Walked clean, std::optional<std::int64_t> message, HoldReason reason) {
    clean.stopped_at = message;
    clean.reason = reason;
    return clean;
  }

  Result<void> read_newest() {
    m_newest.clear();
    static constexpr const char* k_newest =
        "SELECT (SELECT max(id) FROM main.inbox),"
        " (SELECT message_id FROM main.attempts ORDER BY id DESC LIMIT 1),"
        " (SELECT message_id FROM main.actions ORDER BY id DESC LIMIT 1),"
        " (SELECT message_id FROM main.escalations ORDER BY id DESC LIMIT 1)";
    // Staff's notes (migration 0026) and files (0036: their ids are in the audit trail) keep
    // their newest row live too, so that an id is never used twice (SQLite gives a new row
    // max(id) + 1).
    auto version = schema_version(m_db);
    if (!version) return std::unexpected(version.error());
    std::string sql = k_newest;
    int columns = 4;
    if (*version >= 26) {
      sql += ", (SELECT message_id FROM main.escalation_notes ORDER BY id DESC LIMIT 1)";
      ++columns;
    }
    if (*version >= internal::k_media_since) {
      sql += ", (SELECT message_id FROM main.media ORDER BY id DESC LIMIT 1)";
      ++columns;
    }
    auto q = Query::prepare(m_db, live_sql(m_db.backend(), sql));
    if (!q) return std::unexpected(q.error());
    auto row = q->step();
    if (!row) return std::unexpected(row.error());
    for (int i = 0; *row && i < columns; ++i) {
      if (const auto id = q->optional_integer(i)) m_newest.insert(*id);
    }
    return {};
  }

  // Why `message` must stay live (nullopt: it may go), and its last audit event.
  Result<std::optional<HoldReason>> hold(std::int64_t message, std::int64_t& last_event) {
    auto q = Query::prepare(m_db, per_backend(m_db.backend(), [](Backend b) {
                              return live_sql(b,
                                              "SELECT m.outcome, m.received_at,"
                                              " EXISTS (SELECT 1 FROM main.escalations e WHERE e.message_id = m.id"
                                              "         AND e.status IN ('open', 'claimed')),"
                                              " EXISTS (SELECT 1 FROM main.actions a WHERE a.message_id = m.id"
                                              "         AND a.status IN ('proposed', 'approved', 'sending')),"
                                              " (SELECT max(id) FROM main.audit WHERE message_id = m.id)"
                                              " FROM main.inbox m WHERE m.id = ?");
                            }));
    if (!q) return std::unexpected(q.error());
    q->bind(1, message);
    auto row = q->step();
    if (!row) return std::unexpected(row.error());
    if (!*row)
      return std::unexpected(Error{ErrorKind::corrupt, "an audit event names message " + std::to_string(message) +
                                                           ", which is not in the inbox"});
    last_event = std::max(last_event, q->integer(4));
    if (q->text(0) == "pending") return HoldReason::pending;
    if (q->integer(2) != 0) return HoldReason::open_escalation;
    if (q->integer(3) != 0) return HoldReason::send_in_flight;
    if (q->text(1) >= m_options.before) return HoldReason::too_recent;
    if (m_newest.contains(message)) return HoldReason::newest_row;
    return std::nullopt;
  }

  Database& m_db;
  const ArchiveOptions& m_options;
  std::unordered_set<std::int64_t> m_newest;
};

// The archive, ATTACHed to the live connection as `arch` for one run.
class Attachment {
 public:
  static Result<Attachment> attach(Database& db, const std::string& path) {
    auto q = Query::prepare(db, "ATTACH DATABASE ? AS arch");
    if (!q) return std::unexpected(q.error());
    q->bind(1, path);
    DISPATCHD_TRY(q->run());
    Attachment a(db);
    // On disk before the live delete that depends on it.
    DISPATCHD_TRY(internal::exec(db, "PRAGMA arch.synchronous=FULL"));
    return a;
  }
  Attachment(Attachment&& other) noexcept : m_db(std::exchange(other.m_db, nullptr)) {}
  Attachment& operator=(Attachment&&) = delete;
  ~Attachment() {
    // Only on an error path: the result of a run is already decided, and a database left
    // attached is refused clearly by the next attach.
    if (m_db && !internal::exec(*m_db, "DETACH DATABASE arch")) {
      // Still attached: nothing more to do here; the connection ends with the command.
    }
  }
  Result<void> detach() {
    Database* db = std::exchange(m_db, nullptr);
    return internal::exec(*db, "DETACH DATABASE arch");
  }

 private:
  explicit Attachment(Database& db) : m_db(&db) {}
  Database* m_db;
};

// SQLite's steps: the archive ATTACHed to the live connection as `arch`.
class AttachedSteps final : public internal::ArchiveSteps {
 public:
  AttachedSteps(Database& live, const ArchiveOptions& options) : m_live(live), m_options(options) {}

  Result<void> prepare() override {
    auto version = schema_version(m_live);
    if (!version) return std::unexpected(version.error());
    m_tables = archive_tables(*version);
    m_media = *version >= internal::k_media_since;
    if (m_media) {
      for (const auto& [table, key] : {std::pair{"media_blobs", "id"}, std::pair{"media_chunks", "blob_id"}}) {
        auto copy = copy_statement(m_live, table);
        if (!copy) return std::unexpected(copy.error());
        m_copy.push_back("INSERT OR IGNORE" + copy->substr(std::string_view("INSERT").size()) + " WHERE " + key +
                         " IN " + internal::segment_blobs("main"));
      }
    }
    for (const auto& t : m_tables) {
      auto copy = copy_statement(m_live, t.name);
      if (!copy) return std::unexpected(copy.error());
      m_copy.push_back(*copy + where_message(t, "main"));
    }
    auto audit = copy_statement(m_live, "audit");
    if (!audit) return std::unexpected(audit.error());
    m_copy.push_back(*audit + " WHERE id > ?1 AND id <= ?2 ORDER BY id");
    return {};
  }

  // Deferred BEGIN: the copy holds no live write lock; its writes go to the archive only.
  Result<Walked> copy_batch(std::int64_t from) override {
    return internal::read_transaction<Walked>(m_live, "BEGIN", [&]() -> Result<Walked> {
      auto walked = internal::walk_chain(m_live, m_options, from);
      if (!walked) return std::unexpected(walked.error());
      if (walked->end == from) return walked;
      for (const auto& sql : m_copy) DISPATCHD_TRY(segment_run(m_live, sql, from, walked->end));
      return walked;
    });
  }

  Result<Committed> commit_live(std::int64_t expected) override {
    return transaction<Committed>(m_live, [&]() -> Result<Committed> {
      Committed out;
      auto segment = internal::pending_segment(m_live, m_live, "SELECT coalesce(max(id), 0) FROM arch.audit");
      if (!segment) return std::unexpected(segment.error());
      const auto [from, to] = *segment;
      if (from != expected) return Committed{true, 0, 0};  // another run moved the live chain
      if (to <= from) return out;
      auto same = unchanged(from, to);
      if (!same) return std::unexpected(same.error());
      if (!*same) return Committed{true, 0, 0};
      auto messages =
          segment_int(m_live, "SELECT count(DISTINCT message_id) FROM " + segment_messages("arch"), from, to);
      if (!messages) return std::unexpected(messages.error());
      DISPATCHD_TRY(segment_run(m_live, "DELETE FROM main.audit WHERE id > ?1 AND id <= ?2", from, to));
      for (auto t = m_tables.rbegin(); t != m_tables.rend(); ++t)
        DISPATCHD_TRY(
            segment_run(m_live, std::string("DELETE FROM main.") + t->name + where_message(*t, "arch"), from, to));
      if (m_media) {
        auto dropped = drop_unused_media_blobs(m_live);
        if (!dropped) return std::unexpected(dropped.error());
      }
      auto set = Query::prepare(m_live,
                                "INSERT INTO main.audit_anchor (id, last_id, last_hash, updated_at)"
                                " VALUES (1, ?1, (SELECT hash FROM arch.audit WHERE id = ?1), ?2)"
                                " ON CONFLICT (id) DO UPDATE SET last_id = excluded.last_id,"
                                " last_hash = excluded.last_hash, updated_at = excluded.updated_at");
      if (!set) return std::unexpected(set.error());
      set->bind(1, to).bind(2, m_options.now);
      DISPATCHD_TRY(set->run());
      return Committed{false, *messages, to - from};
    });
  }

  Result<std::int64_t> undo_copy(std::int64_t from) override {
    return internal::read_transaction<std::int64_t>(
        m_live, "BEGIN", [&]() -> Result<std::int64_t> { return internal::undo_archived(m_live, "arch", from); });
  }

 private:
  // The live rows of the segment (from, to] and of its messages are the archive's copy:
  // the same events (count, and the last one's hash, which commits to all before it), as
  // many rows per table, and no live event of those messages after the segment (every
  // change dispatchd makes to a message appends one).
  Result<bool> unchanged(std::int64_t from, std::int64_t to) {
    auto same_end = segment_int(m_live,
                                "SELECT (SELECT hash FROM main.audit WHERE id = ?2) IS (SELECT hash FROM arch.audit"
                                " WHERE id = ?2) AND ?1 < ?2",
                                from, to);
    if (!same_end) return std::unexpected(same_end.error());
    if (*same_end == 0) return false;
    std::vector<std::string> checks{
        "SELECT (SELECT count(*) FROM main.audit WHERE id > ?1 AND id <= ?2) ="
        " (SELECT count(*) FROM arch.audit WHERE id > ?1 AND id <= ?2)",
        // Per message through the audit_message index, not a scan of the live chain.
        "SELECT NOT EXISTS (SELECT 1 FROM " + segment_messages("arch") +
            " s WHERE (SELECT max(id) FROM main.audit WHERE message_id = s.message_id) > ?2)"};
    for (const auto& t : m_tables) {
      checks.push_back(std::string("SELECT (SELECT count(*) FROM main.") + t.name + where_message(t, "arch") +
                       ") = (SELECT count(*) FROM arch." + t.name + where_message(t, "arch") + ")");
    }
    for (const auto& sql : checks) {
      auto ok = segment_int(m_live, sql, from, to);
      if (!ok) return std::unexpected(ok.error());
      if (*ok == 0) return false;
    }
    return true;
  }

  Database& m_live;
  const ArchiveOptions& m_options;
  std::vector<ArchiveTable> m_tables;  // those the live schema has
  std::vector<std::string> m_copy;
  bool m_media = false;  // the schema keeps files (k_media_since)
};

bool is_day_shaped(const std::string& day) {
  static const std::string shape = "dddd-dd-dd";
  if (day.size() != shape.size()) return false;
  for (std::size_t i = 0; i < day.size(); ++i) {
    if (shape[i] == 'd' ? !(day[i] >= '0' && day[i] <= '9') : day[i] != shape[i]) return false;
  }
  return true;
}

bool same(const std::optional<AuditAnchor>& a, const std::optional<AuditAnchor>& b) {
  if (!a || !b) return !a && !b;
  return a->last_id == b->last_id && a->last_hash == b->last_hash;
}

// Checks that the archive continues the live chain (prepare_archive), starting a new empty
// one at the live anchor.
Result<void> continue_live_chain(Database& live, Database& archive, const std::string& path,
                                 const ArchiveOptions& options) {
  auto live_anchor = audit_anchor(live);
  if (!live_anchor) return std::unexpected(live_anchor.error());
  auto own_anchor = audit_anchor(archive);
  if (!own_anchor) return std::unexpected(own_anchor.error());
  auto last = newest_audit_event(archive);
  if (!last) return std::unexpected(last.error());
  const std::string live_start =
      *live_anchor ? "after audit id " + std::to_string((*live_anchor)->last_id) : "at genesis";
  if (!*last) {
    if (same(*own_anchor, *live_anchor)) return {};
    if (*own_anchor) {
      return std::unexpected(Error::refused(path + ": this empty archive starts after audit id " +
                                            std::to_string((*own_anchor)->last_id) + ", the live chain " + live_start));
    }
    auto set =
        Query::prepare(archive, "INSERT INTO audit_anchor (id, last_id, last_hash, updated_at) VALUES (1, ?, ?, ?)");
    if (!set) return std::unexpected(set.error());
    set->bind(1, (*live_anchor)->last_id).bind(2, (*live_anchor)->last_hash).bind(3, options.now);
    return set->run();
  }
  if (same(*last, *live_anchor)) return {};
  // An interrupted run: the archive holds the live anchor's event (or begins right after
  // it) and a copy beyond it.
  bool continues = false;
  if ((*last)->last_id > (*live_anchor ? (*live_anchor)->last_id : 0)) {
    if (!*live_anchor) {
      continues = !*own_anchor;
    } else if (same(*own_anchor, *live_anchor)) {
      continues = true;
    } else {
      auto q = Query::prepare(archive, "SELECT hash FROM audit WHERE id = ?");
      if (!q) return std::unexpected(q.error());
      q->bind(1, (*live_anchor)->last_id);
      auto row = q->step();
      if (!row) return std::unexpected(row.error());
      continues = *row && q->text(0) == (*live_anchor)->last_hash;
    }
  }
  if (continues) return {};
  return std::unexpected(Error::refused(path + ": this archive ends at audit id " + std::to_string((*last)->last_id) +
                                        " and the live chain starts " + live_start +
                                        ": it is not this database's newest archive (use that file, or a new one)"));
}

// Opens (creating) the archive with the live schema, and checks that it continues the live
// chain: it ends at the live anchor, or after it with the live anchor inside (an
// interrupted run). A new, empty file starts at the live anchor.
Result<Database> prepare_archive(Database& live, const std::string& path, const ArchiveOptions& options) {
  auto version = schema_version(live);
  if (!version) return std::unexpected(version.error());
  std::vector<Migration> upto;
  for (const auto& m : options.migrations) {
    if (m.version <= *version) upto.push_back(m);
  }
  auto archive = Database::open(path);
  if (!archive) return std::unexpected(archive.error());
  // Code steps rewrite what a file holds (0013 re-hashes the audit chain); an archive's rows
  // are a segment of the live chain, linked to it by hash, so they keep the formula they were
  // written with (legacy rows verify by it).
  const MigrateOptions keep_rows{.run_code_step = [](Database&, int) { return false; }};
  auto migrated = migrate(*archive, upto, options.now, keep_rows);
  if (!migrated) return std::unexpected(with_context(migrated.error(), path));
  if (migrated->version != *version) {
    return std::unexpected(Error::schema(path + ": the archive's schema is version " +
                                         std::to_string(migrated->version) + ", the live database's " +
                                         std::to_string(*version)));
  }
  DISPATCHD_TRY(continue_live_chain(live, *archive, path, options));
  return std::move(*archive);
}

Result<std::int64_t> count_held_back(Database& live, const std::string& before) {
  auto q = Query::prepare(live, per_backend(live.backend(), [](Backend b) {
                            return live_sql(
                                b,
                                "SELECT count(*) FROM main.inbox m WHERE m.outcome <> 'pending' AND m.received_at < ?"
                                " AND NOT EXISTS (SELECT 1 FROM main.escalations e WHERE e.message_id = m.id"
                                "                 AND e.status IN ('open', 'claimed'))"
                                " AND NOT EXISTS (SELECT 1 FROM main.actions a WHERE a.message_id = m.id"
                                "                 AND a.status IN ('proposed', 'approved', 'sending'))");
                          }));
  if (!q) return std::unexpected(q.error());
  q->bind(1, before);
  auto row = q->step();
  if (!row) return std::unexpected(row.error());
  return q->integer(0);
}

Result<std::int64_t> live_anchor_id(Database& live) {
  auto anchor = audit_anchor(live);
  if (!anchor) return std::unexpected(anchor.error());
  return *anchor ? (*anchor)->last_id : 0;
}

Result<void> run(Database& live, internal::ArchiveSteps& archiver, const ArchiveOptions& options,
                 ArchiveResult& result) {
  DISPATCHD_TRY(archiver.prepare());
  // First, what an interrupted run left: a copy after the live anchor.
  auto start = live_anchor_id(live);
  if (!start) return std::unexpected(start.error());
  auto recovered = archiver.commit_live(*start);
  if (!recovered) return std::unexpected(recovered.error());
  if (recovered->stale) {
    auto undone = archiver.undo_copy(*start);
    if (!undone) return std::unexpected(undone.error());
    result.undone_messages += *undone;
  }
  result.recovered_messages = recovered->messages;
  while (true) {
    auto from = live_anchor_id(live);
    if (!from) return std::unexpected(from.error());
    auto walked = archiver.copy_batch(*from);
    if (!walked) return std::unexpected(walked.error());
    result.stopped_at = walked->stopped_at;
    result.stop_reason = walked->reason;
    if (walked->end == *from) return {};
    auto committed = archiver.commit_live(*from);
    if (!committed) return std::unexpected(committed.error());
    if (committed->stale) {
      auto undone = archiver.undo_copy(*from);
      if (!undone) return std::unexpected(undone.error());
      result.undone_messages += *undone;
      return {};  // changed under us: the next run tries again
    }
    result.moved.messages += committed->messages;
    result.moved.audit_events += committed->events;
    result.moved.anchor_id = walked->end;
    if (options.after_batch) options.after_batch(result.moved);
    if (walked->reason) return {};
  }
}

// SQLite: the archive file ATTACHed to the live connection (closed by prepare_archive's
// connection first) for the run.
Result<void> archive_attached(Database& live, const std::string& path, const ArchiveOptions& options,
                              ArchiveResult& result) {
  DISPATCHD_TRY(prepare_archive(live, path, options));
  auto attached = Attachment::attach(live, path);
  if (!attached) return std::unexpected(attached.error());
  AttachedSteps steps(live, options);
  DISPATCHD_TRY(run(live, steps, options, result));
  return attached->detach();
}

// PostgreSQL: the archive stays a SQLite file, written through its own connection.
Result<void> archive_copying(Database& live, const std::string& path, const ArchiveOptions& options,
                             ArchiveResult& result) {
  auto archive = prepare_archive(live, path, options);
  if (!archive) return std::unexpected(archive.error());
  const auto steps = internal::copying_steps(live, *archive, options);
  return run(live, *steps, options, result);
}

}  // namespace

Result<internal::Walked> internal::walk_chain(Database& live, const ArchiveOptions& options, std::int64_t from) {
  Walker walker(live, options);
  return walker.walk(from);
}

std::string_view to_string(HoldReason reason) {
  switch (reason) {
    case HoldReason::pending: return "pending";
    case HoldReason::open_escalation: return "open_escalation";
    case HoldReason::send_in_flight: return "send_in_flight";
    case HoldReason::too_recent: return "too_recent";
    case HoldReason::newest_row: return "newest_row";
  }
  return "pending";
}

Result<ArchiveResult> archive_before(Database& live, const std::string& archive_path, const ArchiveOptions& options) {
  if (!is_day_shaped(options.before)) return std::unexpected(Error::refused("the day must be YYYY-MM-DD"));
  if (live.in_transaction()) return std::unexpected(Error::internal("archive_before inside a transaction"));
  ArchiveResult result;
  if (live.backend() == Backend::postgresql) {
    DISPATCHD_TRY(archive_copying(live, archive_path, options, result));
  } else {
    DISPATCHD_TRY(archive_attached(live, archive_path, options, result));
  }
  auto anchor = live_anchor_id(live);
  if (!anchor) return std::unexpected(anchor.error());
  result.moved.anchor_id = *anchor;
  auto held = count_held_back(live, options.before);
  if (!held) return std::unexpected(held.error());
  result.held_back = *held;
  return result;
}

}  // namespace dispatchd::store
