#pragma once
// The channel contract suite: what connectors/channel.h promises of every channel, checked
// the same way against each one through a harness (its channel, its fake provider, its
// loop). A channel's test file defines its harness and one test case that runs the suite:
//
//   TEST_CASE("mail channel: the channel contract", "[mail][contract]") {
//     test::contract::check_channel_contract([] { return std::make_unique<MailHarness>(); });
//   }
//
// Each section makes a fresh harness (Catch2 runs the test case once per section):
//
//   dedupe       An inbound message delivered twice (a webhook POSTed again, a message a
//                later poll sees again) is one inbox row; on_inbound is called for it, and
//                not again for the copy (nothing new was written).
//   done         For each outcome the harness can provoke (accepted: Sent with a provider
//                id; refused for good: Failed; a rate limit, a refused credential, a refused
//                connection: RetryAfter; the connection dropped after the request left:
//                Unknown; refused before any request: Failed), `done` is called exactly
//                once, on the loop and never from inside send(); done may call send() again.
//   retry        RetryAfter only when nothing left: a refused connection reached no fake
//                (it counts no send) and a refused credential delivered nothing; an answer
//                lost after the request reached the fake is Unknown, never RetryAfter.
//   unknown      The channel never resends an Unknown by itself: the fake counts the send
//                once, and resolve_unknown() either declines (false, `done` left alone) or
//                looks the message up without sending it: Sent when the fake has it, never
//                Sent when it does not.
//   health       A refused credential pauses health() with a reason; the harness's fix
//                (new credentials and reload(), or the end of the channel's probe pause)
//                resumes it, and the next send goes out.
//   destruction  The channel destroyed while the fake holds its send: when the answer
//                comes, `done` is not called but destroyed. stop() instead: the send in
//                flight still answers. The sanitizer build (scripts/test.sh --sanitize)
//                runs this with LeakSanitizer on.
//
// A new channel passes the suite by a harness (class Harness below): it makes the channel
// on a migrated database with its existing fake provider, delivers inbound messages the
// provider's way, scripts the fake's answer to the next send, counts what the fake
// received and delivered, and answers or drops everything its fake holds before it is
// destroyed (no leak for LeakSanitizer to find). HTTP channels put
// tests/connectors/fault_transport.h between the channel and the real transport for the
// faults only the network makes (a refused connection, an answer lost, an answer held).
// Tests a channel passes its own way (WhatsApp's signatures, Gmail's history cursor) stay
// in its own test files.

#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "connectors/channel.h"
#include "store/outbox.h"

namespace dispatchd::test::contract {

// What the fake does with the next send request.
enum class Answer {
  accept,              // takes the message: Sent{its id}
  refuse,              // refuses it for good (an invalid recipient, a bad request): Failed
  rate_limit,          // says to come back later: RetryAfter
  refuse_credential,   // refuses our credential: RetryAfter, health() paused
  refuse_connection,   // never sees it (the connection is refused): RetryAfter
  drop_after_request,  // takes the message, then the connection drops before the answer: Unknown
  hold,                // takes the request and keeps the answer until release_held()
};

std::string_view to_string(Answer answer);

class Harness {
 public:
  virtual ~Harness() = default;

  // The channel under test, made by the harness's constructor (ready to send and to take
  // inbound messages); null after destroy_channel().
  virtual connectors::Channel* channel() = 0;
  // Destroys the channel, leaving whatever it had in flight at the fake and on the loop.
  virtual void destroy_channel() = 0;
  // The loop the channel runs on (ChannelDeps::post, the transport's callbacks).
  virtual boost::asio::io_context& io() = 0;

  // Inbound message `n` (n >= 1; each from a counterpart of its own) reaches the channel the
  // provider's way; returns once the channel has stored it.
  virtual void deliver(int n) = 0;
  // The same message reaches the channel again (Meta redelivering a webhook, a poll that
  // sees it again); returns once the channel has dealt with it.
  virtual void redeliver(int n) = 0;
  // Rows in the inbox table.
  virtual std::int64_t inbox_rows() = 0;
  // Calls of ChannelDeps::on_inbound so far.
  virtual int inbound_pokes() const = 0;

  // An outbox row (committed 'sending', as the pump hands it over) replying to delivered
  // message `n`, with `idempotency_key`.
  virtual store::OutboxItem reply_to(int n, const std::string& idempotency_key) = 0;
  // An outbox row the channel refuses before any request (a reply it cannot build).
  virtual store::OutboxItem unsendable(const std::string& idempotency_key) = 0;
  // The fake's answer to the next send request (accept when not scripted).
  virtual void script_next_send(Answer answer) = 0;
  // Send requests that reached the fake, whatever it answered.
  virtual std::size_t sends_received() = 0;
  // Messages the fake took for delivery (also those whose answer was lost or is held).
  virtual std::size_t messages_delivered() = 0;
  // Sends whose answer the fake holds (Answer::hold).
  virtual std::size_t sends_held() = 0;
  // Hands the held answers (accepted) to the channel's transport, through the loop.
  virtual void release_held() = 0;
  // After Answer::refuse_credential: the credential fixed the channel's way (a new one
  // and reload(), or the end of a pause that probes it again).
  virtual void restore_credential() = 0;

  // Runs the loop until `done()` holds (throws after a minute: a hang, not a timing check).
  void run_until(const std::function<bool()>& done);
  // Runs the loop for `how_long`: time for a stray call to show.
  void run_for(std::chrono::milliseconds how_long);
};

// The ChannelDeps of a polling channel's harness: posts to `io`, the wall clock, on_inbound
// counted in `pokes`, timers cut to at most `tick` (a poll every tick).
connectors::ChannelDeps polling_deps(boost::asio::io_context& io, store::Database& db, net::Transport& transport,
                                     int& pokes, std::chrono::milliseconds tick);

using MakeHarness = std::function<std::unique_ptr<Harness>()>;

// Runs the sections above, each on a harness of its own from `make`. Call it from one
// TEST_CASE per channel.
void check_channel_contract(const MakeHarness& make);

}  // namespace dispatchd::test::contract
