#include "connectors/imap/channel.h"

#include <openssl/evp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <utility>

#include "common/backoff.h"
#include "common/handler_timing.h"
#include "common/interactive.h"
#include "connectors/email/email.h"
#include "connectors/email/inbound.h"
#include "connectors/email/reply.h"
#include "connectors/imap/attachment.h"
#include "connectors/imap/client.h"
#include "connectors/imap/internal/worker.h"
#include "connectors/imap/smtp.h"
#include "store/cursor.h"
#include "store/instances.h"
#include "store/round.h"
#include "store/transaction.h"

namespace dispatchd::imap {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

constexpr auto k_paused_send_retry = 60s;
constexpr std::size_t k_imap_batch_messages = 50;      // per transaction and in memory at once
constexpr std::size_t k_imap_batch_bytes = 64u << 20;  // of raw mail
constexpr Backoff k_imap_backoff{2s, 5min};

std::string imap_domain_of(std::string_view address) {
  const auto at = address.rfind('@');
  return at == std::string_view::npos ? std::string("dispatchd.invalid") : std::string(address.substr(at + 1));
}

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr) != 1) return "unavailable";
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < size; ++i) {
    out += k_hex[digest[i] >> 4];
    out += k_hex[digest[i] & 15];
  }
  return out;
}

// "<UIDVALIDITY>/<last UID>", as poll_cursors keeps it; "/<UID>" more while a resync's
// window is read: the newest UID it reads again.
struct UidCursor {
  std::uint32_t uidvalidity = 0;
  std::uint32_t last_uid = 0;
  std::uint32_t resync_until = 0;
};

std::string cursor_text(UidCursor c) {
  std::string text = std::to_string(c.uidvalidity) + "/" + std::to_string(c.last_uid);
  if (c.resync_until > c.last_uid) text += "/" + std::to_string(c.resync_until);
  return text;
}

std::optional<UidCursor> parse_cursor(std::string_view text) {
  UidCursor c;
  std::uint32_t* fields[] = {&c.uidvalidity, &c.last_uid, &c.resync_until};
  std::size_t read = 0;
  while (read < 3) {
    const auto slash = text.find('/');
    const auto field = text.substr(0, slash);
    const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), *fields[read]);
    if (ec != std::errc{} || end != field.data() + field.size()) return std::nullopt;
    ++read;
    if (slash == std::string_view::npos) break;
    text.remove_prefix(slash + 1);
  }
  if (read < 2) return std::nullopt;
  return c;
}

// The first Message-ID of the thread: References' first, else In-Reply-To, else its own.
std::string thread_root(const email::Email& mail) {
  if (!mail.references.empty()) return mail.references.front();
  if (!mail.in_reply_to.empty()) return mail.in_reply_to;
  return mail.message_id;
}

// One message fetched and decoded on the worker, ready for the store; `date` its Date:.
store::InboundMessage inbound_of(const MailboxSettings& box, std::string raw,
                                 std::optional<std::chrono::sys_seconds>& date, bool keep_media,
                                 std::uint32_t uidvalidity, std::uint32_t uid) {
  const std::string own[] = {box.address};
  auto decoded = email::decode(raw, own);
  date = decoded ? decoded->date : std::nullopt;
  auto read = email::read_inbound(decoded);
  store::InboundMessage m;
  m.channel = std::string(k_channel_name);
  const bool has_id = decoded && !decoded->message_id.empty();
  m.provider_message_id = box.name + ":" + (has_id ? decoded->message_id : "sha256:" + sha256_hex(raw));
  m.conversation_id =
      decoded && !thread_root(*decoded).empty() ? box.name + ":" + thread_root(*decoded) : m.provider_message_id;
  m.sender = std::move(read.sender);
  m.text = std::move(read.text);
  m.type = std::move(read.type);
  if (keep_media && decoded) m.media = media_of(*decoded, box.name, uidvalidity, uid);
  m.raw_payload = std::move(raw);
  return m;
}

