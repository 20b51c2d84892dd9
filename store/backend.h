#pragma once
// The two engines the store runs on. SQLite is the embedded default (a file path);
// PostgreSQL serves several dispatchd instances (docs/architecture.md).
// The `database` setting names the engine by its form (common/database_kind.h).

#include <string_view>

#include "common/database_kind.h"

namespace dispatchd::store {

enum class Backend { sqlite, postgresql };

constexpr std::string_view to_string(Backend backend) {
  return backend == Backend::postgresql ? "postgresql" : "sqlite";
}

constexpr Backend backend_of(std::string_view target) {
  return database_kind(target) == DatabaseKind::postgresql ? Backend::postgresql : Backend::sqlite;
}

}  // namespace dispatchd::store
