#pragma once
// Whether a turn waits for its files before the model is asked (media.wait_s; docs/media.md,
// "The agent waits for a file"). Pure: the files as the store lists them, and now.
//
// A file still `pending` (its download not final), or kept with its transcript still to come
// (media.transcription), holds the turn until it is final, but never longer than `bound`
// after the file was recorded: past that the model is asked anyway and told what is missing.
// Any other state is final: the file is there, or is not and never will be. A bound of 0
// never waits.

#include <chrono>
#include <optional>
#include <vector>

#include "store/media.h"

namespace dispatchd::agent {

// The files' states when the model is asked, and whether they keep the turn waiting.
// nullopt: ask now. Otherwise the time to ask at the latest (the earliest pending file's
// recording + bound); the turn is asked sooner when its files are final (Agent::media_settled).
std::optional<store::Time> media_wait_until(const std::vector<store::MediaRow>& files, store::Time now,
                                            std::chrono::seconds bound);

}  // namespace dispatchd::agent
