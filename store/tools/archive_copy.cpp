// The archive's steps when the live database is on PostgreSQL (store/tools/internal/archive_steps.h):
// the archive file stays SQLite, so a batch's rows are read from the server and written
// through the archive's own connection. Same order as on SQLite: the archive commits first
// (synchronous=FULL), then one live transaction checks the copy, deletes and moves the
// anchor.

#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "store/internal/sql.h"
#include "store/media.h"
#include "store/migrations.h"
#include "store/tools/internal/archive_steps.h"
#include "store/tools/internal/row_copy.h"

namespace dispatchd::store::internal {
namespace {

// The messages of a segment, as a parameter: a JSON array of ids (sql::json_integers).
std::string in_set(const char* parameter) {
  return std::string(" IN (SELECT value FROM ") + sql::json_integers(Backend::postgresql, parameter, "s") + ")";
}

// One table's copy: a live SELECT of the segment's rows and the archive's INSERT of one.
struct TableCopy {
  std::string select;
  std::string insert;
  std::vector<Column> columns;
};

Result<TableCopy> table_copy(Database& live, Database& archive, const char* table, const std::string& where,
                             const char* order_by = "id") {
  auto on_live = postgresql_columns(live, table);
  if (!on_live) return std::unexpected(on_live.error());
  auto on_archive = sqlite_columns(archive, table);
  if (!on_archive) return std::unexpected(on_archive.error());
  std::vector<std::string> names;
  for (const auto& c : *on_archive) names.push_back(c.name);
  if (names != *on_live || names.empty())
    return std::unexpected(
        Error::schema(std::string("the archive's table ") + table + " has other columns than the live one"));
  return TableCopy{"SELECT " + column_list(*on_archive) + " FROM " + table + where + " ORDER BY " + order_by,
                   insert_statement(table, *on_archive), std::move(*on_archive)};
}

class CopyingSteps final : public ArchiveSteps {
 public:
  CopyingSteps(Database& live, Database& archive, const ArchiveOptions& options)
      : m_live(live), m_archive(archive), m_options(options) {}

  Result<void> prepare() override {
    auto version = schema_version(m_live);
    if (!version) return std::unexpected(version.error());
    m_tables = archive_tables(*version);
    m_media = *version >= k_media_since;
    if (m_media) {
      // Shared between messages: copied once (an earlier batch may have), before the files.
      const std::string blobs =
          " IN (SELECT blob_id FROM media WHERE blob_id IS NOT NULL AND message_id IN"
          " (SELECT message_id FROM audit WHERE id > ?1 AND id <= ?2 AND message_id IS NOT NULL))";
      for (const auto& [table, key, order] :
           {std::tuple{"media_blobs", "id", "id"}, std::tuple{"media_chunks", "blob_id", "blob_id, seq"}}) {
        auto copy = table_copy(m_live, m_archive, table, std::string(" WHERE ") + key + blobs, order);
        if (!copy) return std::unexpected(copy.error());
        copy->insert = "INSERT OR IGNORE" + copy->insert.substr(std::string_view("INSERT").size());
        m_copies.push_back(std::move(*copy));
      }
    }
    for (const auto& t : m_tables) {
      auto copy =
          table_copy(m_live, m_archive, t.name,
                     std::string(" WHERE ") + t.key +
                         " IN (SELECT message_id FROM audit WHERE id > ?1 AND id <= ?2 AND message_id IS NOT NULL)");
      if (!copy) return std::unexpected(copy.error());
      m_copies.push_back(std::move(*copy));
    }
    auto audit = table_copy(m_live, m_archive, "audit", " WHERE id > ?1 AND id <= ?2");
    if (!audit) return std::unexpected(audit.error());
    m_copies.push_back(std::move(*audit));
    return {};
  }