// What one poll's worker step found: a batch and the cursor after it, or why it stopped.
struct Batch {
  std::vector<store::InboundMessage> messages;
  std::vector<std::uint32_t> uids;  // fetched, for the handled flag
  UidCursor cursor;                 // after this batch
  bool first_start = false;
  bool resync = false;
  bool nothing_new = false;  // the cursor stays where it was: nothing to write
  bool more = false;         // UIDs beyond this batch wait for the next poll, at once
  std::int64_t undecodable = 0;
  std::int64_t before_first_start = 0;  // read again by a resync, dated before the first start: left alone
};

// Blocking, on the inbound worker: the messages after `from` (none: the first start).
// `first_start`: when the mailbox was first read; a resync leaves mail dated before it alone
// (as the first start does: it is never answered).
Result<Batch> fetch_batch(Client& client, const MailboxSettings& box, std::optional<UidCursor> from,
                          std::optional<store::Time> first_start, bool keep_media) {
  auto status = client.examine(box.folder);
  if (!status) return std::unexpected(std::move(status.error()));
  Batch batch;
  if (!from) {
    batch.first_start = true;
    std::uint32_t last = status->uidnext > 0 ? status->uidnext - 1 : 0;
    if (status->uidnext == 0) {
      auto all = client.search_uids_from(box.folder, status->uidvalidity, 1);
      if (!all) return std::unexpected(std::move(all.error()));
      if (!all->empty()) last = all->back();
    }
    batch.cursor = {status->uidvalidity, last};
    return batch;
  }
  std::vector<std::uint32_t> uids;
  if (from->uidvalidity != status->uidvalidity) {
    batch.resync = true;
    auto all = client.search_uids_from(box.folder, status->uidvalidity, 1);
    if (!all) return std::unexpected(std::move(all.error()));
    uids = std::move(*all);
    if (uids.size() > box.max_resync_messages)
      uids.erase(uids.begin(), uids.end() - static_cast<std::ptrdiff_t>(box.max_resync_messages));
    // The cursor starts just before the window, so that the batches after this one go on
    // through it (and never before it).
    const std::uint32_t before = uids.empty() ? (status->uidnext > 0 ? status->uidnext - 1 : 0) : uids.front() - 1;
    batch.cursor = {status->uidvalidity, before, uids.empty() ? 0 : uids.back()};
  } else {
    auto after = client.search_uids_from(box.folder, status->uidvalidity, from->last_uid + 1);
    if (!after) return std::unexpected(std::move(after.error()));
    uids = std::move(*after);
    batch.cursor = *from;
    batch.nothing_new = uids.empty();
  }
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < uids.size(); ++i) {
    if (batch.messages.size() >= k_imap_batch_messages || bytes >= k_imap_batch_bytes) {
      batch.more = true;
      break;
    }
    const std::uint32_t uid = uids[i];
    auto raw = client.fetch_raw(box.folder, status->uidvalidity, uid);
    if (!raw && raw.error().kind == ErrorKind::message_missing) {
      batch.cursor.last_uid = uid;  // expunged since the search: nothing to answer
      continue;
    }
    if (!raw && raw.error().kind == ErrorKind::too_large) {
      // Never dropped: staff see that it came and why it is not here.
      store::InboundMessage m;
      m.channel = std::string(k_channel_name);
      m.provider_message_id = box.name + ":uid:" + std::to_string(status->uidvalidity) + "/" + std::to_string(uid);
      m.conversation_id = m.provider_message_id;
      m.type = "undecodable";
      m.text = "(an email too large to fetch: " + raw.error().message + ")";
      ++batch.undecodable;
      batch.messages.push_back(std::move(m));
      batch.cursor.last_uid = uid;
      continue;
    }
    if (!raw) {
      if (batch.messages.empty()) return std::unexpected(std::move(raw.error()));
      batch.more = true;  // what was fetched is stored; the rest comes with the next poll
      break;
    }
    bytes += raw->size();
    std::optional<std::chrono::sys_seconds> date;
    auto message = inbound_of(box, std::move(*raw), date, keep_media, status->uidvalidity, uid);
    batch.cursor.last_uid = uid;
    const bool in_resync = uid <= batch.cursor.resync_until;
    if (in_resync && first_start && date && *date < *first_start) {
      ++batch.before_first_start;
      continue;
    }
    if (message.type == "undecodable") ++batch.undecodable;
    batch.messages.push_back(std::move(message));
    batch.uids.push_back(uid);
  }
  return batch;
}

