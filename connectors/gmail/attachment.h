#pragma once
// A mail's attachments as customers' files (docs/media.md): which of a decoded mail's
// attachments become its store::MediaRef, how a file is named to Gmail, and the pure parts
// of its download (GmailChannel::fetch_media carries them out).
//
// A mail is read with format=raw, which names no attachment: a file's provider_ref is the
// Gmail message id and the MIME part's Gmail partId ("<id>/<partId>": "18c0f.../1" is the
// second part of a multipart mail, "18c0f.../1.0" the first part inside that one, and
// "18c0f.../" a mail that is its attachment alone). The download:
//   1. messages.get?format=full, its fields cut to the parts down to that depth
//      (api.h: get_parts_request), maps the partId to its body: attachmentId and size;
//   2. a stated size over the cap is too_large at once (nothing downloaded);
//   3. messages.attachments.get answers a MessagePartBody {"attachmentId","size","data"}
//      whose data is base64url: it is read as it streams in (AttachmentData), decoded a few
//      KiB at a time and handed to the receiver, never whole in memory. A small part whose
//      body Gmail gives inline (data, no attachmentId) is handed over from step 1.
// An unreadable answer is retried; a 401 is refreshed by the client (client.h) first.
//
//   the answer (either request)                 the fetch (fetch_failure)
//   404 (message or attachment gone)            expired
//   429, 403 rate limit, 5xx, 408, transport,   retry (Retry-After kept)
//   401 after the refresh, 2xx unreadable
//   other 4xx                                   refused
//   the access token not had                    retry (a refused credential pauses the
//                                               channel; reload resumes it)
//   the partId not in the message               refused

#include <cstddef>
#include <cstdint>
#include <expected>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "connectors/channel.h"
#include "connectors/email/email.h"
#include "connectors/gmail/api.h"
#include "connectors/gmail/oauth.h"
#include "store/inbox.h"

namespace dispatchd::gmail {

// Gmail's partId of the part at `path` (email::Attachment::path): the indexes joined by '.'.
std::string part_id_of(std::span<const int> path);

struct AttachmentRef {
  std::string message_id;
  std::string part_id;  // "" for the message's own part
};

// "<message_id>/<partId>".
std::string attachment_ref(std::string_view message_id, std::span<const int> path);
// nullopt unless `ref` is a non-empty id without '/', a '/', and a partId of dot-separated
// decimal indexes (or none).
std::optional<AttachmentRef> parse_attachment_ref(std::string_view ref);

// The files of a mail: each attachment that is a part of its own bytes (a forwarded
// message/rfc822 is not: its text is in the raw mail), its kind by media/policy.h's rule
// for a mail attachment's content type, its declared type and filename.
std::vector<store::MediaRef> media_of(const email::Email& mail, std::string_view message_id);

// What a failed request of a download becomes (the table above); `what` names the request.
connectors::MediaFetchResult fetch_failure(std::string_view what, const ApiError& error);
connectors::MediaFetchResult token_failure(const OAuthError& error);

// Reads messages.attachments.get's answer as it streams in: the JSON object's top-level
// "data" string, base64url, decoded in pieces of at most a few KiB and handed to `out` in
// order; the other members are skipped. REQUIRES: `out` stays callable while feeding.
class AttachmentData {
 public:
  enum class Fed { more, stopped, malformed };
  explicit AttachmentData(std::function<bool(std::string_view bytes)> out) : m_out(std::move(out)) {}
  // The next bytes of the answer. stopped: `out` returned false; malformed: not such an
  // object (then `error()` says why). Either way nothing more is taken.
  Fed feed(std::string_view json);
  // After the last bytes: the object is complete and had a data member, its last bytes
  // handed over; else why not.
  [[nodiscard]] std::expected<void, std::string> finish();
  const std::string& error() const { return m_error; }
  std::int64_t decoded() const { return m_decoded; }

 private:
  Fed fail(std::string why);
  bool flush(bool last);

  std::function<bool(std::string_view)> m_out;
  std::string m_pending;  // base64url characters not yet decoded
  std::string m_key;      // the top-level key being read or last read
  std::string m_error;
  std::int64_t m_decoded = 0;
  int m_depth = 0;
  bool m_expect_key = true;
  bool m_in_string = false;
  bool m_escape = false;
  bool m_reading_key = false;
  bool m_in_data = false;
  bool m_data_seen = false;
  bool m_done = false;
  bool m_failed = false;
  bool m_stopped = false;
};

}  // namespace dispatchd::gmail
