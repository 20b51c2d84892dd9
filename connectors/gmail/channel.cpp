#include "connectors/gmail/channel.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "common/backoff.h"
#include "common/handler_timing.h"
#include "common/interactive.h"
#include "connectors/email/email.h"
#include "connectors/email/inbound.h"
#include "connectors/email/internal/text.h"
#include "connectors/email/reply.h"
#include "connectors/gmail/api.h"
#include "connectors/gmail/attachment.h"
#include "connectors/gmail/client.h"
#include "connectors/gmail/decisions.h"
#include "connectors/gmail/raw_message.h"
#include "store/cursor.h"
#include "store/instances.h"
#include "store/round.h"
#include "store/transaction.h"

namespace dispatchd::gmail {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

constexpr auto k_paused_send_retry = 60s;
constexpr std::size_t k_batch_messages = 50;         // per transaction and in memory at once
constexpr std::size_t k_batch_bytes = 64u << 20;     // of raw mail (Gmail's limit is 35 MB a message)
constexpr Backoff k_unready_send_backoff{5s, 5min};  // as decisions.h: a profile that cannot be read yet
constexpr std::size_t k_inline_piece = 64u << 10;    // an inline body handed to the receiver a piece at a time
constexpr std::size_t k_json_slack = 64u << 10;      // the JSON around an attachment's base64url

using connectors::MediaFetchResult;
using connectors::MediaFetchStatus;

MediaFetchResult media_ended(MediaFetchStatus status, std::string why) {
  return MediaFetchResult{status, std::move(why), {}, {}, {}};
}

// One attachment's download (attachment.h): its part looked up, then its bytes streamed.
struct MediaDownload {
  connectors::MediaFetch fetch;
  connectors::MediaChunk chunk;
  connectors::MediaFetchDone done;
  std::chrono::steady_clock::time_point deadline;
  std::shared_ptr<AttachmentData> reader;  // the latest attempt's (a 401 makes the request again)
  bool stopped = false;                    // the receiver said stop
  bool finished = false;

  void finish(MediaFetchResult result) {
    if (finished) return;
    finished = true;
    done(std::move(result));
  }

  milliseconds left() const {
    return std::max(std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now()),
                    milliseconds(1000));
  }
};

std::string domain_of(std::string_view address) {
  const auto at = address.rfind('@');
  return at == std::string_view::npos ? std::string("dispatchd.invalid") : std::string(address.substr(at + 1));
}

}  // namespace

struct GmailChannel::State : std::enable_shared_from_this<State> {
  connectors::ChannelDeps deps;
  ChannelSettings settings;
  TokenSource tokens;
  Client client;
  bool stopped = false;
  bool polling = false;
  bool poll_scheduled = false;
  int poll_failures_in_a_row = 0;
  int send_failures_in_a_row = 0;
  std::optional<std::string> paused;  // why: a credential refused for good
  std::string address;                // ours, from the profile ("" until read)
  std::optional<std::string> handled_label_id;
  connectors::PollCounters counters;

  State(connectors::ChannelDeps d, ChannelSettings s)
      : deps(std::move(d)),
        settings(std::move(s)),
        tokens(
            deps.transport, settings.credentials, [] { return std::chrono::steady_clock::now(); }, deps.post),
        client(deps.transport, tokens) {}

  using Weak = std::weak_ptr<State>;

  // ---- calls -------------------------------------------------------------------------
  // An authorized call; `then` gets the transport's result, or nothing when the token
  // could not be had (then the channel is paused or the failure handled here).
  template <typename Then>
  void call(std::function<net::HttpRequest(std::string_view)> make, Then then,
            std::move_only_function<void(const OAuthError&)> on_token_error) {
    client.call(std::move(make),
                [weak = weak_from_this(), then = std::move(then), on_token_error = std::move(on_token_error)](
                    std::expected<net::HttpResult, OAuthError> result) mutable {
                  auto self = weak.lock();
                  if (!self) return;
                  if (!result) {
                    self->on_oauth_error(result.error());
                    return on_token_error(result.error());
                  }
                  then(*self, std::move(*result));
                });
  }

  void on_oauth_error(const OAuthError& error) {
    if (!permanent(error.kind) || paused) return;
    paused = "the Gmail credentials were refused (" + error.message +
             "): set a new refresh token and reload (systemctl reload dispatchd)";
    spdlog::error("gmail: paused: {}", *paused);
  }