bool pauses(ErrorKind kind) { return kind == ErrorKind::auth_refused || kind == ErrorKind::tls_refused; }

// Our Message-ID for a reply: the outbox row's idempotency key and a digest of the original's
// id, so that it is made again alike after a crash, and differs from the replies another
// database sent from this mailbox (keys repeat across databases; the Sent folder does not
// forget), which a lookup must not take for ours.
std::string our_message_id(const store::OutboxItem& item, const store::StoredInbound& original,
                           const MailboxSettings& box) {
  return email::message_id_for(item.idempotency_key + "." + sha256_hex(original.provider_message_id).substr(0, 12),
                               imap_domain_of(box.address));
}

}  // namespace

struct ImapChannel::State : std::enable_shared_from_this<State> {
  // One mailbox. Its clients are used on their worker's thread only; the workers are
  // declared after them, so that they are joined before the clients go.
  struct Box {
    MailboxSettings settings;
    std::unique_ptr<Client> in_client;
    std::unique_ptr<Client> out_client;
    std::unique_ptr<SmtpClient> smtp;
    std::function<void()> interrupt_idle;
    // Every client's interrupter (old ones after a reload too): the destructor ends what the
    // workers wait on, so that joining them takes a second at most.
    std::vector<std::function<void()>> interrupt_all;
    std::unique_ptr<detail::Worker> in;
    std::unique_ptr<detail::Worker> out;
    bool polling = false;
    bool poll_scheduled = false;
    bool idle_unsupported = false;
    int poll_failures_in_a_row = 0;
    int send_failures_in_a_row = 0;
    std::optional<std::string> paused;

    explicit Box(MailboxSettings s)
        : settings(std::move(s)),
          in_client(std::make_unique<Client>(settings.imap)),
          out_client(std::make_unique<Client>(settings.imap)),
          smtp(std::make_unique<SmtpClient>(settings.smtp, imap_domain_of(settings.address))),
          interrupt_idle(in_client->interrupter()),
          interrupt_all{interrupt_idle, out_client->interrupter(), smtp->interrupter()},
          in(std::make_unique<detail::Worker>("imap-in-" + settings.name)),
          out(std::make_unique<detail::Worker>("imap-out-" + settings.name)) {}
    ~Box() {
      for (const auto& interrupt : interrupt_all) interrupt();
      in.reset();
      out.reset();
    }
  };

  connectors::ChannelDeps deps;
  ChannelSettings settings;
  std::vector<std::unique_ptr<Box>> boxes;
  bool stopped = false;
  connectors::PollCounters counters;

  State(connectors::ChannelDeps d, ChannelSettings s) : deps(std::move(d)), settings(std::move(s)) {
    for (const auto& mailbox : settings.mailboxes) boxes.push_back(std::make_unique<Box>(mailbox));
  }

  void pause(Box& box, const std::string& why) {
    if (box.paused) return;
    box.paused = "mailbox " + box.settings.name + ": " + why +
                 ": correct the settings or the credentials and reload (systemctl reload dispatchd)";
    spdlog::error("imap: paused: {}", *box.paused);
  }

  // ---- polling -----------------------------------------------------------------------
  void schedule_poll(Box& box, milliseconds delay) {
    if (stopped || box.poll_scheduled) return;
    box.poll_scheduled = true;
    deps.after(delay, [weak = weak_from_this(), box = &box] {
      auto self = weak.lock();
      if (!self) return;
      box->poll_scheduled = false;
      self->poll(*box);
    });
  }

