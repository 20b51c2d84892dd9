#include "llm/router.h"

namespace dispatchd::llm {

std::size_t pick_route(const std::vector<bool>& closed, std::optional<std::size_t> preferred) {
  if (preferred && *preferred < closed.size() && closed[*preferred]) return *preferred;
  for (std::size_t i = 0; i < closed.size(); ++i)
    if (closed[i]) return i;
  return 0;  // every breaker open: the primary's holds the call
}

struct RouterProvider::Shared : std::enable_shared_from_this<Shared> {
  std::vector<Route> routes;
  std::vector<std::int64_t> routed;

  // Whether a route other than `except` admits a call now.
  bool admitted_elsewhere(std::size_t except) const {
    for (std::size_t i = 0; i < routes.size(); ++i)
      if (i != except && routes[i].breaker->admits()) return true;
    return false;
  }

  // `tried`: the routes that handed this call back; they are not picked again.
  void send(CompletionRequest request, CompletionCallback done, std::vector<bool> tried) {
    std::vector<bool> closed;
    std::optional<std::size_t> preferred;
    for (std::size_t i = 0; i < routes.size(); ++i) {
      closed.push_back(!tried[i] && routes[i].breaker->admits());
      if (request.prefer && *request.prefer == routes[i].answers) preferred = i;
    }
    const auto route = pick_route(closed, preferred);
    ++routed[route];
    if (routes.size() == 1) return routes[route].provider->complete(std::move(request), std::move(done));
    // Kept for a hand-back: the breaker ends the call at once, and it goes to another route.
    auto again = request;
    routes[route].provider->complete(
        std::move(request), [weak = weak_from_this(), route, again = std::move(again), tried = std::move(tried),
                             done = std::move(done)](CompletionResult result) mutable {
          const bool handed_back = !result && result.error().error_class == ErrorClass::circuit_open;
          auto self = weak.lock();
          if (!handed_back || !self || !self->admitted_elsewhere(route)) return done(std::move(result));
          tried[route] = true;
          self->send(std::move(again), std::move(done), std::move(tried));
        });
  }
};

RouterProvider::RouterProvider(std::vector<Route> routes) : m_shared(std::make_shared<Shared>()) {
  m_shared->routes = std::move(routes);
  m_shared->routed.resize(m_shared->routes.size());
  if (m_shared->routes.size() < 2) return;
  for (std::size_t i = 0; i < m_shared->routes.size(); ++i)
    m_shared->routes[i].breaker->set_elsewhere([weak = std::weak_ptr<Shared>(m_shared), i] {
      const auto self = weak.lock();
      return self && self->admitted_elsewhere(i);
    });
}

RouterProvider::~RouterProvider() = default;

void RouterProvider::complete(CompletionRequest request, CompletionCallback done) {
  m_shared->send(std::move(request), std::move(done), std::vector<bool>(m_shared->routes.size()));
}

const std::string& RouterProvider::name() const { return m_shared->routes.front().provider->name(); }
const std::string& RouterProvider::model() const { return m_shared->routes.front().provider->model(); }

std::vector<std::pair<ProviderModel, BreakerStats>> RouterProvider::stats() const {
  std::vector<std::pair<ProviderModel, BreakerStats>> out;
  for (const auto& r : m_shared->routes) out.emplace_back(r.answers, r.breaker->stats());
  return out;
}

std::vector<std::int64_t> RouterProvider::routed() const { return m_shared->routed; }

}  // namespace dispatchd::llm
