#pragma once
// Gmail behind the channel seam (connectors/channel.h): OAuth2 (oauth.h, client.h), the
// Gmail API (api.h), MIME decoding (email.h) and reply building (reply.h), with the store,
// the net/ transport and the clock. No webhook: the channel polls on its own timer.
//
// Poll (every poll_interval; one at a time):
//   profile      once: our address (own mail, From of replies, the Message-ID domain)
//   no cursor    the first start: the mailbox's current historyId becomes the cursor (one
//                write); with backfill_days, mail of that window is listed and stored first
//   cursor       users.history.list from it (messageAdded, labelId = label, every page).
//                Nothing new: no database write. New messages: each messages.get?format=raw,
//                decoded, then stored with the new cursor in ONE transaction (a crash
//                repeats the poll; the inbox's unique (channel, Gmail id) stores once)
//   404          the cursor is too old: a full sync lists at most max_sync_messages
//                (messages.list after the first start, minus the backfill window; older mail
//                is never answered), stores them with a fresh historyId as the cursor
// A message's inbox row: sender = the counterpart (Reply-To, else From), conversation =
// Gmail threadId, raw_payload = the RFC 822 bytes as received, text = subject,
// attachments (listed, never their content) and the body with quoted history trimmed;
// type = why loop prevention would ignore it (own, bounce, auto_reply, list, no_reply,
// the agent's type rules decide) or "undecodable" (stored raw, escalated), else "email".
// With ChannelDeps::keep_media, each attachment that is a part of its own is also one of the
// message's files (attachment.h: named by the Gmail id and the part's partId), which
// fetch_media() downloads with messages.get?format=full and messages.attachments.get.
// Errors: a rate limit waits its Retry-After; 5xx and transport errors back off
// (2 s doubling to 5 min); a refresh token refused (invalid_grant / invalid_client)
// pauses the channel: no polls, sends wait, health() says why, one log line; reload()
// re-reads the credentials and resumes.
//
// Send: the reply built from the original (stored_inbound: Subject, Message-ID,
// References) with our Message-ID from the outbox idempotency key, users.messages.send in
// the original's thread; the original then gets handled_label (best effort).
//   Gmail's answer                        outcome
//   the sent message                      Sent{Gmail id}
//   unreachable (never reached Google)    RetryAfter{backoff}
//   rate limited                          RetryAfter{Retry-After, else 30 s}
//   token refused / paused                RetryAfter{60 s}
//   5xx, timeout, unreadable 2xx          Unknown: resolved by the lookup below
//   other 4xx, a reply that cannot be built   Failed
// resolve_unknown(): searches rfc822msgid:<our id> (anywhere, sent mail included): found
// is Sent; not found on two searches unknown_recheck apart is RetryAfter (sent again: the
// search proves it did not leave, and a resend carries the same Message-ID); a search
// that fails is Unknown (delivery_unknown, staff decide).

#include <chrono>
#include <cstddef>
#include <expected>
#include <functional>
#include <memory>
#include <string>

#include "connectors/channel.h"
#include "connectors/gmail/oauth.h"

namespace dispatchd::gmail {

inline constexpr std::string_view k_channel_name = "gmail";

struct ChannelSettings {
  std::string api_base_url;  // "https://gmail.googleapis.com"; /gmail/v1/users/me/... is appended
  OAuthCredentials credentials;
  std::chrono::seconds poll_interval{60};
  std::string label = "INBOX";
  int backfill_days = 0;
  std::string handled_label;  // "" for none
  std::chrono::milliseconds unknown_recheck{60'000};
  std::size_t max_sync_messages = 500;
  // reload() calls it for fresh credentials (a rotated refresh token); null keeps them.
  std::function<std::expected<OAuthCredentials, std::string>()> reread_credentials;
};

class GmailChannel final : public connectors::Channel {
 public:
  // Starts polling at once (deps.after is required).
  GmailChannel(connectors::ChannelDeps deps, ChannelSettings settings);
  ~GmailChannel() override;
  GmailChannel(const GmailChannel&) = delete;
  GmailChannel& operator=(const GmailChannel&) = delete;

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

}  // namespace dispatchd::gmail
