#pragma once
// Which engine a `database` setting names, by its form: a postgresql:// (or postgres://) URI
// is PostgreSQL, anything else a SQLite file path. Here, not in store/, because the
// configuration is read before anything runs and depends on common/ alone; the store maps it
// to its Backend (store/backend.h).

#include <string_view>

namespace dispatchd {

enum class DatabaseKind { sqlite, postgresql };

constexpr DatabaseKind database_kind(std::string_view target) {
  return target.starts_with("postgresql://") || target.starts_with("postgres://") ? DatabaseKind::postgresql
                                                                                  : DatabaseKind::sqlite;
}

}  // namespace dispatchd
