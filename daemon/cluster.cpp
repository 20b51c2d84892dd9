#include "daemon/cluster.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "store/instances.h"

namespace dispatchd::daemon {

ClusterMember::ClusterMember(store::Database& db, ClusterSettings settings, llm::Limiter& limiter,
                             std::function<void()> work_handed_back)
    : m_db(db), m_settings(std::move(settings)), m_limiter(limiter), m_work_handed_back(std::move(work_handed_back)) {}

void ClusterMember::tick(std::int64_t ticks, std::chrono::sys_seconds now) {
  if (m_db.backend() != store::Backend::postgresql || m_db.unreachable()) return;
  const auto dead_after = m_settings.dead_after;
  if (ticks % std::max<std::int64_t>(1, dead_after.count() / 6) != 0) return;
  const std::string& worker = m_settings.worker;
  auto alive = store::heartbeat(m_db, worker, now);
  if (!alive) {
    spdlog::warn("cluster: heartbeat not stored: {}", alive.error().message);
    return;
  }
  if (!*alive) {
    spdlog::critical("cluster: instance {} was taken over (no heartbeat for {} s): exiting", worker,
                     dead_after.count());
    spdlog::default_logger()->flush();
    std::_Exit(1);
  }
  if (auto taken = store::take_over_dead(m_db, worker, now, dead_after, m_settings.lookup_channels); !taken) {
    spdlog::warn("cluster: cannot take over dead instances: {}", taken.error().message);
  } else if (!taken->instances.empty()) {
    for (const auto& dead : taken->instances) spdlog::warn("cluster: took over the work of dead instance {}", dead);
    spdlog::warn("cluster: {} send(s) made delivery_unknown, {} to look up, {} message(s) handed back",
                 taken->work.unknown_actions.size(), taken->work.to_resolve.size(), taken->work.released_leases);
    m_work_handed_back();
  }
  const auto limit = static_cast<std::int64_t>(m_settings.max_concurrency);
  if (auto live = store::live_instances(m_db, now, dead_after); live && *live > 0) {
    const auto share = static_cast<std::size_t>(store::instance_share(limit, *live));
    if (share != m_limiter.limit()) {
      spdlog::info("cluster: {} live instance(s): this one calls the model at most {} at a time (of {})", *live, share,
                   limit);
      m_limiter.set_limit(share);
    }
  }
}

}  // namespace dispatchd::daemon
