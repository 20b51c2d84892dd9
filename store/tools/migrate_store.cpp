#include "store/tools/migrate_store.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdint>
#include <map>
#include <set>
#include <utility>

#include "store/internal/sql.h"
#include "store/raw_payload.h"
#include "store/tools/internal/row_copy.h"

namespace dispatchd::store {

using internal::applied_migrations;
using internal::text_rows;

std::string_view to_string(MigrateStoreFailure failure) {
  switch (failure) {
    case MigrateStoreFailure::source_chain_broken: return "source_chain_broken";
    case MigrateStoreFailure::target_not_empty: return "target_not_empty";
    case MigrateStoreFailure::schema_mismatch: return "schema_mismatch";
    case MigrateStoreFailure::value_mismatch: return "value_mismatch";
    case MigrateStoreFailure::source_changed: return "source_changed";
    case MigrateStoreFailure::target_mismatch: return "target_mismatch";
    case MigrateStoreFailure::database: return "database";
  }
  return "database";
}

namespace {

using Failed = std::unexpected<MigrateStoreError>;
template <typename T>
using MoveResult = std::expected<T, MigrateStoreError>;

Failed refuse(MigrateStoreFailure failure, std::string message) {
  const ErrorKind kind = failure == MigrateStoreFailure::schema_mismatch ? ErrorKind::schema : ErrorKind::refused;
  return Failed(MigrateStoreError{failure, Error{kind, std::move(message)}});
}
Failed failed(Error error, std::string_view context) {
  return Failed(MigrateStoreError{MigrateStoreFailure::database, with_context(std::move(error), context)});
}

// A store call's error as the move's: a failure of kind `database`, its step named.
#define DISPATCHD_MOVE_TRY(expr, context)                               \
  do {                                                                  \
    if (auto&& dispatchd_move_result = (expr); !dispatchd_move_result)  \
      return failed(std::move(dispatchd_move_result.error()), context); \
  } while (0)

// Names come from the schemas, not from people; quoted all the same.
std::string quoted_name(std::string_view name) {
  std::string out = "\"";
  for (const char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string joined(const std::vector<std::string>& names, std::string_view separator = ", ") {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : std::string(separator)) + quoted_name(name);
  return out;
}

// How a value must reach its PostgreSQL column.
enum class TargetType { integer, real, boolean, text, blob };

TargetType column_type(std::string_view pg_data_type) {
  if (pg_data_type == "bigint" || pg_data_type == "integer" || pg_data_type == "smallint") return TargetType::integer;
  if (pg_data_type == "double precision" || pg_data_type == "real" || pg_data_type == "numeric")
    return TargetType::real;
  if (pg_data_type == "boolean") return TargetType::boolean;
  if (pg_data_type == "bytea") return TargetType::blob;
  // TEXT, and any type PostgreSQL reads from its text form (jsonb, timestamptz).
  return TargetType::text;
}

struct Table {
  std::string name;
  std::vector<std::string> columns;   // the source's order
  std::vector<TargetType> types;      // the target's type of each column
  std::vector<std::string> order_by;  // primary key columns, else rowid
  std::vector<std::string> identity;  // target columns with a sequence behind them
  std::set<std::string> parents;      // tables its foreign keys reference
};

// The source's tables with their columns, keys and parents.
Result<std::vector<Table>> source_tables(Database& source) {
  auto names =
      text_rows(source,
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
                " AND name <> 'schema_migrations' ORDER BY name",
                1);
  if (!names) return std::unexpected(names.error());
  std::vector<Table> tables;
  for (const auto& row : *names) {
    Table table{row[0], {}, {}, {}, {}, {}};
    auto columns = text_rows(source, "SELECT name, pk FROM pragma_table_info(?1) ORDER BY cid", 2, table.name);
    if (!columns) return std::unexpected(columns.error());
    std::vector<std::pair<int, std::string>> key;
    for (const auto& column : *columns) {
      table.columns.push_back(column[0]);
      int position = 0;
      const auto parsed = std::from_chars(column[1].data(), column[1].data() + column[1].size(), position);
      if (parsed.ec == std::errc{} && position > 0) key.emplace_back(position, column[0]);
    }
    std::sort(key.begin(), key.end());
    for (auto& [position, name] : key) table.order_by.push_back(std::move(name));
    auto parents = text_rows(source, "SELECT DISTINCT \"table\" FROM pragma_foreign_key_list(?1)", 1, table.name);
    if (!parents) return std::unexpected(parents.error());
    for (const auto& parent : *parents)
      if (parent[0] != table.name) table.parents.insert(parent[0]);
    tables.push_back(std::move(table));
  }
  return tables;
}

// Parents before children (Kahn's order, ties by name); a cycle is a schema this move cannot
// copy row by row.
MoveResult<std::vector<Table>> dependency_order(std::vector<Table> tables) {
  std::vector<Table> ordered;
  std::set<std::string> placed;
  while (!tables.empty()) {
    const auto ready = std::find_if(tables.begin(), tables.end(), [&](const Table& t) {
      return std::all_of(t.parents.begin(), t.parents.end(), [&](const std::string& p) {
        return placed.contains(p) ||
               std::none_of(tables.begin(), tables.end(), [&](const Table& o) { return o.name == p; });
      });
    });
    if (ready == tables.end())
      return refuse(MigrateStoreFailure::schema_mismatch, "the source's foreign keys form a cycle");
    placed.insert(ready->name);
    ordered.push_back(std::move(*ready));
    tables.erase(ready);
  }
  return ordered;
}

// Fills each table's target types and identity columns; refuses tables or columns that are
// not the same set on both sides.
MoveResult<void> match_target(Database& target, std::vector<Table>& tables) {
  auto names = text_rows(target,
                         "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
                         " AND table_type = 'BASE TABLE' AND table_name <> 'schema_migrations' ORDER BY table_name",
                         1);
  DISPATCHD_MOVE_TRY(names, "the target's tables");
  std::set<std::string> target_names;
  for (const auto& row : *names) target_names.insert(row[0]);
  std::set<std::string> source_names;
  for (const auto& table : tables) source_names.insert(table.name);
  if (source_names != target_names)
    return refuse(MigrateStoreFailure::schema_mismatch, "the source and the target do not hold the same tables");
  for (auto& table : tables) {
    auto columns = text_rows(target,
                             "SELECT column_name, data_type, CASE WHEN is_identity = 'YES' OR column_default LIKE "
                             "'nextval(%' THEN '1' ELSE '0' END FROM information_schema.columns"
                             " WHERE table_schema = current_schema() AND table_name = ?1",
                             3, table.name);
    DISPATCHD_MOVE_TRY(columns, "the target's columns");
    std::map<std::string, TargetType> types;
    for (const auto& column : *columns) {
      types[column[0]] = column_type(column[1]);
      if (column[2] == "1") table.identity.push_back(column[0]);
    }
    if (types.size() != table.columns.size())
      return refuse(MigrateStoreFailure::schema_mismatch, "table " + table.name + ": the columns differ");
    for (const auto& column : table.columns) {
      const auto found = types.find(column);
      if (found == types.end())
        return refuse(MigrateStoreFailure::schema_mismatch,
                      "table " + table.name + ": the target has no column " + column);
      table.types.push_back(found->second);
    }
  }
  return {};
}

// The rows a target may hold and still be empty: what the migrations seed on an empty
// database (0008 counts re-asks of no attempt as one row with n = 0).
std::string counted_rows(std::string_view table) {
  return "SELECT count(*) FROM " + quoted_name(table) + (table == "metric_counts" ? " WHERE n <> 0" : "");
}

MoveResult<void> require_empty(Database& target) {
  auto names = text_rows(target,
                         "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
                         " AND table_type = 'BASE TABLE' AND table_name <> 'schema_migrations' ORDER BY table_name",
                         1);
  DISPATCHD_MOVE_TRY(names, "the target's tables");
  for (const auto& row : *names) {
    auto count = internal::query_int(target, counted_rows(row[0]));
    DISPATCHD_MOVE_TRY(count, "counting the target's " + row[0]);
    if (*count > 0)
      return refuse(MigrateStoreFailure::target_not_empty, "the target already holds rows (" + std::to_string(*count) +
                                                               " in " + row[0] +
                                                               "): a move never merges; give an empty database");
  }
  return {};
}

MoveResult<void> migrate_target(Database& source, Database& target, const std::vector<Migration>& migrations,
                                const std::string& now, int source_version) {
  std::vector<Migration> wanted;
  for (const auto& m : migrations)
    if (m.version <= source_version) wanted.push_back(m);
  if (wanted.empty() || wanted.back().version != source_version)
    return refuse(MigrateStoreFailure::schema_mismatch, "the source is at schema version " +
                                                            std::to_string(source_version) +
                                                            ", which this dispatchctl's PostgreSQL migrations lack");
  if (auto applied = migrate(target, wanted, now); !applied) {
    if (applied.error().kind == ErrorKind::schema)
      return refuse(MigrateStoreFailure::schema_mismatch, "the target's migrations: " + applied.error().message);
    return failed(std::move(applied.error()), "migrating the target");
  }
  auto from = applied_migrations(source);
  DISPATCHD_MOVE_TRY(from, "the source's migrations");
  auto to = applied_migrations(target);
  DISPATCHD_MOVE_TRY(to, "the target's migrations");
  if (*from != *to)
    return refuse(MigrateStoreFailure::schema_mismatch,
                  "the source and the target have not applied the same migrations (versions and names)");
  return {};
}

// One value read from SQLite, as it is bound on PostgreSQL.
struct Value {
  enum class Kind { null, integer, real, text, blob } kind = Kind::null;
  std::int64_t integer = 0;
  double real = 0;
  std::string text;  // a text, or a blob's bytes
};

class TableCopy {
 public:
  TableCopy(Database& source, Database& target, const Table& table, int batch_rows)
      : m_source(source), m_target(target), m_table(table), m_batch_rows(std::max(batch_rows, 1)) {
    if (table.name != "inbox") return;
    const auto index = [&](std::string_view name) {
      return static_cast<std::size_t>(std::find(table.columns.begin(), table.columns.end(), name) -
                                      table.columns.begin());
    };
    m_raw = index("raw_payload");
    m_raw_encoding = index("raw_encoding");
  }

  MoveResult<std::int64_t> run() {
    std::string select = "SELECT ";
    for (std::size_t c = 0; c < m_table.columns.size(); ++c)
      select +=
          (c ? ", typeof(" : "typeof(") + quoted_name(m_table.columns[c]) + "), " + quoted_name(m_table.columns[c]);
    select += " FROM " + quoted_name(m_table.name) + " ORDER BY " +
              (m_table.order_by.empty() ? std::string("rowid") : joined(m_table.order_by));
    auto rows = Query::prepare(m_source, select);
    DISPATCHD_MOVE_TRY(rows, "reading " + m_table.name);
    while (true) {
      auto row = rows->step();
      DISPATCHD_MOVE_TRY(row, "reading " + m_table.name);
      if (!*row) break;
      for (std::size_t c = 0; c < m_table.columns.size(); ++c) {
        auto value = read_value(*rows, c);
        if (!value) return Failed(std::move(value.error()));
        m_bytes += value->text.size() + sizeof(Value);
        m_values.push_back(std::move(*value));
      }
      encode_raw_payload();
      ++m_read;
      if (buffered() >= m_batch_rows || m_bytes >= k_migrate_batch_bytes) {
        if (auto sent = flush(); !sent) return Failed(std::move(sent.error()));
      }
    }
    if (auto sent = flush(); !sent) return Failed(std::move(sent.error()));
    return m_read;
  }

 private:
  std::int64_t buffered() const { return static_cast<std::int64_t>(m_values.size() / m_table.columns.size()); }

  // An inbox row stored before migration 0016 on SQLite may hold a raw payload that is not
  // UTF-8, which PostgreSQL's TEXT refuses: it moves as the rule since 0016 stores it, base64
  // with raw_encoding 'base64' (store/raw_payload.h).
  void encode_raw_payload() {
    const std::size_t columns = m_table.columns.size();
    if (m_raw >= columns || m_raw_encoding >= columns) return;
    const std::size_t row = m_values.size() - columns;
    Value& raw = m_values[row + m_raw];
    Value& encoding = m_values[row + m_raw_encoding];
    if (raw.kind != Value::Kind::text || encoding.kind != Value::Kind::null) return;
    auto stored = store_payload(raw.text);
    if (!stored.encoding) return;
    m_bytes += stored.text.size() - raw.text.size();
    raw.text = std::move(stored.text);
    encoding = Value{Value::Kind::text, 0, 0, std::move(*stored.encoding)};
  }

  MoveResult<Value> read_value(const Query& rows, std::size_t c) const {
    const int column = static_cast<int>(2 * c + 1);
    const std::string sqlite_type = rows.text(column - 1);
    Value value;
    const TargetType type = m_table.types[c];
    if (sqlite_type == "null") return value;
    if (type == TargetType::integer && sqlite_type == "integer") {
      value.kind = Value::Kind::integer;
      value.integer = rows.integer(column);
    } else if (type == TargetType::real && (sqlite_type == "integer" || sqlite_type == "real")) {
      value.kind = Value::Kind::real;
      value.real = *rows.optional_real(column);
    } else if (type == TargetType::boolean && sqlite_type == "integer" &&
               (rows.integer(column) == 0 || rows.integer(column) == 1)) {
      value.kind = Value::Kind::text;
      value.text = rows.integer(column) ? "true" : "false";
    } else if (type == TargetType::text && sqlite_type == "text") {
      value.kind = Value::Kind::text;
      value.text = rows.text(column);
    } else if (type == TargetType::blob && sqlite_type == "blob") {
      value.kind = Value::Kind::blob;
      value.text = rows.blob(column);
    } else {
      static constexpr const char* k_wanted[] = {"an integer", "a number", "0 or 1", "text", "bytes"};
      return refuse(MigrateStoreFailure::value_mismatch,
                    "table " + m_table.name + ", row " + std::to_string(m_read + 1) + " in key order, column " +
                        m_table.columns[c] + ": SQLite holds " + sqlite_type + " where PostgreSQL wants " +
                        k_wanted[static_cast<int>(type)]);
    }
    return value;
  }

  // Sends the buffered rows: full batches, then the rest in power-of-two statements, so that
  // a table prepares a handful of statement texts, not one per remainder.
  MoveResult<void> flush() {
    std::int64_t done = 0;
    const std::int64_t total = buffered();
    while (done < total) {
      std::int64_t rows = std::min<std::int64_t>(m_batch_rows, total - done);
      if (rows < m_batch_rows) rows = static_cast<std::int64_t>(std::bit_floor(static_cast<std::uint64_t>(rows)));
      if (auto sent = insert(done, rows); !sent) return sent;
      done += rows;
    }
    m_values.clear();
    m_bytes = 0;
    return {};
  }

  MoveResult<void> insert(std::int64_t first_row, std::int64_t rows) {
    auto& text = m_insert_texts[rows];
    if (text.empty()) {
      text = "INSERT INTO " + quoted_name(m_table.name) + " (" + joined(m_table.columns) + ") VALUES ";
      std::string tuple = "(";
      for (std::size_t c = 0; c < m_table.columns.size(); ++c) tuple += c ? ", ?" : "?";
      tuple += ")";
      for (std::int64_t r = 0; r < rows; ++r) text += (r ? ", " : "") + tuple;
    }
    auto insert = Query::prepare(m_target, text);
    DISPATCHD_MOVE_TRY(insert, "writing " + m_table.name);
    const std::size_t width = m_table.columns.size();
    for (std::size_t i = 0; i < static_cast<std::size_t>(rows) * width; ++i) {
      const Value& v = m_values[static_cast<std::size_t>(first_row) * width + i];
      const int index = static_cast<int>(i + 1);
      switch (v.kind) {
        case Value::Kind::null: insert->bind(index, std::optional<std::int64_t>{}); break;
        case Value::Kind::integer: insert->bind(index, v.integer); break;
        case Value::Kind::real: insert->bind(index, v.real); break;
        case Value::Kind::text: insert->bind(index, std::string_view(v.text)); break;
        case Value::Kind::blob: insert->bind_blob(index, v.text); break;
      }
    }
    DISPATCHD_MOVE_TRY(insert->run(), "writing " + m_table.name);
    return {};
  }

  Database& m_source;
  Database& m_target;
  const Table& m_table;
  const std::int64_t m_batch_rows;
  std::vector<Value> m_values;  // buffered rows, row after row
  std::size_t m_bytes = 0;
  std::int64_t m_read = 0;
  std::map<std::int64_t, std::string> m_insert_texts;
  // inbox only: the columns of the raw payload and its encoding (else past the end).
  std::size_t m_raw = SIZE_MAX;
  std::size_t m_raw_encoding = SIZE_MAX;
};

// The identity's next value after the largest id copied, as SQLite would number the next row.
MoveResult<void> advance_identities(Database& target, const Table& table) {
  for (const auto& column : table.identity) {
    auto largest = internal::query_int(
        target, "SELECT coalesce(max(" + quoted_name(column) + "), 0) FROM " + quoted_name(table.name));
    DISPATCHD_MOVE_TRY(largest, "the largest id of " + table.name);
    if (*largest <= 0) continue;
    auto set = internal::query_int(target, "SELECT setval(pg_get_serial_sequence('" + quoted_name(table.name) + "', '" +
                                               column + "'), " + std::to_string(*largest) + ")");
    DISPATCHD_MOVE_TRY(set, "the identity of " + table.name);
  }
  return {};
}

MoveResult<std::vector<TableCopied>> copy_tables(Database& source, Database& target, const std::vector<Table>& tables,
                                                 const MigrateStoreOptions& options) {
  for (const auto& table : tables)
    DISPATCHD_MOVE_TRY(internal::exec(target, "ALTER TABLE " + quoted_name(table.name) + " DISABLE TRIGGER USER"),
                       "the triggers");
  // The seeded zero counts would collide with the source's rows (require_empty allows only them).
  if (std::any_of(tables.begin(), tables.end(), [](const Table& t) { return t.name == "metric_counts"; }))
    DISPATCHD_MOVE_TRY(internal::exec(target, "DELETE FROM metric_counts WHERE n = 0"), "the seeded metric counts");
  std::vector<TableCopied> copied;
  for (const auto& table : tables) {
    auto rows = TableCopy(source, target, table, options.batch_rows).run();
    if (!rows) return Failed(std::move(rows.error()));
    if (auto advanced = advance_identities(target, table); !advanced) return Failed(std::move(advanced.error()));
    copied.push_back({table.name, *rows});
    if (options.on_table) options.on_table(copied.back());
  }
  for (const auto& table : tables)
    DISPATCHD_MOVE_TRY(internal::exec(target, "ALTER TABLE " + quoted_name(table.name) + " ENABLE TRIGGER USER"),
                       "the triggers");
  return copied;
}

bool same_audit_event(const std::optional<AuditAnchor>& a, const std::optional<AuditAnchor>& b) {
  if (!a || !b) return !a && !b;
  return a->last_id == b->last_id && a->last_hash == b->last_hash;
}

// Step 6: the target's chain and counts against the source's snapshot.
MoveResult<std::optional<AuditAnchor>> check_copy(Database& source, Database& target, const AuditCheck& source_chain,
                                                  const std::vector<TableCopied>& copied) {
  auto chain = verify_audit(target);
  DISPATCHD_MOVE_TRY(chain, "verifying the target's audit chain");
  if (chain->first_broken)
    return refuse(
        MigrateStoreFailure::target_mismatch,
        "the target's audit chain breaks at id " + std::to_string(*chain->first_broken) + ": " + chain->reason);
  auto source_head = newest_audit_event(source);
  DISPATCHD_MOVE_TRY(source_head, "the source's newest audit event");
  auto target_head = newest_audit_event(target);
  DISPATCHD_MOVE_TRY(target_head, "the target's newest audit event");
  if (chain->events != source_chain.events || !same_audit_event(*source_head, *target_head) ||
      !same_audit_event(chain->anchor, source_chain.anchor))
    return refuse(MigrateStoreFailure::target_mismatch,
                  "the two audit chains differ (events " + std::to_string(source_chain.events) + " and " +
                      std::to_string(chain->events) + ", or their head or anchor)");
  for (const auto& table : copied) {
    auto from = internal::query_int(source, "SELECT count(*) FROM " + quoted_name(table.table));
    DISPATCHD_MOVE_TRY(from, "counting the source's " + table.table);
    auto to = internal::query_int(target, "SELECT count(*) FROM " + quoted_name(table.table));
    DISPATCHD_MOVE_TRY(to, "counting the target's " + table.table);
    if (*from != *to || *to != table.rows)
      return refuse(MigrateStoreFailure::target_mismatch, "table " + table.table + ": " + std::to_string(*from) +
                                                              " rows in the source, " + std::to_string(*to) +
                                                              " in the target");
  }
  return std::move(*target_head);
}

// Everything after the source's snapshot began; runs inside the target's transaction.
MoveResult<MigrateStoreResult> move_rows(Database& source, Database& target, const std::vector<Migration>& migrations,
                                         const std::string& now, const MigrateStoreOptions& options,
                                         long long source_version_mark) {
  auto chain = verify_audit(source);
  DISPATCHD_MOVE_TRY(chain, "verifying the source's audit chain");
  if (chain->first_broken)
    return refuse(MigrateStoreFailure::source_chain_broken, "the source's audit chain breaks at id " +
                                                                std::to_string(*chain->first_broken) + ": " +
                                                                chain->reason + "; nothing was moved");
  auto version = schema_version(source);
  DISPATCHD_MOVE_TRY(version, "the source's schema version");
  auto found = source_tables(source);
  DISPATCHD_MOVE_TRY(found, "the source's tables");
  auto tables = dependency_order(std::move(*found));
  if (!tables) return Failed(std::move(tables.error()));
  if (auto empty = require_empty(target); !empty) return Failed(std::move(empty.error()));
  if (auto migrated = migrate_target(source, target, migrations, now, *version); !migrated)
    return Failed(std::move(migrated.error()));
  if (auto matched = match_target(target, *tables); !matched) return Failed(std::move(matched.error()));
  auto copied = copy_tables(source, target, *tables, options);
  if (!copied) return Failed(std::move(copied.error()));
  auto head = check_copy(source, target, *chain, *copied);
  if (!head) return Failed(std::move(head.error()));
  // Step 7: the snapshot ends; any commit by another connection since it began shows here.
  DISPATCHD_MOVE_TRY(internal::exec(source, "COMMIT"), "ending the source's read transaction");
  auto mark = internal::query_int(source, "PRAGMA data_version");
  DISPATCHD_MOVE_TRY(mark, "the source's data version");
  if (*mark != source_version_mark)
    return refuse(MigrateStoreFailure::source_changed,
                  "the source was written to during the move (is dispatchd still running?); the target was rolled "
                  "back: stop dispatchd and run the move again");
  return MigrateStoreResult{*version, std::move(*copied), chain->events, std::move(*head)};
}

}  // namespace

std::expected<MigrateStoreResult, MigrateStoreError> migrate_store(Database& source, Database& target,
                                                                   const std::vector<Migration>& migrations,
                                                                   const std::string& now,
                                                                   const MigrateStoreOptions& options) {
  if (source.backend() != Backend::sqlite || target.backend() != Backend::postgresql)
    return refuse(MigrateStoreFailure::schema_mismatch, "a move goes from a SQLite file to a PostgreSQL database");
  if (source.in_transaction() || target.in_transaction() || internal::Access::round(source) ||
      internal::Access::round(target))
    return failed(Error::internal("migrate_store needs both databases outside any transaction"), "migrate_store");
  // The snapshot begins at the first read after BEGIN: this one.
  DISPATCHD_MOVE_TRY(internal::exec(source, "BEGIN"), "the source's read transaction");
  auto mark = internal::query_int(source, "SELECT count(*) FROM sqlite_master");
  if (mark) mark = internal::query_int(source, "PRAGMA data_version");
  std::optional<MigrateStoreError> failure;
  Result<MigrateStoreResult> moved = std::unexpected(Error::internal("no snapshot"));
  if (mark) {
    moved = transaction<MigrateStoreResult>(target, [&]() -> Result<MigrateStoreResult> {
      auto result = move_rows(source, target, migrations, now, options, *mark);
      if (result) return std::move(*result);
      failure = result.error();
      return std::unexpected(std::move(result.error().error));
    });
  }
  if (source.in_transaction()) {
    // A read transaction: ending it changes nothing, and it ends with the connection anyway.
    auto ended = internal::exec(source, "ROLLBACK");
    if (!ended && moved) return failed(std::move(ended.error()), "ending the source's read transaction");
  }
  if (!mark) return failed(std::move(mark.error()), "the source's snapshot");
  if (moved) return std::move(*moved);
  // The body's own failure (its message may carry the rollback's too), else the COMMIT's.
  if (failure) {
    failure->error = std::move(moved.error());
    return Failed(std::move(*failure));
  }
  return failed(std::move(moved.error()), "committing the target");
}

}  // namespace dispatchd::store
