#pragma once
// The fake's response bodies, per dialect. Internal to the fake model server library.

#include <string>

#include "tests/fakes/fake_model_server.h"

namespace dispatchd::fakes {

// Which dialect a request path belongs to (unknown for anything else).
Dialect route(std::string_view path);

// The JSON body answering `request` with `reply` (a success or the dialect's error shape).
// `serial` numbers the response ids.
std::string reply_body(Dialect dialect, const FakeReply& reply, const ReceivedRequest& request, std::size_t serial);

}  // namespace dispatchd::fakes
