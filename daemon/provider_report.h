#pragma once
// The model provider's state as the daemon reports it (its breaker, llm/breaker_provider.h):
// the note in /readyz's body and GET /api/provider for the staff page's header. The breaker is
// this instance's own: each instance reports its own.

#include <optional>
#include <string>

#include "llm/breaker_provider.h"

namespace dispatchd::daemon {

// "llm openai failing: breaker open for 42 s, 3 call(s) waiting" while the breaker is open;
// nullopt while it is closed or unknown.
std::optional<std::string> provider_note(const std::string& provider, const std::optional<llm::BreakerStats>& stats);

// GET /api/provider's body: {"provider", "state": "answering"|"failing", "open_for_s": N|null,
// "waiting": N, "text": "..."|null}; text is what the page shows while it is failing.
std::string provider_json(const std::string& provider, const std::optional<llm::BreakerStats>& stats);

}  // namespace dispatchd::daemon
