#include "store/cursor.h"

#include "store/internal/sql.h"

namespace dispatchd::store {

Result<std::optional<Cursor>> read_cursor(Database& db, const std::string& channel, const std::string& mailbox) {
  auto read = Query::prepare(db, "SELECT cursor, started_at FROM poll_cursors WHERE channel = ? AND mailbox = ?");
  if (!read) return std::unexpected(read.error());
  read->bind(1, channel).bind(2, mailbox);
  auto row = read->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return std::optional<Cursor>();
  const auto started = parse_time(read->text(1));
  if (!started)
    return std::unexpected(Error{ErrorKind::corrupt, "poll_cursors.started_at is not a time: " + read->text(1)});
  return std::optional<Cursor>(Cursor{read->text(0), *started});
}

Result<void> write_cursor(Database& db, const std::string& channel, const std::string& mailbox,
                          const std::string& value, Time now) {
  auto write = Query::prepare(db,
                              "INSERT INTO poll_cursors(channel, mailbox, cursor, started_at, updated_at)"
                              " VALUES (?1, ?2, ?3, ?4, ?4) ON CONFLICT (channel, mailbox)"
                              " DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at");
  if (!write) return std::unexpected(write.error());
  write->bind(1, channel).bind(2, mailbox).bind(3, value).bind(4, format_time(now));
  return write->run();
}

}  // namespace dispatchd::store