  void poll(Box& box) {
    if (stopped || box.polling || box.paused) return;
    box.polling = true;
    auto owner = store::try_own_mailbox(deps.db, "imap:" + box.settings.name);
    if (!owner) return poll_failed(box, "taking the mailbox's lock: " + owner.error().message, std::nullopt);
    if (!*owner) {
      box.polling = false;
      return schedule_poll(box, box.settings.poll_interval);
    }
    auto cursor = store::read_cursor(deps.db, std::string(k_channel_name), box.settings.name);
    if (!cursor) return poll_failed(box, "reading the cursor: " + cursor.error().message, std::nullopt);
    std::optional<UidCursor> from;
    std::optional<store::Time> first_start;
    if (*cursor) {
      first_start = (*cursor)->started_at;
      from = parse_cursor((*cursor)->value);
      if (!from)
        spdlog::warn("imap: {}: the cursor \"{}\" cannot be read; starting afresh", box.settings.name,
                     (*cursor)->value);
    }
    box.in->submit([this_box = &box, client = box.in_client.get(), settings = box.settings, from, first_start,
                    weak = weak_from_this(), post = deps.post, keep_media = deps.keep_media]() mutable {
      auto batch = fetch_batch(*client, settings, from, first_start, keep_media);
      post([weak, this_box, batch = std::move(batch)]() mutable {
        if (auto self = weak.lock()) self->fetched(*this_box, std::move(batch));
      });
    });
  }

  // ---- files ------------------------------------------------------------------------
  // attachment.h: the part fetched and decoded on the mailbox's send worker (a poll's IDLE
  // never delays it), its bytes handed over on the loop.
  void fetch_media(const PartRef& ref, const connectors::MediaFetch& fetch, connectors::MediaChunk chunk,
                   connectors::MediaFetchDone done) {
    using connectors::MediaFetchResult;
    using connectors::MediaFetchStatus;
    const auto box = std::ranges::find_if(boxes, [&](const auto& b) { return b->settings.name == ref.mailbox; });
    std::optional<MediaFetchResult> now;
    if (box == boxes.end()) {
      now = MediaFetchResult{MediaFetchStatus::refused, "no mailbox " + ref.mailbox + " is configured", {}, {}, {}};
    } else if ((*box)->paused) {
      now = MediaFetchResult{MediaFetchStatus::retry, *(*box)->paused, std::chrono::seconds(60), {}, {}};
    }
    if (now) {
      deps.post(common::named_step(
          [done = std::move(done), result = std::move(*now)]() mutable { done(std::move(result)); }));
      return;
    }
    // The encoded size the cap allows: base64 takes 4 bytes for 3 and a line break per 76,
    // quoted-printable up to 3 for 1; and some slack.
    const auto cap = static_cast<std::size_t>(fetch.max_bytes);
    const std::size_t encoded = ref.encoding == "base64"             ? cap / 3 * 4 + cap / 38 + 4
                                : ref.encoding == "quoted-printable" ? cap * 3
                                                                     : cap;
    Box& b = **box;
    b.out->submit([weak = weak_from_this(), client = b.out_client.get(), folder = b.settings.folder, ref,
                   limit = encoded + (64u << 10), post = deps.post, chunk = std::move(chunk),
                   done = std::move(done)]() mutable {
      auto part = client->fetch_section(folder, ref.uidvalidity, ref.uid, ref.section, limit);
      MediaFetchResult result;
      std::string bytes;
      if (!part) {
        result = fetch_failure(part.error());
      } else if (auto decoded = decode_transfer(ref.encoding, *part); !decoded) {
        result = MediaFetchResult{MediaFetchStatus::refused, decoded.error(), {}, {}, {}};
      } else {
        bytes = std::move(*decoded);
      }
      post(common::named_step([weak, result = std::move(result), bytes = std::move(bytes), chunk = std::move(chunk),
                               done = std::move(done)]() mutable {
        if (!weak.lock()) return;
        constexpr std::size_t k_piece = 64u << 10;
        for (std::size_t at = 0; result.status == MediaFetchStatus::complete && at < bytes.size(); at += k_piece) {
          if (!chunk(std::string_view(bytes).substr(at, k_piece)))
            result = MediaFetchResult{MediaFetchStatus::stopped, "the receiver stopped", {}, {}, {}};
        }
        done(std::move(result));
      }));
    });
  }