  // REPEATABLE READ: the walk and the rows copied come from one snapshot, as SQLite's read
  // transaction gives them; the live side writes nothing here.
  Result<Walked> copy_batch(std::int64_t from) override {
    return read_transaction<Walked>(m_live, "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY",
                                    [&]() -> Result<Walked> {
                                      auto walked = walk_chain(m_live, m_options, from);
                                      if (!walked) return std::unexpected(walked.error());
                                      if (walked->end == from) return walked;
                                      auto copied = transaction<void>(m_archive, [&]() -> Result<void> {
                                        for (const auto& copy : m_copies)
                                          DISPATCHD_TRY(copy_rows(copy, from, walked->end));
                                        return {};
                                      });
                                      if (!copied) return std::unexpected(copied.error());
                                      return walked;
                                    });
  }

  // The lock on audit_anchor makes two archive runs take their live commits one after the
  // other (the second then sees the anchor moved); the row locks on the batch's messages
  // keep the daemon from appending to them between the check and the delete (its audit
  // event's foreign key waits for them), so the rows deleted are the rows checked.
  Result<Committed> commit_live(std::int64_t expected) override {
    return transaction<Committed>(m_live, [&]() -> Result<Committed> {
      DISPATCHD_TRY(internal::exec(m_live, "LOCK TABLE audit_anchor IN EXCLUSIVE MODE"));
      auto segment = pending_segment(m_live, m_archive, "SELECT coalesce(max(id), 0) FROM audit");
      if (!segment) return std::unexpected(segment.error());
      const auto [from, to] = *segment;
      if (from != expected) return Committed{true, 0, 0};  // another run moved the live chain
      if (to <= from) return Committed{};
      auto messages = archived_messages(from, to);
      if (!messages) return std::unexpected(messages.error());
      DISPATCHD_TRY(
          with_set("SELECT id FROM inbox WHERE id" + in_set("?1") + " ORDER BY id FOR UPDATE", messages->json));
      auto same = unchanged(from, to, messages->json);
      if (!same) return std::unexpected(same.error());
      if (!*same) return Committed{true, 0, 0};
      DISPATCHD_TRY(segment_run(m_live, "DELETE FROM audit WHERE id > ?1 AND id <= ?2", from, to));
      for (auto t = m_tables.rbegin(); t != m_tables.rend(); ++t)
        DISPATCHD_TRY(
            with_set(std::string("DELETE FROM ") + t->name + " WHERE " + t->key + in_set("?1"), messages->json));
      if (m_media) {
        auto dropped = drop_unused_media_blobs(m_live);
        if (!dropped) return std::unexpected(dropped.error());
      }
      DISPATCHD_TRY(set_anchor(to));
      return Committed{false, messages->count, to - from};
    });
  }

  Result<std::int64_t> undo_copy(std::int64_t from) override {
    return transaction<std::int64_t>(m_archive,
                                     [&]() -> Result<std::int64_t> { return undo_archived(m_archive, "main", from); });
  }

 private:
  // Copies the rows `copy.select` gives for the segment (from, to] into the archive.
  Result<void> copy_rows(const TableCopy& copy, std::int64_t from, std::int64_t to) {
    auto read = Query::prepare(m_live, copy.select);
    if (!read) return std::unexpected(read.error());
    read->bind(1, from).bind(2, to);
    DISPATCHD_TRY(internal::copy_rows(*read, m_archive, copy.insert, copy.columns));
    return {};
  }

  struct MessageSet {
    std::string json;  // "[1,2,3]"
    std::int64_t count = 0;
  };

  // The messages of the archive's segment (from, to].
  Result<MessageSet> archived_messages(std::int64_t from, std::int64_t to) {
    auto q = Query::prepare(m_archive,
                            "SELECT DISTINCT message_id FROM audit WHERE id > ?1 AND id <= ?2"
                            " AND message_id IS NOT NULL ORDER BY 1");
    if (!q) return std::unexpected(q.error());
    q->bind(1, from).bind(2, to);
    MessageSet out{"[", 0};
    while (true) {
      auto row = q->step();
      if (!row) return std::unexpected(row.error());
      if (!*row) break;
      out.json += (out.count++ ? "," : "") + std::to_string(q->integer(0));
    }
    out.json += "]";
    return out;
  }