  // Our address, read once; `then` runs when it is known, `failed` otherwise.
  void with_profile(std::move_only_function<void(State&)> then, std::move_only_function<void(std::string)> failed) {
    if (!address.empty()) return then(*this);
    auto shared_failed = std::make_shared<std::move_only_function<void(std::string)>>(std::move(failed));
    call([base = settings.api_base_url](std::string_view token) { return profile_request(base, token); },
         [then = std::move(then), shared_failed](State& self, net::HttpResult result) mutable {
           auto profile = read_profile(result);
           if (!profile) return (*shared_failed)("reading the profile: " + describe(profile.error()));
           self.address = email::detail::lower_ascii(profile->email_address);
           then(self);
         },
         [shared_failed](const OAuthError& e) { (*shared_failed)("the access token: " + e.message); });
  }

  // ---- polling -----------------------------------------------------------------------
  void schedule_poll(milliseconds delay) {
    if (stopped || poll_scheduled) return;
    poll_scheduled = true;
    deps.after(delay, [weak = weak_from_this()] {
      auto self = weak.lock();
      if (!self) return;
      self->poll_scheduled = false;
      self->poll();
    });
  }

  void poll() {
    if (stopped || polling || paused) return;
    polling = true;
    with_profile([](State& self) { self.poll_from_cursor(); },
                 [weak = weak_from_this()](std::string why) {
                   if (auto self = weak.lock()) self->poll_failed(why, std::nullopt);
                 });
  }

  void poll_from_cursor() {
    // Several instances on one database: only the holder of the mailbox's lock polls it; the
    // others ask again each interval and take over when its session ends (store/instances.h).
    auto owner = store::try_own_mailbox(deps.db, address);
    if (!owner) return poll_failed("taking the mailbox's lock: " + owner.error().message, std::nullopt);
    if (!*owner) {
      polling = false;
      return schedule_poll(milliseconds(settings.poll_interval));
    }
    auto cursor = store::read_cursor(deps.db, "gmail", address);
    if (!cursor) return poll_failed("reading the cursor: " + cursor.error().message, std::nullopt);
    if (!*cursor) return first_start();
    history(**cursor, (*cursor)->value, "", {});
  }

  // The first start: the mailbox's current position; older mail only within backfill_days.
  void first_start() {
    call([base = settings.api_base_url](std::string_view token) { return profile_request(base, token); },
         [](State& self, net::HttpResult result) {
           auto profile = read_profile(result);
           if (!profile) return self.poll_failed("reading the profile", profile.error());
           if (self.settings.backfill_days > 0) {
             const auto since = store::whole_seconds(self.deps.now()) - std::chrono::days(self.settings.backfill_days);
             spdlog::info("gmail: first start for {}: answering mail since {} (backfill_days {})", self.address,
                          store::format_time(since), self.settings.backfill_days);
             return self.list_sync(since, profile->history_id, "", {});
           }
           spdlog::info("gmail: first start for {}: mail from now on is answered (historyId {})", self.address,
                        profile->history_id);
           self.store_poll({}, profile->history_id);
         },
         [this](const OAuthError& e) { poll_failed("the access token: " + e.message, std::nullopt); });
  }

  void history(store::Cursor cursor, std::string start, std::string page_token, std::vector<std::string> ids) {
    call([base = settings.api_base_url, start, label = settings.label,
          page_token](std::string_view token) { return history_request(base, token, start, label, page_token); },
         [cursor = std::move(cursor), start, ids = std::move(ids)](State& self, net::HttpResult result) mutable {
           auto page = read_history(result);
           if (!page && page.error().kind == ApiErrorKind::not_found) return self.full_sync(cursor);
           if (!page) return self.poll_failed("history.list", page.error());
           for (auto& ref : page->added) {
             if (std::ranges::find(ids, ref.id) == ids.end()) ids.push_back(std::move(ref.id));
           }
           if (!page->next_page_token.empty())
             return self.history(std::move(cursor), start, page->next_page_token, std::move(ids));
           if (ids.empty()) {
             // Idle: no write unless the mailbox moved (labels, deletions): then the cursor follows.
             if (page->history_id.empty() || page->history_id == cursor.value) return self.poll_done();
           }
           self.fetch_new(std::move(ids), page->history_id.empty() ? cursor.value : page->history_id, std::nullopt);
         },
         [this](const OAuthError& e) { poll_failed("the access token: " + e.message, std::nullopt); });
  }

