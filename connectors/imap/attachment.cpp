#include "connectors/imap/attachment.h"

#include <charconv>

#include "connectors/email/inbound.h"

namespace dispatchd::imap {
namespace {

using connectors::MediaFetchResult;
using connectors::MediaFetchStatus;

std::optional<std::uint32_t> positive(std::string_view text) {
  std::uint32_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value == 0 || text.front() == '0') return std::nullopt;
  return value;
}

bool valid_section(std::string_view section) {
  if (section.empty()) return false;
  while (true) {
    const auto dot = section.find('.');
    if (!positive(section.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    section.remove_prefix(dot + 1);
  }
}

bool all_of_set(std::string_view text, bool allow_underscore) {
  for (const char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || (allow_underscore && c == '_');
    if (!ok) return false;
  }
  return true;
}

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

std::expected<std::string, std::string> from_base64(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() / 4 * 3);
  std::uint32_t acc = 0;
  int bits = 0;
  bool padded = false;
  for (const char c : bytes) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    if (c == '=') {
      padded = true;
      continue;
    }
    const int v = base64_value(c);
    if (v < 0 || padded) return std::unexpected(std::string("the part is not base64"));
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  if (bits >= 6) return std::unexpected(std::string("the part is not base64 (a character left over)"));
  return out;
}

std::string from_quoted_printable(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const char c = bytes[i];
    if (c != '=') {
      out.push_back(c);
      continue;
    }
    if (i + 1 < bytes.size() && bytes[i + 1] == '\n') {  // a soft line break
      i += 1;
    } else if (i + 2 < bytes.size() && bytes[i + 1] == '\r' && bytes[i + 2] == '\n') {
      i += 2;
    } else if (i + 2 < bytes.size() && hex_value(bytes[i + 1]) >= 0 && hex_value(bytes[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex_value(bytes[i + 1]) * 16 + hex_value(bytes[i + 2])));
      i += 2;
    } else {
      out.push_back(c);  // malformed: kept as written, as mail readers do
    }
  }
  return out;
}

MediaFetchResult imap_ended(MediaFetchStatus status, std::string why) {
  return MediaFetchResult{status, std::move(why), {}, {}, {}};
}

}  // namespace

std::string section_of(std::span<const int> path) {
  if (path.empty()) return "1";
  std::string out;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (i > 0) out += '.';
    out += std::to_string(path[i] + 1);
  }
  return out;
}

std::string part_ref(const PartRef& ref) {
  return ref.mailbox + "/" + std::to_string(ref.uidvalidity) + "/" + std::to_string(ref.uid) + "/" + ref.section + "/" +
         ref.encoding;
}

std::optional<PartRef> parse_part_ref(std::string_view text) {
  std::string_view fields[5];
  for (int i = 0; i < 5; ++i) {
    const auto slash = text.find('/');
    if ((slash == std::string_view::npos) != (i == 4)) return std::nullopt;
    fields[i] = text.substr(0, slash);
    if (slash != std::string_view::npos) text.remove_prefix(slash + 1);
  }
  const auto uidvalidity = positive(fields[1]);
  const auto uid = positive(fields[2]);
  if (fields[0].empty() || !all_of_set(fields[0], true) || !uidvalidity || !uid || !valid_section(fields[3]) ||
      !all_of_set(fields[4], false))
    return std::nullopt;
  return PartRef{std::string(fields[0]), *uidvalidity, *uid, std::string(fields[3]), std::string(fields[4])};
}

std::vector<store::MediaRef> media_of(const email::Email& mail, std::string_view mailbox, std::uint32_t uidvalidity,
                                      std::uint32_t uid) {
  return email::media_of(mail, [&](const email::Attachment& a) {
    return part_ref({std::string(mailbox), uidvalidity, uid, section_of(a.path), a.encoding});
  });
}

std::expected<std::string, std::string> decode_transfer(std::string_view encoding, std::string_view bytes) {
  if (encoding == "base64") return from_base64(bytes);
  if (encoding == "quoted-printable") return from_quoted_printable(bytes);
  if (encoding.empty() || encoding == "7bit" || encoding == "8bit" || encoding == "binary") return std::string(bytes);
  return std::unexpected("a transfer encoding not undone: " + std::string(encoding));
}

MediaFetchResult fetch_failure(const Error& error) {
  const std::string why = "UID FETCH: " + std::string(to_string(error.kind)) + ": " + error.message;
  switch (error.kind) {
    case ErrorKind::message_missing:
    case ErrorKind::uidvalidity_changed: return imap_ended(MediaFetchStatus::expired, why);
    case ErrorKind::too_large: return imap_ended(MediaFetchStatus::too_large, why);
    case ErrorKind::connection:
    case ErrorKind::timeout:
    case ErrorKind::unavailable:
    case ErrorKind::protocol:
    case ErrorKind::auth_refused:
    case ErrorKind::tls_refused: return imap_ended(MediaFetchStatus::retry, why);
    case ErrorKind::mailbox_missing:
    case ErrorKind::refused:
    case ErrorKind::unsupported:
    case ErrorKind::invalid_argument: break;
  }
  return imap_ended(MediaFetchStatus::refused, why);
}

}  // namespace dispatchd::imap
