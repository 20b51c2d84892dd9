#pragma once
// The model providers' state as the daemon reports it (their breakers, llm/breaker_provider.h;
// the primary first, then llm.fallbacks): the note in /readyz's body and GET /api/provider for
// the staff page's header. The breakers are this instance's own: each instance reports its own.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "llm/breaker_provider.h"
#include "llm/provider.h"

namespace dispatchd::daemon {

// Each provider and model with its breaker's stats, the primary first (RouterProvider::stats).
using ProviderStates = std::vector<std::pair<llm::ProviderModel, llm::BreakerStats>>;

// "llm openai/gpt-4o failing: breaker open for 42 s, 3 call(s) waiting" for each provider whose
// breaker is open, joined by "; "; nullopt while every one answers.
std::optional<std::string> provider_note(const ProviderStates& states);

// GET /api/provider's body: {"state", "providers": [{"provider", "model", "state":
// "answering"|"failing", "open_for_s": N|null, "waiting": N}], "text": "..."|null}. The top
// "state" is "answering" (the primary answers), "fallback" (it fails, a fallback answers) or
// "failing" (none answers: messages wait); text is the line the page shows unless answering.
std::string provider_json(const ProviderStates& states);

}  // namespace dispatchd::daemon