  // The cursor is older than Gmail keeps history: list what came since the first start
  // (minus the backfill window), store it, and carry on from a fresh historyId.
  void full_sync(const store::Cursor& cursor) {
    ++counters.full_syncs;
    const auto since = cursor.started_at - std::chrono::days(settings.backfill_days);
    spdlog::warn("gmail: the history cursor {} is too old; listing the mail since {} instead", cursor.value,
                 store::format_time(since));
    call([base = settings.api_base_url](std::string_view token) { return profile_request(base, token); },
         [since](State& self, net::HttpResult result) {
           auto profile = read_profile(result);
           if (!profile) return self.poll_failed("reading the profile", profile.error());
           self.list_sync(since, profile->history_id, "", {});
         },
         [this](const OAuthError& e) { poll_failed("the access token: " + e.message, std::nullopt); });
  }

  void list_sync(store::Time since, std::string new_cursor, std::string page_token, std::vector<std::string> ids) {
    call(
        [base = settings.api_base_url, since, label = settings.label, page_token](std::string_view token) {
          return list_request(base, token, query_after(since), label, page_token, 100);
        },
        [since, new_cursor = std::move(new_cursor), ids = std::move(ids)](State& self, net::HttpResult result) mutable {
          auto page = read_list(result);
          if (!page) return self.poll_failed("messages.list", page.error());
          for (auto& ref : page->messages) {
            if (ids.size() >= self.settings.max_sync_messages) break;
            if (std::ranges::find(ids, ref.id) == ids.end()) ids.push_back(std::move(ref.id));
          }
          if (!page->next_page_token.empty() && ids.size() < self.settings.max_sync_messages)
            return self.list_sync(since, std::move(new_cursor), page->next_page_token, std::move(ids));
          self.fetch_new(std::move(ids), std::move(new_cursor), since);
        },
        [this](const OAuthError& e) { poll_failed("the access token: " + e.message, std::nullopt); });
  }

  // Gets the messages not stored yet one by one, then stores them with the new cursor.
  // `since`: mail Gmail received before it is left alone (a full sync never answers old
  // mail). Memory stays bounded: after k_batch_messages messages or k_batch_bytes of raw
  // mail the batch is stored WITHOUT moving the cursor and the poll runs again at once; it
  // then skips what is stored, so every batch makes progress.
  void fetch_new(std::vector<std::string> ids, std::string new_cursor, std::optional<store::Time> since) {
    auto fresh = store::not_stored(deps.db, "gmail", ids);
    if (!fresh) return poll_failed("reading the inbox: " + fresh.error().message, std::nullopt);
    fetch(std::move(*fresh), 0, {}, std::move(new_cursor), since);
  }

  void fetch(std::vector<std::string> ids, std::size_t next, connectors::InboundEvents events, std::string new_cursor,
             std::optional<store::Time> since) {
    if (next == ids.size()) return store_poll(std::move(events), new_cursor);
    std::size_t bytes = 0;
    for (const auto& m : events.messages) bytes += m.raw_payload.size();
    if (events.messages.size() >= k_batch_messages || bytes >= k_batch_bytes)
      return store_poll(std::move(events), std::nullopt);
    const std::string id = ids[next];
    call([base = settings.api_base_url, id](std::string_view token) { return get_raw_request(base, token, id); },
         [ids = std::move(ids), next, events = std::move(events), new_cursor = std::move(new_cursor), since](
             State& self, net::HttpResult result) mutable {
           auto body = read_body(result);
           if (!body && body.error().kind == ApiErrorKind::not_found) {
             // Deleted since it was listed: nothing to answer.
             return self.fetch(std::move(ids), next + 1, std::move(events), std::move(new_cursor), since);
           }
           // A message Gmail refuses for good, or answers unreadably, would stop every poll
           // behind it: it is stored as a stand-in and escalated instead (never dropped).
           if (!body && body.error().kind == ApiErrorKind::permanent) {
             events.messages.push_back(self.stand_in(ids[next], describe(body.error())));
             return self.fetch(std::move(ids), next + 1, std::move(events), std::move(new_cursor), since);
           }
           if (!body) return self.poll_failed("messages.get " + ids[next], body.error());
           auto raw = parse_raw_response(*body);
           if (!raw) {
             events.messages.push_back(self.stand_in(ids[next], "an unreadable messages.get answer: " + raw.error()));
             return self.fetch(std::move(ids), next + 1, std::move(events), std::move(new_cursor), since);
           }
           const bool too_old = since && raw->internal_date_ms > 0 &&
                                std::chrono::sys_time<milliseconds>(milliseconds(raw->internal_date_ms)) < *since;
           if (!too_old) events.messages.push_back(self.inbound_of(std::move(*raw)));
           self.fetch(std::move(ids), next + 1, std::move(events), std::move(new_cursor), since);
         },
         [this](const OAuthError& e) { poll_failed("the access token: " + e.message, std::nullopt); });
  }

