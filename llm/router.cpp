#include "llm/router.h"

namespace dispatchd::llm {

std::size_t pick_route(const std::vector<bool>& closed, std::optional<std::size_t> preferred) {
  if (preferred && *preferred < closed.size() && closed[*preferred]) return *preferred;
  for (std::size_t i = 0; i < closed.size(); ++i)
    if (closed[i]) return i;
  return 0;  // every breaker open: the primary's holds the call
}

RouterProvider::RouterProvider(std::vector<Route> routes) : m_routes(std::move(routes)), m_routed(m_routes.size()) {}

void RouterProvider::complete(CompletionRequest request, CompletionCallback done) {
  std::vector<bool> closed;
  std::optional<std::size_t> preferred;
  for (std::size_t i = 0; i < m_routes.size(); ++i) {
    closed.push_back(m_routes[i].breaker->admits());
    if (request.prefer && *request.prefer == m_routes[i].answers) preferred = i;
  }
  const auto route = pick_route(closed, preferred);
  ++m_routed[route];
  m_routes[route].provider->complete(std::move(request), std::move(done));
}

const std::string& RouterProvider::name() const { return m_routes.front().provider->name(); }
const std::string& RouterProvider::model() const { return m_routes.front().provider->model(); }

std::vector<std::pair<ProviderModel, BreakerStats>> RouterProvider::stats() const {
  std::vector<std::pair<ProviderModel, BreakerStats>> out;
  for (const auto& r : m_routes) out.emplace_back(r.answers, r.breaker->stats());
  return out;
}

}  // namespace dispatchd::llm
