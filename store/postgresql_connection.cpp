// The PostgreSQL engine behind a Database (store/internal/connection.h), through libpq:
// each SQL text is prepared once per connection (PQprepare, its `?` placeholders rewritten
// to `$N` by store/dialect.h) and run with text parameters (PQexecPrepared; a blob in
// binary) and text results (a BYTEA as its hex text, decoded); step() walks the rows of the
// result. Synchronous: the caller's thread waits for the server.

#include <charconv>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <libpq-fe.h>

#include "common/text.h"
#include "store/dialect.h"
#include "store/internal/connection.h"

namespace dispatchd::store::internal {
namespace {

struct PgSqlHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view sql) const noexcept { return std::hash<std::string_view>{}(sql); }
};

// libpq's messages span lines ("...failed: FATAL:  password ...\n"); ours are one line.
std::string one_line(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '\n' || c == '\r') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// The error a failed call left: its SQLSTATE names the kind; a result without one (the
// connection broke before the server answered) is io when the connection is gone.
Error describe(PGconn* conn, const PGresult* result) {
  const char* state = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  const char* message = result ? PQresultErrorMessage(result) : nullptr;
  if (!message || !*message) message = PQerrorMessage(conn);
  ErrorKind kind = state ? kind_of_sqlstate(state) : ErrorKind::internal;
  if (!state && PQstatus(conn) == CONNECTION_BAD) kind = ErrorKind::io;
  std::string text = one_line(message);
  if (text.empty()) text = "PostgreSQL call failed";
  return {kind, std::move(text)};
}

std::int64_t command_tuples(PGresult* result) {
  const char* count = PQcmdTuples(result);
  std::int64_t value = 0;
  if (count && *count) std::from_chars(count, count + std::char_traits<char>::length(count), value);
  return value;
}

// A BYTEA column in a text result: \x and two hex digits a byte (PostgreSQL's
// bytea_output = hex, the default since 9.0). Anything else reads as no bytes.
std::string decode_bytea(std::string_view text) {
  if (!text.starts_with("\\x") || text.size() % 2 != 0) return {};
  std::string out;
  out.reserve((text.size() - 2) / 2);
  for (std::size_t i = 2; i < text.size(); i += 2) {
    const int high = text::hex_value(text[i]);
    const int low = text::hex_value(text[i + 1]);
    if (high < 0 || low < 0) return {};
    out.push_back(static_cast<char>(high * 16 + low));
  }
  return out;
}

class PostgresqlConnection;

class PostgresqlStatement final : public Statement {
 public:
  PostgresqlStatement(PostgresqlConnection& owner, std::string name, int parameters)
      : m_owner(owner),
        m_name(std::move(name)),
        m_values(parameters),
        m_pointers(parameters, nullptr),
        m_lengths(parameters, 0),
        m_formats(parameters, 0) {}
  ~PostgresqlStatement() override { PQclear(m_result); }
  PostgresqlStatement(const PostgresqlStatement&) = delete;
  PostgresqlStatement& operator=(const PostgresqlStatement&) = delete;

  void bind_text(int index, std::string_view value) override {
    if (std::string* slot = value_slot(index)) set(index, slot->assign(value));
  }
  void bind_blob(int index, std::string_view bytes) override {
    std::string* slot = value_slot(index);
    if (!slot) return;
    set(index, slot->assign(bytes));
    const auto at = static_cast<std::size_t>(index - 1);
    m_lengths[at] = static_cast<int>(bytes.size());
    m_formats[at] = 1;  // binary: the bytes as they are, NULs included
  }
  void bind_int64(int index, std::int64_t value) override { bind_number(index, value); }
  void bind_double(int index, double value) override { bind_number(index, value); }
  void bind_null(int index) override {
    if (value_slot(index)) m_pointers[static_cast<std::size_t>(index - 1)] = nullptr;
  }

  Result<bool> step() override;