  // A message that could not be fetched: staff see its Gmail id and why.
  store::InboundMessage stand_in(const std::string& gmail_id, const std::string& why) {
    ++counters.undecodable;
    spdlog::error("gmail: message {} cannot be fetched ({}); stored as undecodable for staff", gmail_id, why);
    store::InboundMessage m;
    m.channel = "gmail";
    m.provider_message_id = gmail_id;
    m.conversation_id = gmail_id;
    m.type = "undecodable";
    m.text = "(an email Gmail did not give us: " + why + ")";
    return m;
  }

  store::InboundMessage inbound_of(RawMessage raw) {
    store::InboundMessage m;
    m.channel = "gmail";
    m.provider_message_id = raw.id;
    m.conversation_id = raw.thread_id;
    const std::string own[] = {address};
    const auto mail = email::decode(raw.bytes, own);
    auto read = email::read_inbound(mail);
    m.sender = std::move(read.sender);
    m.text = std::move(read.text);
    m.type = std::move(read.type);
    if (read.undecodable) ++counters.undecodable;
    if (deps.keep_media && mail) m.media = media_of(*mail, raw.id);
    m.raw_payload = std::move(raw.bytes);
    return m;
  }

  // Stores a poll's messages and moves the cursor to `new_cursor`, in one transaction; with
  // no cursor (a batch of a larger poll) the cursor stays and the poll runs again at once.
  void store_poll(connectors::InboundEvents events, std::optional<std::string> new_cursor) {
    const store::Instant now = deps.now();
    const bool more = !new_cursor;
    auto stored =
        store::transaction<connectors::StoredEvents>(deps.db, [&]() -> store::Result<connectors::StoredEvents> {
          auto result = connectors::store_inbound(deps.db, events, now);
          if (!result) return result;
          if (!new_cursor) return result;
          if (auto moved = store::write_cursor(deps.db, "gmail", address, *new_cursor, store::whole_seconds(now));
              !moved)
            return std::unexpected(moved.error());
          return result;
        });
    if (!stored) return poll_failed("storing the poll: " + stored.error().message, std::nullopt);
    store::after_commit(deps.db, [weak = weak_from_this(), stored = std::move(*stored), more](bool durable) {
      auto self = weak.lock();
      if (!self) return;
      if (!durable) return self->poll_failed("the poll's commit failed; it is repeated", std::nullopt);
      self->counters.messages_stored += static_cast<std::int64_t>(stored.new_ids.size());
      self->counters.duplicates += stored.duplicates;
      if (!stored.new_ids.empty()) {
        spdlog::info("gmail: {} new message(s)", stored.new_ids.size());
        if (self->deps.on_inbound) self->deps.on_inbound();
      }
      self->poll_done(more);
    });
  }

  void poll_done(bool more = false) {
    polling = false;
    poll_failures_in_a_row = 0;
    ++counters.polls;
    counters.last_success = store::whole_seconds(deps.now());
    schedule_poll(more ? milliseconds(0) : milliseconds(settings.poll_interval));
  }

  void poll_failed(const std::string& what, std::optional<ApiError> error) {
    polling = false;
    ++counters.poll_failures;
    if (paused) return;  // resumed by reload()
    ++poll_failures_in_a_row;
    const auto delay = poll_delay(error, poll_failures_in_a_row, settings.poll_interval);
    spdlog::warn("gmail: poll failed: {}{}; next poll in {} ms", what, error ? ": " + describe(*error) : "",
                 delay.count());
    schedule_poll(delay);
  }

  // ---- sending -----------------------------------------------------------------------
  void post(connectors::SendDone done, connectors::SendOutcome outcome) {
    deps.post(common::named_step(
        [done = std::move(done), outcome = std::move(outcome)]() mutable { done(std::move(outcome)); }));
  }

