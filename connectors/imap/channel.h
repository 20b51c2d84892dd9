#pragma once
// Any mailbox behind the channel seam (connectors/channel.h): mail read over IMAP
// (client.h), replies sent over SMTP submission (smtp.h), decoded and built by
// connectors/email/. Several mailboxes, each with a name; the store's channel is "imap" for
// all of them, and a message's provider id starts with its mailbox's name.
//
// Threads: each mailbox has two workers (internal/worker.h), one for inbound (its IMAP
// connection waits in IDLE) and one for sends (SMTP, and IMAP for the Sent folder), so that
// a send never waits behind an IDLE. The workers only make the blocking calls; everything
// else (deciding, decoding, the store) runs on the loop, as in every channel.
//
// Poll (one at a time per mailbox):
//   lock       several instances on one database: the holder of the mailbox's lock polls it
//              (store::try_own_mailbox on "imap:<name>"); the others ask again each interval
//   cursor     poll_cursors ("imap", name) = "<UIDVALIDITY>/<last UID>[/<resync end>]"; none: the first
//              start takes the mailbox's UIDNEXT (mail from now on is answered)
//   fetch      EXAMINE, UID SEARCH from the cursor, then each message's raw bytes, at most 50
//              messages (64 MiB) a batch; a batch and the cursor after it are stored in ONE
//              transaction (a crash repeats the batch; nothing is skipped); nothing new: no
//              database write
//   resync     the mailbox's UIDVALIDITY is not the cursor's (a rebuilt or restored mailbox):
//              every UID is void, so the newest max_resync_messages are fetched again (the
//              cursor carries the window's end until it is read) and stored, but for those
//              dated before the first start (never answered, as at the first start); the
//              dedupe key (below) stores each message once
//   flag       once the batch is durable, handled_flag is set on its messages (best effort)
//   wait       IDLE until the server reports new mail, at most poll_interval; a server
//              without IDLE is polled every poll_interval
// A message's dedupe key (inbox provider_message_id) is "<name>:<Message-ID>", or
// "<name>:sha256:<digest of the raw bytes>" without a Message-ID: it survives a UIDVALIDITY
// change (two messages with one Message-ID are one message, as mail clients treat them).
// The inbox row as Gmail's (sender = Reply-To or From, the model's text, the loop-prevention
// type, raw bytes); conversation = the thread's first Message-ID (References, In-Reply-To).
// With ChannelDeps::keep_media, each attachment that is a part of its own is one of the
// message's files (attachment.h: named by mailbox, UIDVALIDITY, UID and IMAP section), which
// fetch_media() downloads on the mailbox's send worker (UID FETCH uid BODY[section]).
// Errors: connection, timeout and a busy server back off (2 s doubling to 5 min); refused
// credentials or a certificate that does not verify pause the mailbox (no polls, sends wait,
// health() says why) until reload() reads the credentials again.
//
// Send: the reply built from the original by email::build_reply, our Message-ID from the
// idempotency key and a digest of the original's id (keys repeat across databases; the Sent
// folder a lookup searches does not), over SMTP to the recipient, then (sent_copy "append") appended to the
// Sent folder with \Seen (a failed append is logged: the mail left).
//   SMTP's answer                           outcome
//   accepted                                Sent{our Message-ID}
//   4xx, no connection                      RetryAfter{backoff}
//   5xx, an address that cannot be sent     Failed
//   credentials or certificate refused      RetryAfter{60 s}, the mailbox paused
//   no answer after the whole message       Unknown: resolved by the lookup below
// resolve_unknown(): our Message-ID searched in the Sent folder: found is Sent. Not found:
// with sent_copy "server" (the server files what it sends: Gmail, Microsoft 365) twice,
// unknown_recheck apart, is RetryAfter (it did not leave); with "append" or "none" we file
// only what the server accepted, so absence proves nothing: Unknown (staff decide).

#include <chrono>
#include <cstddef>
#include <expected>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "connectors/channel.h"
#include "connectors/imap/settings.h"

namespace dispatchd::imap {

inline constexpr std::string_view k_channel_name = "imap";

enum class SentCopy {
  append,  // we append what the server accepted to the Sent folder
  server,  // the server files it itself (a lookup there proves a send)
  none,    // nobody files it
};

struct MailboxSettings {
  std::string name;     // [a-z0-9_-], the key under connectors.imap.mailboxes
  std::string address;  // ours: own mail, the replies' From, our Message-IDs' domain
  ServerSettings imap;
  ServerSettings smtp;
  std::string folder = "INBOX";
  std::string sent_folder = "Sent";
  SentCopy sent_copy = SentCopy::append;
  std::string handled_flag = "$Dispatchd";  // "" for none
  std::chrono::milliseconds poll_interval{60'000};
  std::size_t max_resync_messages = 500;
  std::chrono::milliseconds unknown_recheck{60'000};
};

struct ChannelSettings {
  std::vector<MailboxSettings> mailboxes;
  // reload() calls it for fresh credentials (a changed password); null keeps them. A
  // mailbox is matched by name; one added or removed takes a restart.
  std::function<std::expected<std::vector<MailboxSettings>, std::string>()> reread;
};

class ImapChannel final : public connectors::Channel {
 public:
  // Starts polling every mailbox at once (deps.after is required).
  ImapChannel(connectors::ChannelDeps deps, ChannelSettings settings);
  // Ends what the workers wait on (an IDLE, a fetch, a send in flight) and joins them, in
  // about a second at most; a send's `done` is destroyed uncalled (channel.h).
  ~ImapChannel() override;
  ImapChannel(const ImapChannel&) = delete;
  ImapChannel& operator=(const ImapChannel&) = delete;

  std::string_view name() const override { return k_channel_name; }
  void send(const store::OutboxItem& item, connectors::SendDone done) override;
  bool resolve_unknown(const store::OutboxItem& item, connectors::SendDone& done) override;
  connectors::Health health() const override;
  connectors::WebhookEndpoint* webhook() override { return nullptr; }
  void stop() override;
  void reload() override;
  const connectors::PollCounters* poll_counters() const override;
  bool fetch_media(const connectors::MediaFetch& fetch, connectors::MediaChunk& chunk,
                   connectors::MediaFetchDone& done) override;

  struct State;  // opaque; public only for the .cpp's callbacks

 private:
  std::shared_ptr<State> m_state;
};

}  // namespace dispatchd::imap
