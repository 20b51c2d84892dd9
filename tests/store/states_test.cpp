#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>
#include <regex>
#include <set>
#include <string>

#include "store/backend.h"
#include "store/migrations.h"
#include "store/send_pricing.h"
#include "store/states.h"
#include "store/tools/replay.h"
#include "tests/test_util.h"

using namespace dispatchd;

namespace {

// The schema's single source on `backend`: every shipped migration of `folder` (the live
// schema's, or replay's scratch schema in replay/), in order.
std::string schema(store::Backend backend, const std::string& folder = "migrations") {
  auto migrations = store::load_migrations(test::source_path(folder), backend);
  REQUIRE(migrations);
  std::string sql;
  for (const auto& m : *migrations) sql += m.sql + "\n";
  return sql;
}

std::set<std::string> quoted_values(const std::string& list) {
  std::set<std::string> values;
  const std::regex quoted(R"('([^']*)')");
  for (auto it = std::sregex_iterator(list.begin(), list.end(), quoted); it != std::sregex_iterator(); ++it)
    values.insert((*it)[1]);
  return values;
}

// The values the last definition of `table`'s CHECK (column IN (...)) allows: the enums' SQL
// text must be exactly what the database accepts and the views show. The last definition is
// the table's last CREATE TABLE (SQLite rebuilds a table as <table>_rebuilt, then renames
// it) or, if later, PostgreSQL's ALTER TABLE ... ADD CONSTRAINT ... CHECK.
std::set<std::string> allowed(const std::string& sql, const std::string& table, const std::string& column) {
  const auto first = sql.rfind("CREATE TABLE " + table + " (");
  const auto rebuilt = sql.rfind("CREATE TABLE " + table + "_rebuilt (");
  REQUIRE((first != std::string::npos || rebuilt != std::string::npos));
  const auto begin = first == std::string::npos     ? rebuilt
                     : rebuilt == std::string::npos ? first
                                                    : std::max(first, rebuilt);
  const std::regex altered("ALTER TABLE " + table + R"( ADD CONSTRAINT \w+ CHECK \()" + column +
                           R"(\s+IN\s*\(([^)]*)\)\))");
  std::optional<std::smatch> last_alter;
  for (auto it = std::sregex_iterator(sql.begin(), sql.end(), altered); it != std::sregex_iterator(); ++it)
    last_alter = *it;
  if (last_alter && static_cast<std::size_t>(last_alter->position(0)) > begin) return quoted_values((*last_alter)[1]);
  const std::string body = sql.substr(begin, sql.find(");", begin) - begin);
  const std::regex check("CHECK \\(" + column + R"(\s+IN\s*\(([^)]*)\))");
  std::smatch match;
  REQUIRE(std::regex_search(body, match, check));
  return quoted_values(match[1]);
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

TEST_CASE("states: every enum's SQL text is exactly what the schema's CHECK allows, on both engines", "[store]") {
  for (const auto backend : {store::Backend::sqlite, store::Backend::postgresql}) {
    INFO(store::to_string(backend));
    const std::string sql = schema(backend);
    CHECK(names<store::Verdict>() == allowed(sql, "attempts", "verdict"));
    CHECK(names<store::ActionStatus>() == allowed(sql, "actions", "status"));
    CHECK(names<store::EscalationReason>() == allowed(sql, "escalations", "reason"));
    CHECK(names<store::EscalationStatus>() == allowed(sql, "escalations", "status"));
    CHECK(names<store::ToolKind>() == allowed(sql, "tool_calls", "kind"));
    CHECK(names<store::ToolOutcome>() == allowed(sql, "tool_calls", "outcome"));
    CHECK(names<store::PricingCategory>() == allowed(sql, "send_pricing", "category"));
    CHECK(names<store::PricingModel>() == allowed(sql, "send_pricing", "pricing_model"));
    CHECK(names<store::PricingType>() == allowed(sql, "send_pricing", "pricing_type"));
    CHECK(names<store::Outcome>() == allowed(sql, "inbox", "outcome"));
    CHECK(names<store::InboxState>() == allowed(sql, "inbox", "state"));
    CHECK(names<store::MediaKind>() == allowed(sql, "media", "kind"));
    CHECK(names<store::MediaState>() == allowed(sql, "media", "state"));
    // Added by ALTER TABLE (migration 0038): its CHECK is on the added column.
    std::smatch added;
    REQUIRE(std::regex_search(
        sql, added, std::regex(R"(ADD COLUMN transcript_state [^;]*CHECK \(transcript_state IN \(([^)]*)\)\))")));
    CHECK(names<store::TranscriptState>() == quoted_values(added[1]));
  }
}

TEST_CASE("states: replay's decision kinds and progress are what the scratch schema's CHECK allows", "[store]") {
  for (const auto backend : {store::Backend::sqlite, store::Backend::postgresql}) {
    INFO(store::to_string(backend));
    const std::string sql = schema(backend, "migrations/replay");
    CHECK(names<store::DecisionKind>() == allowed(sql, "replay_progress", "old_kind"));
    CHECK(names<store::ProgressStatus>() == allowed(sql, "replay_progress", "status"));
  }
}

TEST_CASE("states: a delivery status reads back from its text, any other text is other", "[store]") {
  names<store::DeliveryStatus>();
  CHECK(store::from_sql<store::DeliveryStatus>("sent") == store::DeliveryStatus::sent);
  CHECK_FALSE(store::from_sql<store::DeliveryStatus>("deleted"));
}

namespace {

// The first column's `code` values of the rows (not the header) of the table under `heading`
// in a docs page.
std::set<std::string> documented(const std::string& page, const std::string& heading) {
  const std::string text = test::read_file(test::source_path(page));
  const auto at = text.find("\n" + heading + "\n");
  REQUIRE(at != std::string::npos);
  const auto rows = text.find("\n|---", at);
  REQUIRE(rows != std::string::npos);
  const auto end = text.find("\n## ", at + 1);
  const std::string section = text.substr(rows + 1, end == std::string::npos ? std::string::npos : end - rows - 1);
  std::set<std::string> out;
  const std::regex row(R"(\n\| `([a-z_]+)` \|)");
  for (auto it = std::sregex_iterator(section.begin(), section.end(), row); it != std::sregex_iterator(); ++it)
    out.insert((*it)[1]);
  return out;
}

}  // namespace

// The audit trail has no CHECK list (a newer version may add kinds an older one must still
// list): its contract is docs/sql.md's table, one row a kind.
TEST_CASE("states: the audit kinds are exactly docs/sql.md's table of audit event kinds", "[store]") {
  CHECK(names<store::AuditKind>() == documented("docs/sql.md", "## Audit event kinds"));
}

TEST_CASE("states: a resolution reads back from its text, a dismissal's note is none", "[store]") {
  CHECK(names<store::Resolution>() == std::set<std::string>{"approved", "edited", "replied"});
  CHECK_FALSE(store::from_sql<store::Resolution>("not for us"));
}
