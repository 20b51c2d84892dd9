#pragma once
// The channels' read-ahead (connectors::ReadAhead, store/read_ahead.h) on a ReadThread of
// its own: the reads run there with the conversation history the agent will read
// (`history`, llm.history_messages), and `then` gets the blocks they read from storage
// (common/thread_reads.h), always on the io_context's thread and never from inside the call
// (also when the thread's queue is full and nothing was read: then 0).

#include <boost/asio/io_context.hpp>
#include <cstddef>

#include "connectors/channel.h"
#include "daemon/read_thread.h"

namespace dispatchd::daemon {

// `thread` and `io` outlive the function returned and every call's `then`.
connectors::ReadAhead read_ahead_on(ReadThread& thread, boost::asio::io_context& io, std::size_t history);

}  // namespace dispatchd::daemon