  std::string_view column_text(int column) const override {
    if (column_is_null(column)) return {};
    return {PQgetvalue(m_result, m_row, column), static_cast<std::size_t>(PQgetlength(m_result, m_row, column))};
  }
  std::int64_t column_int64(int column) const override {
    const std::string_view text = column_text(column);
    if (text == "t") return 1;  // a boolean (a comparison in a select list)
    std::int64_t value = 0;
    if (std::from_chars(text.data(), text.data() + text.size(), value).ec != std::errc{}) {
      // numeric with a fraction, or a double: truncated, as SQLite's sqlite3_column_int64 does
      value = static_cast<std::int64_t>(column_double(column));
    }
    return value;
  }
  double column_double(int column) const override {
    const std::string_view text = column_text(column);
    double value = 0;
    // strtod reads Infinity and NaN as PostgreSQL writes them; from_chars does not.
    if (std::from_chars(text.data(), text.data() + text.size(), value).ec != std::errc{} && !text.empty())
      value = std::strtod(std::string(text).c_str(), nullptr);
    return value;
  }
  std::string column_blob(int column) const override { return decode_bytea(column_text(column)); }
  bool column_is_null(int column) const override {
    return m_result == nullptr || m_row >= m_rows || column >= PQnfields(m_result) ||
           PQgetisnull(m_result, m_row, column) != 0;
  }

  void reset() override {
    PQclear(m_result);
    m_result = nullptr;
    m_ran = false;
    m_row = 0;
    m_rows = 0;
    for (auto& pointer : m_pointers) pointer = nullptr;
    for (auto& format : m_formats) format = 0;
  }

 private:
  std::string* value_slot(int index) {
    if (index < 1 || static_cast<std::size_t>(index) > m_values.size()) return nullptr;
    return &m_values[static_cast<std::size_t>(index - 1)];
  }
  void set(int index, const std::string& value) { m_pointers[static_cast<std::size_t>(index - 1)] = value.c_str(); }
  template <typename Number>
  void bind_number(int index, Number value) {
    std::string* slot = value_slot(index);
    if (!slot) return;
    char buffer[32];
    // Shortest text that reads back as the same value, so a double survives the trip.
    const auto written = std::to_chars(buffer, buffer + sizeof buffer, value);
    set(index, slot->assign(buffer, written.ptr));
  }

  PostgresqlConnection& m_owner;
  std::string m_name;
  // The parameters' text (reused between runs, so their capacity stays) and what libpq is
  // given: a pointer into m_values, or null for NULL.
  std::vector<std::string> m_values;
  std::vector<const char*> m_pointers;
  std::vector<int> m_lengths;  // a binary parameter's length (libpq reads it for those only)
  std::vector<int> m_formats;  // 0 text, 1 binary (a blob)
  PGresult* m_result = nullptr;
  bool m_ran = false;
  int m_row = 0;
  int m_rows = 0;
};

class PostgresqlConnection final : public Connection {
 public:
  explicit PostgresqlConnection(PGconn* conn) : m_conn(conn) {}
  ~PostgresqlConnection() override {
    m_statements.clear();
    PQfinish(m_conn);
  }
  PostgresqlConnection(const PostgresqlConnection&) = delete;
  PostgresqlConnection& operator=(const PostgresqlConnection&) = delete;

  Backend backend() const override { return Backend::postgresql; }

  Result<void> exec(std::string_view sql) override {
    const std::string text(sql);
    PGresult* result = PQexec(m_conn, text.c_str());
    const ExecStatusType status = result ? PQresultStatus(result) : PGRES_FATAL_ERROR;
    const bool ok = status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
    if (ok && !std::string_view(PQcmdStatus(result)).starts_with("SELECT")) record_changes(command_tuples(result));
    if (!ok) m_last = describe(m_conn, result);
    PQclear(result);
    if (!ok) return std::unexpected(m_last);
    return {};
  }

  Result<Statement*> statement(std::string_view sql) override {
    if (const auto it = m_statements.find(sql); it != m_statements.end()) return it->second.get();
    const PostgresqlSql translated = to_postgresql_placeholders(sql);
    std::string name = "dispatchd_" + std::to_string(m_statements.size() + 1);
    PGresult* result = PQprepare(m_conn, name.c_str(), translated.text.c_str(), translated.parameters, nullptr);
    const bool ok = result && PQresultStatus(result) == PGRES_COMMAND_OK;
    if (!ok) m_last = describe(m_conn, result);
    PQclear(result);
    if (!ok) {
      Error error = m_last;
      error.message += " (in: " + std::string(sql.substr(0, 80)) + ")";
      return std::unexpected(std::move(error));
    }
    auto owned = std::make_unique<PostgresqlStatement>(*this, std::move(name), translated.parameters);
    Statement* raw = owned.get();
    m_statements.emplace(std::string(sql), std::move(owned));
    return raw;
  }