  void fetched(Box& box, Result<Batch> batch) {
    if (!batch) {
      if (pauses(batch.error().kind)) pause(box, batch.error().message);
      return poll_failed(box, "fetching", batch.error());
    }
    // An idle mailbox costs no database write (the IDLE woke for a flag, or its wait ended).
    if (batch->nothing_new) return durable(box, {}, false);
    if (batch->first_start)
      spdlog::info("imap: {}: first start: mail from now on is answered (UIDVALIDITY {}, UID {})", box.settings.name,
                   batch->cursor.uidvalidity, batch->cursor.last_uid);
    if (batch->resync)
      spdlog::warn(
          "imap: {}: the mailbox's UIDVALIDITY changed (now {}): its newest messages are read again, each stored "
          "once ({} in this batch; {} dated before the first start left alone)",
          box.settings.name, batch->cursor.uidvalidity, batch->messages.size(), batch->before_first_start);
    counters.undecodable += batch->undecodable;
    const store::Instant now = deps.now();
    connectors::InboundEvents events;
    events.messages = std::move(batch->messages);
    const std::string cursor = cursor_text(batch->cursor);
    auto stored =
        store::transaction<connectors::StoredEvents>(deps.db, [&]() -> store::Result<connectors::StoredEvents> {
          auto result = connectors::store_inbound(deps.db, events, now);
          if (!result) return result;
          if (auto moved = store::write_cursor(deps.db, std::string(k_channel_name), box.settings.name, cursor,
                                               store::whole_seconds(now));
              !moved)
            return std::unexpected(moved.error());
          return result;
        });
    if (!stored) return poll_failed(box, "storing the poll: " + stored.error().message, std::nullopt);
    store::after_commit(deps.db, [weak = weak_from_this(), box = &box, stored = std::move(*stored),
                                  uids = std::move(batch->uids), more = batch->more](bool durable) mutable {
      auto self = weak.lock();
      if (!self) return;
      if (!durable) return self->poll_failed(*box, "the poll's commit failed; it is repeated", std::nullopt);
      self->counters.messages_stored += static_cast<std::int64_t>(stored.new_ids.size());
      self->counters.duplicates += stored.duplicates;
      if (!stored.new_ids.empty()) {
        spdlog::info("imap: {}: {} new message(s)", box->settings.name, stored.new_ids.size());
        if (self->deps.on_inbound) self->deps.on_inbound();
      }
      self->durable(*box, std::move(uids), more);
    });
  }

  // The batch is durable: flag it, then wait for more (IDLE) or poll again at once.
  void durable(Box& box, std::vector<std::uint32_t> uids, bool more) {
    ++counters.polls;
    box.poll_failures_in_a_row = 0;
    counters.last_success = store::whole_seconds(deps.now());
    const bool idle = !more && !box.idle_unsupported && !stopped;
    box.in->submit([weak = weak_from_this(), this_box = &box, client = box.in_client.get(), settings = box.settings,
                    uids = std::move(uids), idle, post = deps.post]() mutable {
      if (!settings.handled_flag.empty() && !uids.empty()) {
        auto status = client->examine(settings.folder);
        const std::string flags[] = {settings.handled_flag};
        for (std::uint32_t uid : uids) {
          if (!status) break;
          if (auto set = client->add_flags(settings.folder, status->uidvalidity, uid, flags); !set) {
            spdlog::warn("imap: {}: cannot flag UID {} {}: {}", settings.name, uid, settings.handled_flag,
                         set.error().message);
            break;
          }
        }
      }
      std::optional<Result<bool>> woke;
      if (idle) woke = client->idle(settings.folder, settings.poll_interval);
      post([weak, this_box, woke = std::move(woke), more = !idle]() mutable {
        if (auto self = weak.lock()) self->waited(*this_box, std::move(woke), more);
      });
    });
  }