  connectors::SendOutcome no_token(const OAuthError& e) {
    if (!permanent(e.kind)) ++send_failures_in_a_row;
    return token_outcome(e, send_failures_in_a_row);
  }

  void send(const store::OutboxItem& item, connectors::SendDone done) {
    if (stopped) return post(std::move(done), connectors::RetryAfter{k_paused_send_retry, "dispatchd is stopping"});
    if (paused) return post(std::move(done), connectors::RetryAfter{k_paused_send_retry, *paused});
    auto shared = std::make_shared<connectors::SendDone>(std::move(done));
    with_profile(
        [item, shared](State& self) mutable { self.send_reply(item, shared); },
        [weak = weak_from_this(), shared](std::string why) {
          auto self = weak.lock();
          if (!self) return;
          ++self->send_failures_in_a_row;
          (*shared)(connectors::RetryAfter{exponential_backoff(k_unready_send_backoff, self->send_failures_in_a_row),
                                           "cannot send yet: " + why});
        });
  }

  void send_reply(const store::OutboxItem& item, std::shared_ptr<connectors::SendDone> done) {
    auto original = store::stored_inbound(deps.db, item.message_id);
    if (!original) {
      if (original.error().retryable())
        return post(std::move(*done), connectors::RetryAfter{5s, "reading the original: " + original.error().message});
      return post(std::move(*done), connectors::Failed{"reading the original: " + original.error().message});
    }
    email::ReplySpec spec;
    spec.from_address = address;
    spec.to_address = item.recipient;
    spec.body = item.body;
    if (!item.interactive.empty()) {
      // Email has no buttons: the choices go under the text as numbered lines, which the
      // customer answers by writing one (docs/channels.md, "Interactive replies").
      auto choices = interactive::parse_stored(item.interactive);
      if (!choices) return post(std::move(*done), connectors::Failed{"the reply's choices: " + choices.error()});
      spec.body = interactive::as_text(item.body, *choices);
    }
    spec.message_id = email::message_id_for(item.idempotency_key, domain_of(address));
    spec.date = std::chrono::floor<std::chrono::seconds>(deps.now());
    if (auto original_mail = email::decode(original->raw_payload); original_mail) {
      spec.original_subject = original_mail->subject;
      spec.original_message_id = original_mail->message_id;
      spec.original_references = original_mail->references;
    }
    auto raw = email::build_reply(spec);
    if (!raw) return post(std::move(*done), connectors::Failed{"the reply cannot be built: " + raw.error().message});
    call([base = settings.api_base_url, raw = std::move(*raw), thread = original->conversation_id](
             std::string_view token) { return send_request(base, token, raw, thread); },
         [done, original_id = original->provider_message_id](State& self, net::HttpResult result) {
           auto sent = read_sent(result);
           if (sent) {
             self.send_failures_in_a_row = 0;
             (*done)(connectors::Sent{sent->id});
             return self.mark_handled(original_id);
           }
           if (sent.error().kind == ApiErrorKind::unreachable) ++self.send_failures_in_a_row;
           (*done)(send_outcome(sent.error(), self.send_failures_in_a_row));
         },
         [this, done](const OAuthError& e) { (*done)(no_token(e)); });
  }

  void mark_handled(const std::string& gmail_id) {
    if (settings.handled_label.empty()) return;
    if (!handled_label_id) return find_handled_label(gmail_id);
    call(
        [base = settings.api_base_url, gmail_id, label = *handled_label_id](std::string_view token) {
          const std::string labels[] = {label};
          return modify_request(base, token, gmail_id, labels);
        },
        [gmail_id](State&, net::HttpResult result) {
          if (auto ok = read_ok(result); !ok)
            spdlog::warn("gmail: cannot label {} as handled: {}", gmail_id, describe(ok.error()));
        },
        [](const OAuthError&) {});
  }

  void find_handled_label(const std::string& gmail_id) {
    call([base = settings.api_base_url](std::string_view token) { return labels_request(base, token); },
         [gmail_id](State& self, net::HttpResult result) {
           auto labels = read_labels(result);
           if (!labels) return spdlog::warn("gmail: cannot list labels: {}", describe(labels.error()));
           for (const auto& label : *labels) {
             if (label.name == self.settings.handled_label) {
               self.handled_label_id = label.id;
               return self.mark_handled(gmail_id);
             }
           }
           self.create_handled_label(gmail_id);
         },
         [](const OAuthError&) {});
  }