  bool in_transaction() const override {
    const PGTransactionStatusType status = PQtransactionStatus(m_conn);
    return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE;
  }
  Error last_error() const override { return m_last; }
  bool lost() const override { return PQstatus(m_conn) == CONNECTION_BAD; }
  std::int64_t changes() const override { return m_changes; }
  std::int64_t total_changes() const override { return m_total_changes; }

  // For the statements: they run on this connection and report here.
  PGconn* handle() const { return m_conn; }
  void record_changes(std::int64_t rows) {
    m_changes = rows;
    m_total_changes += rows;
  }
  Error record_error(const PGresult* result) {
    m_last = describe(m_conn, result);
    return m_last;
  }

 private:
  PGconn* m_conn;
  std::unordered_map<std::string, std::unique_ptr<PostgresqlStatement>, PgSqlHash, std::equal_to<>> m_statements;
  Error m_last;
  std::int64_t m_changes = 0;
  std::int64_t m_total_changes = 0;
};

Result<bool> PostgresqlStatement::step() {
  if (m_ran) {
    if (m_row < m_rows) ++m_row;
    return m_row < m_rows;
  }
  m_ran = true;
  m_result = PQexecPrepared(m_owner.handle(), m_name.c_str(), static_cast<int>(m_pointers.size()), m_pointers.data(),
                            m_lengths.data(), m_formats.data(), 0);
  const ExecStatusType status = m_result ? PQresultStatus(m_result) : PGRES_FATAL_ERROR;
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    Error error = m_owner.record_error(m_result);
    PQclear(m_result);
    m_result = nullptr;
    return std::unexpected(std::move(error));
  }
  // A SELECT's tuples are rows read, not changed (PQcmdTuples counts them all the same): as
  // with SQLite, a query leaves the count of the last change as it was.
  if (!std::string_view(PQcmdStatus(m_result)).starts_with("SELECT")) m_owner.record_changes(command_tuples(m_result));
  m_rows = PQntuples(m_result);
  m_row = 0;
  return m_rows > 0;
}

// Server notices ("there is no transaction in progress") would go to stderr by default.
void ignore_notice(void*, const char*) {}

}  // namespace

Result<std::unique_ptr<Connection>> open_postgresql(const std::string& uri, const std::string& password) {
  // Later keywords override what the URI says; earlier ones are defaults it may override.
  const char* keywords[] = {"connect_timeout", "application_name", "dbname", "client_encoding", "password", nullptr};
  const char* values[] = {"10",   "dispatchd", uri.c_str(), "UTF8", password.empty() ? nullptr : password.c_str(),
                          nullptr};
  if (password.empty()) keywords[4] = nullptr;
  PGconn* conn = PQconnectdbParams(keywords, values, 1);
  if (!conn) return std::unexpected(Error{ErrorKind::io, "cannot allocate a PostgreSQL connection"});
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string message = one_line(PQerrorMessage(conn));
    PQfinish(conn);
    // libpq does not echo a password; should a message ever hold it, it is cut out here.
    for (std::size_t at; !password.empty() && (at = message.find(password)) != std::string::npos;)
      message.replace(at, password.size(), "***");
    return std::unexpected(Error{ErrorKind::io, std::move(message)});
  }
  PQsetNoticeProcessor(conn, &ignore_notice, nullptr);
  // decode_bytea reads the hex form; a server or role may have set the old escape form.
  PGresult* set = PQexec(conn, "SET bytea_output = hex");
  const bool set_ok = set != nullptr && PQresultStatus(set) == PGRES_COMMAND_OK;
  PQclear(set);
  if (!set_ok) {
    std::string message = "cannot set bytea_output: " + one_line(PQerrorMessage(conn));
    PQfinish(conn);
    return std::unexpected(Error{ErrorKind::io, std::move(message)});
  }
  return std::make_unique<PostgresqlConnection>(conn);
}

}  // namespace dispatchd::store::internal
