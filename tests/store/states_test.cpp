#include <catch2/catch.hpp>

#include <algorithm>
#include <regex>
#include <set>
#include <string>

#include "store/migrations.h"
#include "store/send_pricing.h"
#include "store/states.h"
#include "tests/test_util.h"

using namespace dispatchd;

namespace {

// The schema's single source: every shipped migration, in order.
std::string schema() {
  auto migrations = store::load_migrations(test::source_path("migrations"));
  REQUIRE(migrations);
  std::string sql;
  for (const auto& m : *migrations) sql += m.sql + "\n";
  return sql;
}

// The values `CREATE TABLE table (... column ... CHECK (column IN (...)) ...)` allows (its
// last definition): the
// enums' SQL text must be exactly what the database accepts and the views show.
std::set<std::string> allowed(const std::string& sql, const std::string& table, const std::string& column) {
  // The table's last definition: a table SQLite rebuilt (its migration creates <table>_rebuilt,
  // then renames it) is defined again later.
  const auto first = sql.rfind("CREATE TABLE " + table + " (");
  const auto rebuilt = sql.rfind("CREATE TABLE " + table + "_rebuilt (");
  REQUIRE((first != std::string::npos || rebuilt != std::string::npos));
  const auto begin = first == std::string::npos     ? rebuilt
                     : rebuilt == std::string::npos ? first
                                                    : std::max(first, rebuilt);
  const std::string body = sql.substr(begin, sql.find(");", begin) - begin);
  const std::regex check("CHECK \\(" + column + R"(\s+IN\s*\(([^)]*)\))");
  std::smatch match;
  REQUIRE(std::regex_search(body, match, check));
  std::set<std::string> values;
  const std::string list = match[1];
  const std::regex quoted(R"('([^']*)')");
  for (auto it = std::sregex_iterator(list.begin(), list.end(), quoted); it != std::sregex_iterator(); ++it)
    values.insert((*it)[1]);
  return values;
}

template <typename E>
std::set<std::string> names() {
  std::set<std::string> out;
  for (const auto& [value, text] : store::SqlNames<E>::table) {
    out.insert(std::string(text));
    CHECK(store::to_sql(value) == text);
    CHECK(store::from_sql<E>(text) == value);
  }
  CHECK(out.size() == store::SqlNames<E>::table.size());
  return out;
}

}  // namespace

TEST_CASE("states: every enum's SQL text is exactly what the schema's CHECK allows", "[store]") {
  const std::string sql = schema();
  CHECK(names<store::Verdict>() == allowed(sql, "attempts", "verdict"));
  CHECK(names<store::ActionStatus>() == allowed(sql, "actions", "status"));
  CHECK(names<store::EscalationReason>() == allowed(sql, "escalations", "reason"));
  CHECK(names<store::EscalationStatus>() == allowed(sql, "escalations", "status"));
  CHECK(names<store::ToolKind>() == allowed(sql, "tool_calls", "kind"));
  CHECK(names<store::ToolOutcome>() == allowed(sql, "tool_calls", "outcome"));
  CHECK(names<store::PricingCategory>() == allowed(sql, "send_pricing", "category"));
  CHECK(names<store::PricingModel>() == allowed(sql, "send_pricing", "pricing_model"));
  CHECK(names<store::PricingType>() == allowed(sql, "send_pricing", "pricing_type"));
  // 'pending' is the view's name for a message not done yet; no code writes it.
  auto outcomes = allowed(sql, "inbox", "outcome");
  CHECK(outcomes.erase("pending") == 1);
  CHECK(names<store::Outcome>() == outcomes);
}

TEST_CASE("states: a text that is no state is refused, not guessed", "[store]") {
  CHECK_FALSE(store::from_sql<store::ActionStatus>("Sent"));
  CHECK_FALSE(store::from_sql<store::ActionStatus>("sent "));
  CHECK_FALSE(store::from_sql<store::EscalationStatus>(""));
  CHECK_FALSE(store::from_sql<store::Verdict>("ok"));
}
