#include "connectors/email/reply.h"

#include <gmime/gmime.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <exception>
#include <memory>
#include <optional>

#include "common/utf8.h"
#include "connectors/email/internal/gmime.h"

namespace dispatchd::email {
namespace {

constexpr std::string_view k_replacement = "\xEF\xBF\xBD";  // U+FFFD
constexpr std::string_view k_fullwidth_colon = "\xEF\xBC\x9A";
constexpr std::array<std::string_view, 9> k_reply_prefixes = {"re", "aw", "sv", "vs", "rv", "res", "r", "antw", "odp"};
constexpr std::size_t k_max_name_points = 200;
constexpr std::size_t k_max_address_bytes = 254;
constexpr std::size_t k_max_id_bytes = 250;

bool is_space_or_control(unsigned char c) { return c <= 0x20 || c == 0x7f; }

char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// One line of display text from untrusted input: whitespace and control runs become one
// space, invalid UTF-8 becomes U+FFFD, at most `max_points` code points. first_invalid stops
// at the first bad byte, so the loop reads each byte once, and it stops reading once more
// than enough is kept (a code point is at most 4 bytes).
std::string clean_line(std::string_view text, std::size_t max_points) {
  text = text.substr(0, std::min(text.size(), 4 * max_points + 4096));  // the slack: runs of spaces
  std::string out;
  bool pending_space = false;
  const auto append = [&](std::string_view piece) {
    if (pending_space && !out.empty()) out.push_back(' ');
    pending_space = false;
    out.append(piece);
  };
  while (!text.empty()) {
    const std::size_t valid = utf8::first_invalid(text).value_or(text.size());
    for (const char c : text.substr(0, valid)) {
      if (is_space_or_control(static_cast<unsigned char>(c)))
        pending_space = true;
      else
        append(std::string_view(&c, 1));
    }
    if (valid == text.size()) break;
    append(k_replacement);
    text.remove_prefix(valid + 1);
  }
  return std::string(utf8::prefix(out, max_points));
}

// "Re:", "AW[2]:", "sv (3) :", "Re：" ... at the start of an already cleaned subject.
bool has_reply_prefix(std::string_view subject) {
  std::size_t i = 0;
  std::string word;
  while (i < subject.size() && std::isalpha(static_cast<unsigned char>(subject[i])) && word.size() < 5)
    word.push_back(ascii_lower(subject[i++]));
  if (std::find(k_reply_prefixes.begin(), k_reply_prefixes.end(), word) == k_reply_prefixes.end()) return false;
  const auto skip_spaces = [&] {
    while (i < subject.size() && subject[i] == ' ') ++i;
  };
  skip_spaces();
  if (i < subject.size() && (subject[i] == '[' || subject[i] == '(')) {
    const char close = subject[i] == '[' ? ']' : ')';
    const std::size_t end = subject.find(close, i);
    if (end == std::string_view::npos || end == i + 1) return false;
    for (std::size_t d = i + 1; d < end; ++d)
      if (!std::isdigit(static_cast<unsigned char>(subject[d]))) return false;
    i = end + 1;
    skip_spaces();
  }
  const std::string_view rest = subject.substr(i);
  return rest.starts_with(':') || rest.starts_with(k_fullwidth_colon);
}

// A msg-id as mailers really write them: printable ASCII without the brackets.
bool usable_id(std::string_view id) {
  return !id.empty() && id.size() <= k_max_id_bytes &&
         std::all_of(id.begin(), id.end(), [](char c) { return c > 0x20 && c < 0x7f && c != '<' && c != '>'; });
}

std::optional<ReplyError> check_address(std::string_view address, std::string_view which) {
  const auto error = [&](std::string_view what) {
    return ReplyError{ReplyErrorKind::bad_address, std::string(which) + " address " + std::string(what)};
  };
  if (address.empty()) return error("is empty");
  if (address.size() > k_max_address_bytes) return error("is too long");
  if (!utf8::is_valid(address)) return error("is not UTF-8");
  for (const char c : address)
    if (is_space_or_control(static_cast<unsigned char>(c)) ||
        std::string_view("<>,;\"()\\").find(c) != std::string_view::npos)
      return error("has a space, control or special character");
  const std::size_t at = address.rfind('@');
  if (at == std::string_view::npos || at == 0 || at + 1 == address.size()) return error("has no '@' inside it");
  return std::nullopt;
}

std::optional<ReplyError> check_spec(const ReplySpec& spec) {
  if (auto error = check_address(spec.from_address, "from")) return error;
  if (auto error = check_address(spec.to_address, "to")) return error;
  if (!usable_id(spec.message_id) || spec.message_id.find('@') == std::string::npos)
    return ReplyError{ReplyErrorKind::bad_message_id, "message id is not printable ASCII with an '@'"};
  if (spec.body.size() > k_max_reply_body_bytes) return ReplyError{ReplyErrorKind::body_too_large, "body is too large"};
  if (std::all_of(spec.body.begin(), spec.body.end(),
                  [](char c) { return is_space_or_control(static_cast<unsigned char>(c)); }))
    return ReplyError{ReplyErrorKind::empty_body, "body is empty"};
  if (!utf8::is_valid(spec.body)) return ReplyError{ReplyErrorKind::body_not_utf8, "body is not valid UTF-8"};
  return std::nullopt;
}

// The References list: the original's, then its own id; duplicates and unusable ids dropped;
// the first (the thread's root) kept when the middle is cut.
std::string references_of(const ReplySpec& spec) {
  std::vector<std::string_view> ids;
  const auto add = [&](std::string_view id) {
    if (usable_id(id) && std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  };
  for (const std::string& id : spec.original_references) add(id);
  add(spec.original_message_id);
  if (ids.size() > k_max_references) ids.erase(ids.begin() + 1, ids.end() - (k_max_references - 1));
  std::string out;
  for (const std::string_view id : ids) out += (out.empty() ? "<" : " <") + std::string(id) + ">";
  return out;
}

// Text with every line break as `newline`, ending in one (GMime's quoted-printable adds it
// anyway; doing it here makes both encodings carry the same text).
std::string with_newlines(std::string_view text, std::string_view newline) {
  std::string out;
  out.reserve(text.size() + text.size() / 16 + newline.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') continue;
    if (text[i] == '\r' || text[i] == '\n')
      out.append(newline);
    else
      out.push_back(text[i]);
  }
  if (!out.ends_with(newline)) out.append(newline);
  return out;
}

struct GObjectUnref {
  void operator()(gpointer object) const { g_object_unref(object); }
};
template <class T>
using GPtr = std::unique_ptr<T, GObjectUnref>;

void add_mailbox(GMimeMessage* message, GMimeAddressType type, std::string_view name, const std::string& address) {
  const std::string clean = clean_line(name, k_max_name_points);
  GPtr<InternetAddress> mailbox(internet_address_mailbox_new(clean.empty() ? nullptr : clean.c_str(), address.c_str()));
  // Without this GMime picks ISO-8859-1 for names it can hold; the brief is a UTF-8 message.
  internet_address_set_charset(mailbox.get(), "utf-8");
  internet_address_list_add(g_mime_message_get_addresses(message, type), mailbox.get());
}

// The text/plain part. QP is written from LF text (GMime's CRLF output filter turns each LF
// into CRLF); base64 must carry the canonical CRLF form inside, since no filter reaches it.
GPtr<GMimeTextPart> text_part(const std::string& body) {
  GPtr<GMimeTextPart> part(g_mime_text_part_new_with_subtype("plain"));
  const auto set_content = [&](const std::string& text) {
    GPtr<GMimeStream> stream(g_mime_stream_mem_new_with_buffer(text.data(), text.size()));
    GPtr<GMimeDataWrapper> wrapper(g_mime_data_wrapper_new_with_stream(stream.get(), GMIME_CONTENT_ENCODING_DEFAULT));
    g_mime_part_set_content(GMIME_PART(part.get()), wrapper.get());
  };
  set_content(with_newlines(body, "\n"));
  g_mime_text_part_set_charset(part.get(), "utf-8");
  const GMimeContentEncoding encoding =
      g_mime_part_get_best_content_encoding(GMIME_PART(part.get()), GMIME_ENCODING_CONSTRAINT_7BIT);
  if (encoding == GMIME_CONTENT_ENCODING_BASE64) set_content(with_newlines(body, "\r\n"));
  g_mime_part_set_content_encoding(GMIME_PART(part.get()), encoding);
  return part;
}

std::expected<std::string, ReplyError> render(const ReplySpec& spec) {
  detail::ensure_gmime();
  GPtr<GMimeMessage> message(g_mime_message_new(TRUE));
  std::unique_ptr<GDateTime, decltype(&g_date_time_unref)> date(
      g_date_time_new_from_unix_utc(spec.date.time_since_epoch().count()), &g_date_time_unref);
  if (!date) return std::unexpected(ReplyError{ReplyErrorKind::internal, "date is out of range"});
  g_mime_message_set_date(message.get(), date.get());
  add_mailbox(message.get(), GMIME_ADDRESS_TYPE_FROM, spec.from_name, spec.from_address);
  add_mailbox(message.get(), GMIME_ADDRESS_TYPE_TO, spec.to_name, spec.to_address);
  g_mime_message_set_subject(message.get(), reply_subject(spec.original_subject).c_str(), "utf-8");
  g_mime_message_set_message_id(message.get(), spec.message_id.c_str());
  GMimeObject* object = GMIME_OBJECT(message.get());
  if (usable_id(spec.original_message_id))
    g_mime_object_set_header(object, "In-Reply-To", ("<" + spec.original_message_id + ">").c_str(), nullptr);
  if (const std::string references = references_of(spec); !references.empty())
    g_mime_object_set_header(object, "References", references.c_str(), nullptr);
  g_mime_object_set_header(object, "Auto-Submitted", "auto-replied", nullptr);
  const GPtr<GMimeTextPart> part = text_part(spec.body);
  g_mime_message_set_mime_part(message.get(), GMIME_OBJECT(part.get()));

  std::unique_ptr<GMimeFormatOptions, decltype(&g_mime_format_options_free)> options(
      g_mime_format_options_clone(nullptr), &g_mime_format_options_free);
  g_mime_format_options_set_newline_format(options.get(), GMIME_NEWLINE_FORMAT_DOS);
  std::unique_ptr<char, decltype(&g_free)> text(g_mime_object_to_string(object, options.get()), &g_free);
  if (!text) return std::unexpected(ReplyError{ReplyErrorKind::internal, "GMime could not write the message"});
  return std::string(text.get());
}

}  // namespace

std::string reply_subject(std::string_view original_subject) {
  std::string subject = clean_line(original_subject, k_max_subject_points);
  if (has_reply_prefix(subject)) return subject;
  return "Re: " + subject;
}

std::string message_id_for(std::string_view idempotency_key, std::string_view domain) {
  static constexpr std::string_view k_hex = "0123456789ABCDEF";
  std::string out = "dispatchd.";
  for (const char c : idempotency_key) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) && byte < 0x80) {
      out.push_back(c);
    } else {
      out.push_back('-');
      out.push_back(k_hex[byte >> 4]);
      out.push_back(k_hex[byte & 0x0f]);
    }
  }
  if (idempotency_key.empty()) out.push_back('-');
  out.push_back('@');
  const std::size_t domain_start = out.size();
  for (const char c : domain) {
    const char lower = ascii_lower(c);
    if ((lower >= 'a' && lower <= 'z') || (lower >= '0' && lower <= '9') || lower == '.' || lower == '-')
      out.push_back(lower);
  }
  if (out.size() == domain_start) out += "invalid";
  return out;
}

std::expected<std::string, ReplyError> build_reply(const ReplySpec& spec) {
  try {
    if (auto error = check_spec(spec)) return std::unexpected(std::move(*error));
    return render(spec);
  } catch (const std::exception&) {
    // Only allocation can throw here; GMime reports through return values.
    return std::unexpected(ReplyError{ReplyErrorKind::internal, "out of memory building the reply"});
  }
}

}  // namespace dispatchd::email