  // After the wait (none: more to fetch, or no IDLE): the next poll.
  void waited(Box& box, std::optional<Result<bool>> woke, bool more) {
    box.polling = false;
    if (woke && !*woke && woke->error().kind == ErrorKind::unsupported) {
      spdlog::info("imap: {}: the server has no IDLE; polling every {} ms", box.settings.name,
                   box.settings.poll_interval.count());
      box.idle_unsupported = true;
    } else if (woke && !*woke) {
      if (pauses(woke->error().kind)) pause(box, woke->error().message);
      return poll_failed(box, "waiting in IDLE", woke->error());
    }
    // IDLE waited already, or more is there: at once; else (no IDLE) the interval.
    schedule_poll(box, more || woke ? 0ms : box.settings.poll_interval);
  }

  void poll_failed(Box& box, const std::string& what, std::optional<Error> error) {
    box.polling = false;
    ++counters.poll_failures;
    if (box.paused) return;  // resumed by reload()
    ++box.poll_failures_in_a_row;
    const auto delay = exponential_backoff(k_imap_backoff, box.poll_failures_in_a_row);
    spdlog::warn("imap: {}: poll failed: {}{}; next poll in {} ms", box.settings.name, what,
                 error ? ": " + std::string(to_string(error->kind)) + ": " + error->message : "", delay.count());
    schedule_poll(box, delay);
  }

  // ---- sending -----------------------------------------------------------------------
  void post(connectors::SendDone done, connectors::SendOutcome outcome) {
    deps.post(common::named_step(
        [done = std::move(done), outcome = std::move(outcome)]() mutable { done(std::move(outcome)); }));
  }

  // The mailbox an outbox row answers from: its original's provider id names it.
  std::expected<std::pair<Box*, store::StoredInbound>, connectors::SendOutcome> mailbox_of(
      const store::OutboxItem& item) {
    auto original = store::stored_inbound(deps.db, item.message_id);
    if (!original) {
      const std::string why = "reading the original: " + original.error().message;
      if (original.error().retryable()) return std::unexpected(connectors::RetryAfter{5s, why});
      return std::unexpected(connectors::Failed{why});
    }
    const auto colon = original->provider_message_id.find(':');
    const std::string name = original->provider_message_id.substr(0, colon);
    for (auto& box : boxes) {
      if (box->settings.name == name) return std::pair{box.get(), std::move(*original)};
    }
    return std::unexpected(connectors::Failed{"the mailbox \"" + name + "\" is no longer configured"});
  }

