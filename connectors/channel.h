#pragma once
// The seam between the daemon and a messaging channel: what every channel does, each in
// its provider's way, and what the daemon then does for all of them alike.
//
//   inbound   The channel turns its provider's events into InboundEvents: messages, each
//             with its dedupe key (channel, provider_message_id: a redelivered or
//             re-polled message is stored once) and the channel's message type, and
//             delivery reports about what we sent. store_inbound() writes them in one
//             transaction, and the channel calls ChannelDeps::on_inbound, the agent's
//             poke: a polling channel once they are durable (store::after_commit), the
//             webhook one (WhatsApp) at once, for the agent to take them in their round.
//   outbound  send(item, done) -> SendOutcome. The daemon's outbox pump
//             (daemon/outbox_pump.h) takes the channel's approved rows (store::begin_send
//             with name()), makes their 'sending' mark durable, calls send(), and writes
//             the outcome it gets:
//               Sent{provider id}       complete_send  'sent'
//               RetryAfter{after, why}  retry_send     'approved' again; the channel's
//                                                      rows wait `after` before the next send
//               Failed{why, because}    fail_send      'failed', a send_failed escalation;
//                                                      window_closed when `because` says
//                                                      the reply window had closed
//               Unknown{why}            unknown_send   'unknown', a delivery_unknown
//                                                      escalation; never sent again
//             RetryAfter only when the request certainly did not reach the provider or
//             the provider said to come back (a rate limit, a refused credential). What
//             may have been delivered (a timeout after the request left, an unreadable
//             2xx) is Unknown: resending it could send twice.
//   unknown   resolve_unknown(item, done): a channel that can look up whether a send
//             arrived answers Sent, RetryAfter (it certainly did not) or Unknown (still
//             cannot tell, escalated); one that cannot returns false and the pump
//             escalates at once.
//   health    health(): whether sending is paused and why (the provider refused our
//             credentials), for /readyz, the status line and /metrics.
//   webhook   webhook(): the channel's HTTP endpoint when its provider pushes events
//             (null when it polls). The daemon's listener hands it the raw request and
//             writes back the answer, through the small structs below: no Beast type
//             here.
//
// Every channel passes the contract suite, tests/connectors/channel_contract.h.
//
// Threading: everything runs on the daemon's event loop thread, like the store. `done`
// (SendDone) is called exactly once per send() and per accepted resolve_unknown(), on the
// loop, and never from inside the call that received it (a channel that refuses before
// any I/O posts its answer through ChannelDeps::post), so the pump may re-enter send()
// from it. When a channel is destroyed with a send in flight, `done` may be destroyed
// uncalled; the row stays 'sending' and becomes 'unknown' at the next start.
//
// The channels:
//   WhatsApp (connectors/whatsapp/channel.h): Meta pushes webhooks to the listener
//     (webhook(): GET verification handshake, POST signed events, stored by a group
//     commit and answered 200 once durable); sends go to the Graph API over
//     net::Transport, after the 24-hour window check (a closed window is Failed); a
//     refused access token is RetryAfter(60 s) with health paused, so the next send
//     after the pause probes it; Graph cannot be asked whether a message left, so
//     resolve_unknown() returns false and an unknown send is a delivery_unknown
//     escalation, that message's final outcome.
//   Gmail (connectors/gmail/channel.h): no webhook (webhook() is null): the channel
//     polls users.history.list on its own timer (connectors.gmail.poll_interval_s) and
//     stores each poll's messages with store_inbound() in one transaction; sends are
//     users.messages.send with our own Message-ID (from the idempotency key), and
//     resolve_unknown() looks that Message-ID up in the sent mail: found is Sent,
//     absent (twice, a minute apart) is RetryAfter, so only a lookup that itself fails
//     is escalated. A row a crash left in 'sending' goes through resolve_unknown() too
//     (the outbox pump asks at start; store::recover_sending leaves Gmail's rows alone).
//   IMAP (connectors/imap/channel.h): no webhook: each configured mailbox is read over IMAP
//     on worker threads (IDLE, polling where the server lacks it) and its messages stored
//     with the mailbox's cursor in one transaction; sends go over SMTP submission with our
//     own Message-ID, and resolve_unknown() looks it up in the Sent folder.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "common/reply_window.h"
#include "net/http.h"
#include "store/database.h"
#include "store/error.h"
#include "store/inbox.h"
#include "store/outbox.h"

