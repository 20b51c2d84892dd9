#include "connectors/gmail/attachment.h"

#include <algorithm>
#include <cctype>

#include "connectors/email/inbound.h"
#include "connectors/gmail/base64url.h"

namespace dispatchd::gmail {
namespace {

using connectors::MediaFetchResult;
using connectors::MediaFetchStatus;

constexpr std::size_t k_decode_piece = 16 * 1024;  // base64url characters decoded at a time
constexpr std::size_t k_max_key = 64;              // a longer top-level key is not "data" anyway

MediaFetchResult fetch_ended(MediaFetchStatus status, std::string why, std::chrono::milliseconds after = {}) {
  return MediaFetchResult{status, std::move(why), after, {}, {}};
}

bool base64url_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '=';
}

bool json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

std::string part_id_of(std::span<const int> path) {
  std::string out;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (i > 0) out += '.';
    out += std::to_string(path[i]);
  }
  return out;
}

std::string attachment_ref(std::string_view message_id, std::span<const int> path) {
  return std::string(message_id) + "/" + part_id_of(path);
}

std::optional<AttachmentRef> parse_attachment_ref(std::string_view ref) {
  const auto slash = ref.find('/');
  if (slash == 0 || slash == std::string_view::npos) return std::nullopt;
  AttachmentRef out{std::string(ref.substr(0, slash)), std::string(ref.substr(slash + 1))};
  bool digit_before = false;
  for (char c : out.part_id) {
    if (c == '.' && digit_before) {
      digit_before = false;
    } else if (c >= '0' && c <= '9') {
      digit_before = true;
    } else {
      return std::nullopt;
    }
  }
  if (!out.part_id.empty() && !digit_before) return std::nullopt;
  return out;
}

std::vector<store::MediaRef> media_of(const email::Email& mail, std::string_view message_id) {
  return email::media_of(mail, [message_id](const email::Attachment& a) { return attachment_ref(message_id, a.path); });
}

MediaFetchResult fetch_failure(std::string_view what, const ApiError& error) {
  const std::string why = std::string(what) + ": " + describe(error);
  switch (error.kind) {
    case ApiErrorKind::not_found: return fetch_ended(MediaFetchStatus::expired, why);
    case ApiErrorKind::rate_limited:
    case ApiErrorKind::server:
    case ApiErrorKind::unreachable:
    case ApiErrorKind::uncertain:
    case ApiErrorKind::unauthorized:
      return fetch_ended(MediaFetchStatus::retry, why,
                         std::chrono::milliseconds(error.retry_after.value_or(std::chrono::seconds(0))));
    case ApiErrorKind::permanent: break;
  }
  return fetch_ended(MediaFetchStatus::refused, why);
}

MediaFetchResult token_failure(const OAuthError& error) {
  return fetch_ended(MediaFetchStatus::retry, "the access token: " + error.message);
}

AttachmentData::Fed AttachmentData::fail(std::string why) {
  m_failed = true;
  m_error = std::move(why);
  return Fed::malformed;
}

bool AttachmentData::flush(bool last) {
  const std::size_t n = last ? m_pending.size() : m_pending.size() - m_pending.size() % 4;
  if (n == 0) return true;
  auto bytes = base64url_decode(std::string_view(m_pending).substr(0, n));
  if (!bytes) {
    m_failed = true;
    m_error = "\"data\" is not base64url";
    return false;
  }
  m_pending.erase(0, n);
  m_decoded += static_cast<std::int64_t>(bytes->size());
  if (bytes->empty() || m_out(*bytes)) return true;
  m_stopped = true;
  return false;
}

AttachmentData::Fed AttachmentData::feed(std::string_view json) {
  if (m_failed) return Fed::malformed;
  if (m_stopped) return Fed::stopped;
  for (const char c : json) {
    if (m_in_data) {
      if (c == '"') {
        m_in_data = false;
        m_data_seen = true;
        if (!flush(true)) return m_failed ? Fed::malformed : Fed::stopped;
        continue;
      }
      if (!base64url_char(c)) return fail("\"data\" is not base64url");
      m_pending.push_back(c);
      if (m_pending.size() >= k_decode_piece && !flush(false)) return m_failed ? Fed::malformed : Fed::stopped;
      continue;
    }
    if (m_in_string) {
      if (m_escape) {
        m_escape = false;
        if (m_reading_key) m_key = "\\";  // an escaped key is never "data"
      } else if (c == '\\') {
        m_escape = true;
      } else if (c == '"') {
        m_in_string = false;
        m_reading_key = false;
      } else if (m_reading_key && m_key.size() < k_max_key) {
        m_key.push_back(c);
      }
      continue;
    }
    if (m_done) {
      if (!json_space(c)) return fail("bytes after the object");
      continue;
    }
    if (m_depth == 0 && !json_space(c) && c != '{') return fail("not a JSON object");
    switch (c) {
      case '"':
        if (m_depth == 1 && m_expect_key) {
          m_key.clear();
          m_reading_key = true;
          m_in_string = true;
        } else if (m_depth == 1 && m_key == "data") {
          if (m_data_seen) return fail("two \"data\" members");
          m_in_data = true;
        } else {
          m_in_string = true;
        }
        break;
      case '{':
      case '[': ++m_depth; break;
      case '}':
      case ']':
        if (--m_depth == 0) m_done = true;
        break;
      case ':':
        if (m_depth == 1) m_expect_key = false;
        break;
      case ',':
        if (m_depth == 1) {
          m_expect_key = true;
          m_key.clear();
        }
        break;
      default: break;
    }
  }
  return Fed::more;
}

std::expected<void, std::string> AttachmentData::finish() {
  if (m_failed) return std::unexpected(m_error);
  if (m_stopped) return std::unexpected(std::string("the receiver stopped"));
  if (!m_done) return std::unexpected(std::string("the answer ended before its object did"));
  if (!m_data_seen) return std::unexpected(std::string("the answer has no \"data\""));
  return {};
}

}  // namespace dispatchd::gmail