  // Runs a live statement over the message set bound as ?1 (and `second` as ?2); its first
  // integer (0 for no row).
  Result<std::int64_t> with_set(const std::string& sql, const std::string& json,
                                std::optional<std::int64_t> second = std::nullopt) {
    auto q = Query::prepare(m_live, sql);
    if (!q) return std::unexpected(q.error());
    q->bind(1, json);
    if (second) q->bind(2, *second);
    auto row = q->step();
    if (!row) return std::unexpected(row.error());
    return *row ? q->integer(0) : 0;
  }

  Result<std::optional<std::string>> hash_at(Database& db, std::int64_t id) {
    auto q = Query::prepare(db, "SELECT hash FROM audit WHERE id = ?1");
    if (!q) return std::unexpected(q.error());
    q->bind(1, id);
    auto row = q->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return std::nullopt;
    return q->text(0);
  }

  // The live rows of the segment (from, to] and of its messages are the archive's copy, as
  // on SQLite: the same last event's hash (it commits to all before it) and event count, no
  // live event of those messages after the segment, as many rows per table.
  Result<bool> unchanged(std::int64_t from, std::int64_t to, const std::string& messages) {
    auto live_end = hash_at(m_live, to);
    if (!live_end) return std::unexpected(live_end.error());
    auto archive_end = hash_at(m_archive, to);
    if (!archive_end) return std::unexpected(archive_end.error());
    if (!*live_end || *live_end != *archive_end) return false;
    const std::string count_segment = "SELECT count(*) FROM audit WHERE id > ?1 AND id <= ?2";
    auto live_events = segment_int(m_live, count_segment, from, to);
    if (!live_events) return std::unexpected(live_events.error());
    auto archived_events = segment_int(m_archive, count_segment, from, to);
    if (!archived_events) return std::unexpected(archived_events.error());
    if (*live_events != *archived_events) return false;
    auto later = with_set("SELECT count(*) FROM audit WHERE id > ?2 AND message_id" + in_set("?1"), messages, to);
    if (!later) return std::unexpected(later.error());
    if (*later != 0) return false;
    for (const auto& t : m_tables) {
      auto live_rows =
          with_set(std::string("SELECT count(*) FROM ") + t.name + " WHERE " + t.key + in_set("?1"), messages);
      if (!live_rows) return std::unexpected(live_rows.error());
      auto archived_rows = segment_int(
          m_archive, std::string("SELECT count(*) FROM main.") + t.name + where_message(t, "main"), from, to);
      if (!archived_rows) return std::unexpected(archived_rows.error());
      if (*live_rows != *archived_rows) return false;
    }
    return true;
  }

  Result<void> set_anchor(std::int64_t to) {
    auto hash = hash_at(m_archive, to);
    if (!hash) return std::unexpected(hash.error());
    if (!*hash) return std::unexpected(Error::internal("the archive lost its last event during the live commit"));
    auto set = Query::prepare(m_live,
                              "INSERT INTO audit_anchor (id, last_id, last_hash, updated_at) VALUES (1, ?1, ?2, ?3)"
                              " ON CONFLICT (id) DO UPDATE SET last_id = excluded.last_id,"
                              " last_hash = excluded.last_hash, updated_at = excluded.updated_at");
    if (!set) return std::unexpected(set.error());
    set->bind(1, to).bind(2, **hash).bind(3, m_options.now);
    return set->run();
  }

  Database& m_live;
  Database& m_archive;
  const ArchiveOptions& m_options;
  std::vector<ArchiveTable> m_tables;  // those the live schema has
  bool m_media = false;                // the schema keeps files (k_media_since)
  std::vector<TableCopy> m_copies;
};

}  // namespace

std::unique_ptr<ArchiveSteps> copying_steps(Database& live, Database& archive, const ArchiveOptions& options) {
  return std::make_unique<CopyingSteps>(live, archive, options);
}

}  // namespace dispatchd::store::internal