  void send(const store::OutboxItem& item, connectors::SendDone done) {
    if (stopped) return post(std::move(done), connectors::RetryAfter{k_paused_send_retry, "dispatchd is stopping"});
    auto found = mailbox_of(item);
    if (!found) return post(std::move(done), std::move(found.error()));
    auto& [box, original] = *found;
    if (box->paused) return post(std::move(done), connectors::RetryAfter{k_paused_send_retry, *box->paused});
    email::ReplySpec spec;
    spec.from_address = box->settings.address;
    spec.to_address = item.recipient;
    spec.body = item.body;
    if (!item.interactive.empty()) {
      // Email has no buttons: the choices go under the text as numbered lines.
      auto choices = interactive::parse_stored(item.interactive);
      if (!choices) return post(std::move(done), connectors::Failed{"the reply's choices: " + choices.error()});
      spec.body = interactive::as_text(item.body, *choices);
    }
    spec.message_id = our_message_id(item, original, box->settings);
    spec.date = std::chrono::floor<std::chrono::seconds>(deps.now());
    if (auto mail = email::decode(original.raw_payload); mail) {
      spec.original_subject = mail->subject;
      spec.original_message_id = mail->message_id;
      spec.original_references = mail->references;
    }
    auto raw = email::build_reply(spec);
    if (!raw) return post(std::move(done), connectors::Failed{"the reply cannot be built: " + raw.error().message});
    box->out->submit([weak = weak_from_this(), this_box = box, smtp = box->smtp.get(), client = box->out_client.get(),
                      settings = box->settings, raw = std::move(*raw), to = item.recipient,
                      message_id = spec.message_id, done = std::move(done), post = deps.post]() mutable {
      const std::string recipients[] = {to};
      auto sent = smtp->send(settings.address, recipients, raw);
      if (sent && settings.sent_copy == SentCopy::append) {
        const std::string seen[] = {"\\Seen"};
        if (auto filed = client->append(settings.sent_folder, raw, seen); !filed)
          spdlog::warn("imap: {}: <{}> was sent but not filed in {}: {}", settings.name, message_id,
                       settings.sent_folder, filed.error().message);
      }
      post([weak, this_box, sent = std::move(sent), message_id, done = std::move(done)]() mutable {
        auto self = weak.lock();
        if (!self) return;
        done(self->send_outcome(*this_box, sent, message_id));
      });
    });
  }

  connectors::SendOutcome send_outcome(Box& box, const std::expected<SmtpAccepted, SmtpError>& sent,
                                       const std::string& message_id) {
    if (sent) {
      box.send_failures_in_a_row = 0;
      return connectors::Sent{message_id};
    }
    const SmtpError& e = sent.error();
    const std::string why = "SMTP: " + std::string(to_string(e.kind)) + ": " + e.message;
    switch (e.kind) {
      case SmtpErrorKind::temporary:
        ++box.send_failures_in_a_row;
        return connectors::RetryAfter{exponential_backoff(k_imap_backoff, box.send_failures_in_a_row), why};
      case SmtpErrorKind::auth_refused:
      case SmtpErrorKind::tls_refused: pause(box, why); return connectors::RetryAfter{k_paused_send_retry, why};
      case SmtpErrorKind::rejected:
      case SmtpErrorKind::invalid_argument: return connectors::Failed{why};
      case SmtpErrorKind::unknown: return connectors::Unknown{why};
    }
    return connectors::Unknown{why};
  }

  // ---- unknown sends -----------------------------------------------------------------
  bool look_up(const store::OutboxItem& item, connectors::SendDone& done) {
    auto found = mailbox_of(item);
    if (!found) return false;
    Box* box = found->first;
    search(*box, our_message_id(item, found->second, box->settings),
           std::make_shared<connectors::SendDone>(std::move(done)), 1);
    return true;
  }

  void search(Box& box, std::string message_id, std::shared_ptr<connectors::SendDone> done, int search_number) {
    box.out->submit([weak = weak_from_this(), this_box = &box, client = box.out_client.get(),
                     folder = box.settings.sent_folder, message_id, done, search_number, post = deps.post]() mutable {
      auto found = client->search_message_id(folder, message_id);
      post([weak, this_box, found = std::move(found), message_id, done, search_number]() mutable {
        if (auto self = weak.lock()) self->searched(*this_box, found, message_id, done, search_number);
      });
    });
  }

  void searched(Box& box, const Result<std::vector<std::uint32_t>>& found, const std::string& message_id,
                const std::shared_ptr<connectors::SendDone>& done, int search_number) {
    const std::string& folder = box.settings.sent_folder;
    if (!found)
      return (*done)(
          connectors::Unknown{"searching " + folder + " for <" + message_id + ">: " + found.error().message});
    if (!found->empty()) {
      spdlog::info("imap: {}: <{}> is in {}: it was sent", box.settings.name, message_id, folder);
      return (*done)(connectors::Sent{message_id});
    }
    if (box.settings.sent_copy != SentCopy::server)
      return (*done)(connectors::Unknown{"<" + message_id + "> is not in " + folder +
                                         ", and only what the server accepted is filed there: it may have left"});
    if (search_number >= 2)
      return (*done)(connectors::RetryAfter{0ms, "not in " + folder + " on two searches: sent again"});
    deps.after(box.settings.unknown_recheck, [weak = weak_from_this(), box = &box, message_id, done] {
      if (auto self = weak.lock()) self->search(*box, message_id, done, 2);
    });
  }

