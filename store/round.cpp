#include "store/round.h"

#include <utility>

#include "store/database.h"

namespace dispatchd::store {

Round::Round(Database& db, Post post) : m_db(db), m_post(std::move(post)) { m_db.attach_round(this); }

Round::~Round() {
  commit();
  m_db.attach_round(nullptr);
}

std::expected<void, std::string> Round::open() {
  if (m_open) return {};
  if (auto ok = m_db.exec("BEGIN IMMEDIATE"); !ok) return ok;
  m_open = true;
  m_post([self = std::weak_ptr<Round*>(m_self)] {
    if (auto alive = self.lock()) (*alive)->commit();
  });
  return {};
}

void Round::after_commit(std::function<void(bool)> then) {
  if (auto ok = open(); !ok) {
    // Could not even begin: nothing of this step is stored.
    m_post([then = std::move(then)] { then(false); });
    return;
  }
  m_waiters.push_back(std::move(then));
}

void Round::commit() {
  if (!m_open) return;
  m_open = false;
  auto waiters = std::exchange(m_waiters, {});
  const bool ok = m_db.exec("COMMIT").has_value();
  if (!ok) (void)m_db.exec("ROLLBACK");
  ++m_stats.commits;
  if (!ok) ++m_stats.failed_commits;
  for (auto& then : waiters) then(ok);
}

}  // namespace dispatchd::store

namespace dispatchd::store {

void after_commit(Database& db, std::function<void(bool)> then) {
  if (auto* round = db.round()) return round->after_commit(std::move(then));
  then(true);
}

}  // namespace dispatchd::store