namespace dispatchd::connectors {

// ---- outbound ---------------------------------------------------------------------------

// The provider accepted the message; its id is what delivery reports refer to.
struct Sent {
  std::string provider_message_id;
};
// It did not reach the provider, or the provider asked us to come back: send it again
// after `after` (the channel's backoff, the provider's Retry-After).
struct RetryAfter {
  std::chrono::milliseconds after{0};
  std::string why;
};
// Refused for good (an invalid recipient, a closed reply window): staff take it over.
// `because` window_closed: only a template reaches the counterpart now (before the call,
// or the provider said so).
struct Failed {
  std::string why;
  store::SendFailure because = store::SendFailure::refused;
};
// It may or may not have been delivered: never sent again by itself.
struct Unknown {
  std::string why;
};

using SendOutcome = std::variant<Sent, RetryAfter, Failed, Unknown>;
using SendDone = std::move_only_function<void(SendOutcome)>;

struct Health {
  bool paused = false;  // sending is paused: the pump's next send after the pause probes
  std::string reason;   // why, for /readyz and the log (e.g. "the access token was refused")
};

// ---- inbound ----------------------------------------------------------------------------

// A channel's events, ready for the store: messages (channel and provider_message_id are
// the dedupe key; type is the channel's own, "" for none) and delivery reports.
struct InboundEvents {
  std::vector<store::InboundMessage> messages;
  std::vector<store::DeliveryReport> reports;
};

struct StoredEvents {
  std::vector<std::string> new_ids;  // provider ids of the messages stored now (not the redelivered), in order
  std::int64_t duplicates = 0;       // messages already stored
};

// Writes `events` in one transaction (a savepoint when one is open, e.g. the daemon's
// round): every message and report, or none. The error names what could not be stored.
[[nodiscard]] store::Result<StoredEvents> store_inbound(store::Database& db, const InboundEvents& events,
                                                        store::Instant now);

// ---- webhooks ---------------------------------------------------------------------------

// A request to a channel's webhook as the daemon's listener read it. Views into the
// listener's request: valid during handle() only.
struct WebhookRequest {
  std::string_view method;
  std::string_view query;                                        // after '?', undecoded
  std::span<const std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string_view body;                                         // the raw bytes as received

  std::optional<std::string_view> header(std::string_view lower_name) const;
};

struct WebhookResponse {
  int status = 200;
  std::string body;  // text/plain; charset=utf-8
  std::vector<std::pair<std::string, std::string>> headers;
};

using WebhookReply = std::move_only_function<void(WebhookResponse)>;

// What a webhook endpoint counted since the process started (not stored: Prometheus takes
// a restart's reset of a counter in its stride).
struct WebhookCounters {
  std::int64_t webhooks = 0;        // POSTs received, whatever became of them
  std::int64_t accepted = 0;        // answered 200 after the commit
  std::int64_t bad_signatures = 0;  // 401
  std::int64_t malformed = 0;       // 400/413: signed, but not a webhook the channel can read
  std::int64_t not_stored = 0;      // 500: the commit failed; the provider delivers again
  std::int64_t messages_stored = 0;
  std::int64_t duplicates = 0;             // redelivered messages, stored once
  std::int64_t read_receipts_dropped = 0;  // beyond the backlog of read receipts not yet sent (0 without receipts)
  std::int64_t rounds_read_ahead = 0;      // rounds read ahead before storing (ChannelDeps::read_ahead)
};

class WebhookEndpoint {
 public:
  virtual ~WebhookEndpoint() = default;
  // The path the listener routes here, e.g. "/webhooks/whatsapp" (any method).
  virtual std::string_view path() const = 0;
  // Answers through `reply` exactly once, on the loop: at once (a refusal, a handshake;
  // then from inside this call) or once the events are durable.
  virtual void handle(const WebhookRequest& request, WebhookReply reply) = 0;
  virtual const WebhookCounters& counters() const = 0;
};

// ---- media ------------------------------------------------------------------------------

// One file's download, as the daemon's media fetcher (daemon/media_fetcher.h) asks for it.
struct MediaFetch {
  std::string provider_ref;    // store::MediaRow's: the channel's handle of the file
  std::int64_t max_bytes = 0;  // the file's cap: a provider that states a larger size is too_large at once
  std::chrono::milliseconds timeout{120'000};  // the whole download
};

// How a download ended. `retry` is anything that may work later (a transport error, a
// provider's 429 or 5xx, a refused credential); `expired` the provider no longer has the
// file; `refused` it never will (a malformed handle, a download URL the token may not go
// to); `too_large` the provider stated a size over max_bytes; `stopped` the receiver said
// stop (its own cap, a write that failed): the receiver knows why.
enum class MediaFetchStatus { complete, retry, expired, refused, too_large, stopped };

struct MediaFetchResult {
  MediaFetchStatus status = MediaFetchStatus::complete;
  std::string why;                           // one line for the trail; "" when complete
  std::chrono::milliseconds retry_after{0};  // retry: the provider's Retry-After, 0 when none
  std::string content_type;                  // complete: the type the provider declared for the bytes
  std::string sha256;  // complete: the digest the provider declared, lower-case hex ("" when none)
};

// Receives the bytes in order, as they arrive; false stops the download (`stopped`).
using MediaChunk = std::function<bool(std::string_view chunk)>;
using MediaFetchDone = std::move_only_function<void(MediaFetchResult)>;

// ---- the channel ------------------------------------------------------------------------

// Runs `f` later on the loop's thread, after what is already queued.
using Post = std::function<void(std::move_only_function<void()>)>;

// Runs `f` on the loop's thread once `delay` has passed (a polling channel's timer).
using After = std::function<void(std::chrono::milliseconds delay, std::move_only_function<void()> f)>;

// What a channel implementation gets from the daemon.
// Reads `keys` ahead off the loop (store/read_ahead.h: the events with their text and raw
// payload left out), then calls `then` on the loop with the blocks the reads took from
// storage (common/thread_reads.h; 0 when they failed or could not run): reading ahead only
// spares the loop disk reads, it never decides anything.
using ReadAhead = std::function<void(InboundEvents keys, std::move_only_function<void(std::int64_t blocks)> then)>;

struct ChannelDeps {
  Post post;
  store::Database& db;
  net::Transport& transport;
  // The wall clock to the millisecond: a message's arrival (store::Instant) times bursts.
  std::function<store::Instant()> now;
  // The agent's poke: new inbox rows are written (durable; or in the open round, and then
  // anything the agent writes about them commits with them or after them, and what it took
  // in a round whose COMMIT fails it abandons).
  std::function<void()> on_inbound;
  After after = {};  // null for a channel that keeps no timer
  // Null: events go straight to the store (tools, most tests, PostgreSQL). WhatsApp reads a
  // round ahead while storing has lately read from the disk (connectors/read_ahead_gate.h).
  ReadAhead read_ahead = {};
  // media.enabled: the channel gives each message's files (store::InboundMessage::media) to
  // be fetched and kept; false: it gives none (its messages are stored as before).
  bool keep_media = false;
};

// What a polling channel counted since the process started, for /metrics.
struct PollCounters {
  std::int64_t polls = 0;                   // polls that completed (idle ones included)
  std::int64_t poll_failures = 0;           // polls cut by an error (retried after a backoff)
  std::int64_t messages_stored = 0;         // new inbox rows
  std::int64_t duplicates = 0;              // messages seen again, stored once
  std::int64_t undecodable = 0;             // stored raw, escalated
  std::int64_t full_syncs = 0;              // the history cursor was too old: listed instead
  std::optional<store::Time> last_success;  // the end of the last completed poll: the lag is now - this
};

class Channel {
 public:
  virtual ~Channel() = default;

