#pragma once
// Fallback providers (llm.fallbacks): each call goes to the first provider, in order (the
// primary, then the fallbacks), whose breaker admits it (llm/breaker.h): closed, or open with
// its probe due, so that a provider routed around is still probed and comes back when it
// answers (a failed probe's call is retried by the retries, then routed to the next one). When
// no breaker admits it, to the primary, whose breaker holds the call until it closes or gives
// up. A call that reaches a breaker after it opened (it waited for the route's concurrency
// slot meanwhile) is not held there while another route admits it: the breaker hands it back
// at once (BreakerProvider::set_elsewhere) and it goes to that route. A re-ask
// (CompletionRequest::prefer) goes to the provider and model whose answer it quotes while that
// one's breaker admits it, so the feedback is read by the model that wrote the output.
//
// The catalog, the validator, the policy, the re-ask budget and the audit are the agent's and
// do not change with the provider: only who answers does, and each attempt records it
// (CallInfo). The daemon stacks it inside the retries, one route per provider:
//   RetryingProvider(RouterProvider({LimitedProvider(BreakerProvider(make_provider(...))), ...}))
// so each HTTP attempt is routed anew (a retry after the primary opened goes to a fallback).
//
// Thread-safety: the event loop's thread only.

#include <memory>
#include <vector>

#include "llm/breaker_provider.h"
#include "llm/provider.h"

namespace dispatchd::llm {

struct Route {
  std::unique_ptr<Provider> provider;  // the route's whole stack (its limiter, its breaker)
  BreakerProvider* breaker;            // inside `provider`; REQUIRES: non-null
  ProviderModel answers;               // its provider and model, as CallInfo names them
};

// The route a call takes, by the breakers' states: a pure function a table tests.
// `closed[i]`: route i's breaker admits a call (BreakerProvider::admits). `preferred`: the
// route whose answer a re-ask quotes, if any.
std::size_t pick_route(const std::vector<bool>& closed, std::optional<std::size_t> preferred);

class RouterProvider final : public Provider {
 public:
  // REQUIRES: at least one route (the primary first). Sets each route's breaker's elsewhere.
  explicit RouterProvider(std::vector<Route> routes);
  ~RouterProvider() override;
  RouterProvider(const RouterProvider&) = delete;
  RouterProvider& operator=(const RouterProvider&) = delete;

  void complete(CompletionRequest request, CompletionCallback done) override;
  // The primary's.
  const std::string& name() const override;
  const std::string& model() const override;

  // Each route's provider and model and its breaker's stats, in order.
  std::vector<std::pair<ProviderModel, BreakerStats>> stats() const;
  // Calls sent to each route since start, in order (a call handed back and sent on counts
  // at both).
  std::vector<std::int64_t> routed() const;

  struct Shared;

 private:
  std::shared_ptr<Shared> m_shared;  // the routes; callbacks hold it weakly
};

}  // namespace dispatchd::llm
