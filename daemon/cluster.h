#pragma once
// This instance's side of several instances on one PostgreSQL database (store/instances.h):
// its heartbeat, the takeover of dead instances' work, and its share of the deployment's
// model concurrency. On SQLite (one instance), and while the database is out of reach, a
// tick does nothing.
//
// An instance another one took over (its heartbeat was later than dead_after) exits at once,
// as a crash would: whatever it still holds in memory may be decided or sent by the taker
// too, and its next start (systemd restarts it) begins afresh.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "llm/limiter.h"
#include "store/database.h"

namespace dispatchd::daemon {

struct ClusterSettings {
  std::string worker;                        // this instance's id (instance.id)
  std::chrono::seconds dead_after{30};       // cluster.dead_after_s
  std::size_t max_concurrency = 1;           // llm.max_concurrency, for the whole deployment
  std::vector<std::string> lookup_channels;  // whose interrupted sends are looked up
};

class ClusterMember {
 public:
  // `work_handed_back` runs when a takeover handed messages back to be decided.
  ClusterMember(store::Database& db, ClusterSettings settings, llm::Limiter& limiter,
                std::function<void()> work_handed_back);

  // Once a second on the event loop (`ticks` counts them); acts six times per dead_after, so
  // a slow round or two does not make an instance dead.
  void tick(std::int64_t ticks, std::chrono::sys_seconds now);

 private:
  store::Database& m_db;
  ClusterSettings m_settings;
  llm::Limiter& m_limiter;
  std::function<void()> m_work_handed_back;
};

}  // namespace dispatchd::daemon