  // The channel as the store names it (inbox.channel): "whatsapp", "gmail", "imap".
  virtual std::string_view name() const = 0;

  // Sends one outbox row already committed 'sending'; `done` gets the outcome (contract
  // above). `item` is read during the call only.
  virtual void send(const store::OutboxItem& item, SendDone done) = 0;

  // For an item whose send came back Unknown: true when the channel took `done` and will
  // look up whether the message arrived (answering through it as send() does); false,
  // leaving `done` alone, when the channel cannot tell (the pump then escalates).
  virtual bool resolve_unknown(const store::OutboxItem& item, SendDone& done) = 0;

  virtual Health health() const = 0;

  // The HTTP endpoint the provider pushes events to; null for a polling channel.
  virtual WebhookEndpoint* webhook() = 0;

  // Starts nothing new (sends in flight still answer); for shutdown.
  virtual void stop() = 0;

  // SIGHUP: re-reads what the channel read at start that may have changed (credentials)
  // and resumes a channel paused by a refused credential. Nothing by default: a channel
  // that reads its credential only at start (WhatsApp) resumes by its next send's probe.
  virtual void reload() {}

  // A polling channel's counters; null for a channel that does not poll.
  virtual const PollCounters* poll_counters() const { return nullptr; }

  // The agent has started on a turn of this channel's messages: `provider_message_id` is
  // its latest message's, and `answering` says whether a reply may follow (the model is
  // asked) or the message is decided by rule. A channel whose provider shows this (WhatsApp:
  // read and typing) does so, best effort: nothing waits for it and nothing is retried.
  // Nothing by default.
  virtual void working_on(std::string_view /*provider_message_id*/, bool /*answering*/) {}

  // Whether a free-form message (a text, not a template) may be sent to `counterpart` at
  // `now` (common/reply_window.h); nullopt for a channel without such a window (Gmail),
  // the default. Reads the store on the loop; an error reading it is nullopt (no window
  // known: the send's own check still applies).
  virtual std::optional<ReplyWindow> reply_window(const std::string& /*counterpart*/, store::Time /*now*/) {
    return std::nullopt;
  }

  // Downloads one of this channel's files (store/media.h: a MediaRef the channel gave with
  // a message): the bytes to `chunk`, then the outcome to `done`, exactly once, on the loop
  // and never from inside this call. False, leaving both alone, for a channel that keeps no
  // files (the default): its rows are then recorded unfetchable.
  virtual bool fetch_media(const MediaFetch& /*fetch*/, MediaChunk& /*chunk*/, MediaFetchDone& /*done*/) {
    return false;
  }
};

}  // namespace dispatchd::connectors