  void create_handled_label(const std::string& gmail_id) {
    call([base = settings.api_base_url,
          name = settings.handled_label](std::string_view token) { return create_label_request(base, token, name); },
         [gmail_id](State& self, net::HttpResult result) {
           auto label = read_label(result);
           if (!label) return spdlog::warn("gmail: cannot create the label: {}", describe(label.error()));
           self.handled_label_id = label->id;
           self.mark_handled(gmail_id);
         },
         [](const OAuthError&) {});
  }

  // ---- files ------------------------------------------------------------------------
  void fetch_media(const AttachmentRef& ref, std::shared_ptr<MediaDownload> d) {
    const int depth = ref.part_id.empty() ? 0 : static_cast<int>(std::ranges::count(ref.part_id, '.')) + 1;
    call([base = settings.api_base_url, id = ref.message_id,
          depth](std::string_view token) { return get_parts_request(base, token, id, depth); },
         [ref, d](State& self, net::HttpResult result) {
           auto part = read_part(result, ref.part_id);
           if (!part) return d->finish(fetch_failure("messages.get", part.error()));
           if (!*part) {
             return d->finish(media_ended(MediaFetchStatus::refused,
                                          "message " + ref.message_id + " has no part \"" + ref.part_id + "\""));
           }
           if ((*part)->size > d->fetch.max_bytes) {
             return d->finish(media_ended(MediaFetchStatus::too_large, "Gmail states " + std::to_string((*part)->size) +
                                                                           " bytes, over the cap of " +
                                                                           std::to_string(d->fetch.max_bytes)));
           }
           if ((*part)->attachment_id.empty()) return hand_inline(std::move(**part), *d);
           self.download_attachment(ref.message_id, std::move(**part), d);
         },
         [d](const OAuthError& e) { d->finish(token_failure(e)); });
  }

  // A body Gmail gave inline: handed over in pieces.
  static void hand_inline(PartBody part, MediaDownload& d) {
    const std::string_view bytes = part.data;
    for (std::size_t at = 0; at < bytes.size(); at += k_inline_piece) {
      if (!d.chunk(bytes.substr(at, k_inline_piece)))
        return d.finish(media_ended(MediaFetchStatus::stopped, "the receiver stopped"));
    }
    d.finish(MediaFetchResult{MediaFetchStatus::complete, {}, {}, std::move(part.mime_type), {}});
  }

  void download_attachment(const std::string& message_id, PartBody part, std::shared_ptr<MediaDownload> d) {
    call(
        [base = settings.api_base_url, message_id, attachment_id = part.attachment_id, d](std::string_view token) {
          auto request = attachment_request(base, token, message_id, attachment_id);
          request.timeout = std::min(request.timeout, d->left());
          // base64url takes 4 characters for 3 bytes: past that and the JSON around it, the file is over the cap.
          request.max_response_bytes = static_cast<std::size_t>(d->fetch.max_bytes) / 3 * 4 + 4 + k_json_slack;
          auto reader = std::make_shared<AttachmentData>([d](std::string_view bytes) {
            if (d->chunk(bytes)) return true;
            d->stopped = true;
            return false;
          });
          d->reader = reader;
          request.on_body = [reader](const net::HttpResponse& head, std::string_view bytes) {
            if (head.status < 200 || head.status > 299) return true;  // an error's body: not the file
            return reader->feed(bytes) == AttachmentData::Fed::more;
          };
          return request;
        },
        [d, type = std::move(part.mime_type)](State&, net::HttpResult result) mutable {
          if (d->stopped) return d->finish(media_ended(MediaFetchStatus::stopped, "the receiver stopped"));
          if (!result && result.error().kind == net::TransportErrorKind::too_large)
            return d->finish(media_ended(MediaFetchStatus::too_large, "the download passed the cap"));
          if (auto ok = read_ok(result); !ok) return d->finish(fetch_failure("messages.attachments.get", ok.error()));
          if (auto read = d->reader ? d->reader->finish() : std::expected<void, std::string>(); !read)
            return d->finish(media_ended(MediaFetchStatus::retry,
                                         "messages.attachments.get: an unreadable answer: " + read.error()));
          d->finish(MediaFetchResult{MediaFetchStatus::complete, {}, {}, std::move(type), {}});
        },
        [d](const OAuthError& e) { d->finish(token_failure(e)); });
  }