  // ---- reload ------------------------------------------------------------------------
  void reload() {
    if (!settings.reread) return;
    auto fresh = settings.reread();
    if (!fresh) {
      spdlog::error("imap: reload: the settings cannot be read, the old ones stay: {}", fresh.error());
      return;
    }
    for (auto& box : boxes) {
      const auto match = std::ranges::find(*fresh, box->settings.name, &MailboxSettings::name);
      if (match == fresh->end()) continue;
      box->settings.imap = match->imap;
      box->settings.smtp = match->smtp;
      // New clients, made on the workers' threads: the old ones may be in use there.
      // New clients, made here and swapped in on the workers' threads (the old ones may be
      // in use there); the old IDLE is ended.
      auto in_client = std::make_shared<Client>(match->imap);
      box->interrupt_idle();
      box->interrupt_idle = in_client->interrupter();
      box->interrupt_all.push_back(box->interrupt_idle);
      box->in->submit([client = box->in_client.get(), in_client] { *client = std::move(*in_client); });
      auto out_client = std::make_shared<Client>(match->imap);
      auto smtp = std::make_shared<SmtpClient>(match->smtp, imap_domain_of(box->settings.address));
      box->interrupt_all.push_back(out_client->interrupter());
      box->interrupt_all.push_back(smtp->interrupter());
      box->out->submit([client = box->out_client.get(), out_client, smtp_now = box->smtp.get(), smtp] {
        *client = std::move(*out_client);
        *smtp_now = std::move(*smtp);
      });
      if (box->paused) {
        spdlog::info("imap: {}: reload: new settings; polling again", box->settings.name);
        box->paused.reset();
        box->poll_failures_in_a_row = 0;
        schedule_poll(*box, 0ms);
      }
    }
  }
};

ImapChannel::ImapChannel(connectors::ChannelDeps deps, ChannelSettings settings)
    : m_state(std::make_shared<State>(std::move(deps), std::move(settings))) {
  for (auto& box : m_state->boxes) m_state->schedule_poll(*box, 0ms);
}

ImapChannel::~ImapChannel() {
  m_state->stopped = true;
  m_state->boxes.clear();  // ends the IDLEs and joins the workers
}

void ImapChannel::send(const store::OutboxItem& item, connectors::SendDone done) {
  m_state->send(item, std::move(done));
}

bool ImapChannel::resolve_unknown(const store::OutboxItem& item, connectors::SendDone& done) {
  return m_state->look_up(item, done);
}

connectors::Health ImapChannel::health() const {
  for (const auto& box : m_state->boxes) {
    if (box->paused) return {true, *box->paused};
  }
  return {};
}

void ImapChannel::stop() {
  m_state->stopped = true;
  for (auto& box : m_state->boxes) box->interrupt_idle();
}

void ImapChannel::reload() { m_state->reload(); }

const connectors::PollCounters* ImapChannel::poll_counters() const { return &m_state->counters; }

bool ImapChannel::fetch_media(const connectors::MediaFetch& fetch, connectors::MediaChunk& chunk,
                              connectors::MediaFetchDone& done) {
  auto ref = parse_part_ref(fetch.provider_ref);
  if (!ref) {
    m_state->deps.post(common::named_step([done = std::move(done), why = fetch.provider_ref]() mutable {
      done({connectors::MediaFetchStatus::refused, "not an IMAP attachment: \"" + why + "\"", {}, {}, {}});
    }));
    return true;
  }
  m_state->fetch_media(*ref, fetch, std::move(chunk), std::move(done));
  return true;
}

}  // namespace dispatchd::imap