  // ---- unknown sends -----------------------------------------------------------------
  void look_up(const store::OutboxItem& item, std::shared_ptr<connectors::SendDone> done, int search) {
    with_profile([key = item.idempotency_key, done, search](State& self) { self.search(key, done, search); },
                 [done](std::string why) { (*done)(connectors::Unknown{"cannot look the send up: " + why}); });
  }

  void search(const std::string& key, std::shared_ptr<connectors::SendDone> done, int search_number) {
    const std::string message_id = email::message_id_for(key, domain_of(address));
    call([base = settings.api_base_url, message_id](
             std::string_view token) { return list_request(base, token, query_message_id(message_id), "", "", 1); },
         [key, done, search_number, message_id](State& self, net::HttpResult result) {
           auto page = read_list(result);
           if (!page) return (*done)(connectors::Unknown{"searching for our Message-ID: " + describe(page.error())});
           if (!page->messages.empty()) {
             spdlog::info("gmail: <{}> is in the mailbox: it was sent", message_id);
             return (*done)(connectors::Sent{page->messages.front().id});
           }
           if (search_number >= 2) {
             spdlog::info("gmail: <{}> is not in the mailbox on two searches: sending it again", message_id);
             return (*done)(connectors::RetryAfter{0ms, "not in the mailbox on two searches " +
                                                            std::to_string(self.settings.unknown_recheck.count()) +
                                                            " ms apart: sent again"});
           }
           // Gmail may index a message just sent a little later: search once more.
           self.deps.after(self.settings.unknown_recheck, [weak = self.weak_from_this(), key, done] {
             if (auto again = weak.lock()) again->search(key, done, 2);
           });
         },
         [done](const OAuthError& e) { (*done)(connectors::Unknown{"cannot look the send up: " + e.message}); });
  }
};

GmailChannel::GmailChannel(connectors::ChannelDeps deps, ChannelSettings settings)
    : m_state(std::make_shared<State>(std::move(deps), std::move(settings))) {
  m_state->schedule_poll(0ms);
}

GmailChannel::~GmailChannel() { m_state->stopped = true; }

void GmailChannel::send(const store::OutboxItem& item, connectors::SendDone done) {
  m_state->send(item, std::move(done));
}

bool GmailChannel::resolve_unknown(const store::OutboxItem& item, connectors::SendDone& done) {
  m_state->look_up(item, std::make_shared<connectors::SendDone>(std::move(done)), 1);
  return true;
}

connectors::Health GmailChannel::health() const {
  if (m_state->paused) return {true, *m_state->paused};
  return {};
}

void GmailChannel::stop() { m_state->stopped = true; }

void GmailChannel::reload() {
  auto& s = *m_state;
  if (!s.settings.reread_credentials) return;
  auto credentials = s.settings.reread_credentials();
  if (!credentials) {
    spdlog::error("gmail: reload: the credentials cannot be read, the old ones stay: {}", credentials.error());
    return;
  }
  s.tokens.reset(std::move(*credentials));
  if (s.paused) {
    spdlog::info("gmail: reload: new credentials; polling again");
    s.paused.reset();
    s.poll_failures_in_a_row = 0;
    s.schedule_poll(0ms);
  }
}

const connectors::PollCounters* GmailChannel::poll_counters() const { return &m_state->counters; }

bool GmailChannel::fetch_media(const connectors::MediaFetch& fetch, connectors::MediaChunk& chunk,
                               connectors::MediaFetchDone& done) {
  auto& s = *m_state;
  auto d = std::make_shared<MediaDownload>(
      MediaDownload{fetch, std::move(chunk), std::move(done), std::chrono::steady_clock::now() + fetch.timeout});
  auto ref = parse_attachment_ref(fetch.provider_ref);
  std::optional<MediaFetchResult> now;
  if (!ref) now = media_ended(MediaFetchStatus::refused, "not a Gmail attachment: \"" + fetch.provider_ref + "\"");
  if (s.paused) now = MediaFetchResult{MediaFetchStatus::retry, *s.paused, k_paused_send_retry, {}, {}};
  if (now) {
    s.deps.post(common::named_step([d, result = std::move(*now)]() mutable { d->finish(std::move(result)); }));
    return true;
  }
  s.fetch_media(*ref, std::move(d));
  return true;
}

}  // namespace dispatchd::gmail
