// decode(): GMime parses, this file walks the result into an Email. GMime and GLib types stay here.
#include <gmime/gmime.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>
#include <new>
#include <utility>

#include "common/utf8.h"
#include "connectors/email/email.h"
#include "connectors/email/internal/charset.h"
#include "connectors/email/internal/gmime.h"
#include "connectors/email/internal/text.h"

namespace dispatchd::email {
namespace {

constexpr std::size_t k_max_defects = 32;

struct Unref {
  void operator()(gpointer object) const { g_object_unref(object); }
};
template <typename T>
using Ref = std::unique_ptr<T, Unref>;

struct OptionsFree {
  void operator()(GMimeParserOptions* options) const { g_mime_parser_options_free(options); }
};

// Defects, each phrase once, at most k_max_defects of them (a hostile message cannot grow the list).
class Defects {
 public:
  explicit Defects(std::vector<std::string>& out) : m_out(out) {}
  void add(std::string phrase) {
    if (m_out.size() >= k_max_defects) return;
    if (std::find(m_out.begin(), m_out.end(), phrase) == m_out.end()) m_out.push_back(std::move(phrase));
  }

 private:
  std::vector<std::string>& m_out;
};

const char* warning_phrase(GMimeParserWarning code) {
  switch (code) {
    case GMIME_WARN_UNENCODED_8BIT_HEADER: return "8-bit header";
    case GMIME_WARN_INVALID_CONTENT_TYPE: return "invalid content type";
    case GMIME_WARN_INVALID_RFC2047_HEADER_VALUE: return "malformed encoded word";
    case GMIME_WARN_MALFORMED_MULTIPART: return "bad boundary";
    case GMIME_WARN_TRUNCATED_MESSAGE: return "truncated message";
    case GMIME_WARN_MALFORMED_MESSAGE: return "malformed message";
    case GMIME_CRIT_INVALID_HEADER_NAME: return "invalid header name";
    case GMIME_CRIT_CONFLICTING_HEADER: return "conflicting header";
    case GMIME_CRIT_CONFLICTING_PARAMETER: return "conflicting parameter";
    case GMIME_CRIT_MULTIPART_WITHOUT_BOUNDARY: return "multipart without boundary";
    case GMIME_WARN_INVALID_PARAMETER: return "invalid parameter";
    case GMIME_WARN_INVALID_ADDRESS_LIST: return "invalid address list";
    case GMIME_CRIT_NESTING_OVERFLOW: return "nesting overflow";
    case GMIME_WARN_PART_WITHOUT_CONTENT: return "part without content";
    case GMIME_CRIT_PART_WITHOUT_HEADERS_OR_CONTENT: return "part without headers or content";
    default: return nullptr;  // duplicated headers and parameters: harmless for reading
  }
}

void on_parser_warning(gint64, GMimeParserWarning code, const gchar*, gpointer user_data) {
  const char* phrase = warning_phrase(code);
  if (!phrase) return;
  try {
    static_cast<Defects*>(user_data)->add(phrase);
  } catch (...) {
    // Out of memory inside a C callback: the defect is lost, the parse goes on.
  }
}

std::unique_ptr<GMimeParserOptions, OptionsFree> make_options(Defects& defects) {
  std::unique_ptr<GMimeParserOptions, OptionsFree> options(g_mime_parser_options_new());
  g_mime_parser_options_set_rfc2047_compliance_mode(options.get(), GMIME_RFC_COMPLIANCE_LOOSE);
  g_mime_parser_options_set_address_compliance_mode(options.get(), GMIME_RFC_COMPLIANCE_LOOSE);
  g_mime_parser_options_set_parameter_compliance_mode(options.get(), GMIME_RFC_COMPLIANCE_LOOSE);
  g_mime_parser_options_set_allow_addresses_without_domain(options.get(), TRUE);
  // Raw 8-bit headers: UTF-8 when they are, else the Western European charset most such mail uses.
  const char* fallback[] = {"UTF-8", "windows-1252", nullptr};
  g_mime_parser_options_set_fallback_charsets(options.get(), fallback);
  g_mime_parser_options_set_warning_callback(options.get(), on_parser_warning, &defects);
  return options;
}

// The text of a body part as valid UTF-8 (charset.h), its problems as defects.
std::string to_utf8(std::string_view bytes, const char* declared, Defects& defects) {
  std::vector<std::string> problems;
  std::string text = detail::text_to_utf8(bytes, declared, problems);
  for (auto& problem : problems) defects.add(std::move(problem));
  return text;
}

// ---- parts ------------------------------------------------------------------------------

// The part's content with its transfer encoding (base64, quoted-printable) undone.
std::string decoded_content(GMimePart* part) {
  GMimeDataWrapper* content = g_mime_part_get_content(part);
  if (!content) return {};
  Ref<GMimeStream> mem(g_mime_stream_mem_new());
  if (g_mime_data_wrapper_write_to_stream(content, mem.get()) < 0) return {};
  GByteArray* array = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(mem.get()));
  return std::string(reinterpret_cast<const char*>(array->data), array->len);
}

// Decoded size without holding the content: written to a counting null stream.
std::size_t decoded_size(GMimePart* part) {
  GMimeDataWrapper* content = g_mime_part_get_content(part);
  if (!content) return 0;
  Ref<GMimeStream> null(g_mime_stream_null_new());
  if (g_mime_data_wrapper_write_to_stream(content, null.get()) < 0) return 0;
  return GMIME_STREAM_NULL(null.get())->written;
}

// A message/rfc822 part's size: the message written out again with CRLF line ends, as mail
// carries it (GMime keeps the parsed headers and bodies as they came).
std::size_t serialized_size(GMimeObject* object) {
  GMimeFormatOptions* format = g_mime_format_options_new();
  g_mime_format_options_set_newline_format(format, GMIME_NEWLINE_FORMAT_DOS);
  Ref<GMimeStream> null(g_mime_stream_null_new());
  const ssize_t written = g_mime_object_write_to_stream(object, format, null.get());
  g_mime_format_options_free(format);
  return written < 0 ? 0 : GMIME_STREAM_NULL(null.get())->written;
}

std::string mime_type(GMimeObject* object) {
  GMimeContentType* type = g_mime_object_get_content_type(object);
  if (!type) return "application/octet-stream";
  char* text = g_mime_content_type_get_mime_type(type);
  std::string out = detail::lower_ascii(text ? text : "application/octet-stream");
  g_free(text);
  return out;
}

bool is_attachment_disposition(GMimeObject* object) {
  GMimeContentDisposition* disposition = g_mime_object_get_content_disposition(object);
  return disposition && g_mime_content_disposition_is_attachment(disposition);
}

std::string valid_text(const char* value) {
  std::size_t replaced = 0;
  return value ? detail::valid_utf8(value, replaced) : std::string();
}

// What one walk over a MIME tree found: the candidate bodies, the attachments, the reports.
struct Found {
  GMimePart* plain = nullptr;
  GMimePart* html = nullptr;
  GMimeMessage* forwarded = nullptr;  // the first message/rfc822: the body when nothing else is
  std::string prologue;               // of a multipart in which no part was found
  bool delivery_status = false;
  std::vector<Attachment> attachments;
};

// In multipart/alternative, the one representation to read: text/plain, else the richest
// other (a multipart such as related, or HTML), else the first.
GMimeObject* chosen_alternative(GMimeMultipart* multipart) {
  GMimeObject* rich = nullptr;
  const int count = g_mime_multipart_get_count(multipart);
  for (int i = 0; i < count; ++i) {
    GMimeObject* child = g_mime_multipart_get_part(multipart, i);
    const std::string type = mime_type(child);
    if (type == "text/plain" && !is_attachment_disposition(child)) return child;
    if (GMIME_IS_MULTIPART(child) || type == "text/html") rich = child;
  }
  return rich ? rich : (count > 0 ? g_mime_multipart_get_part(multipart, 0) : nullptr);
}

void visit_leaf(GMimePart* part, const std::vector<int>& path, Found& found) {
  GMimeObject* object = GMIME_OBJECT(part);
  const std::string type = mime_type(object);
  const char* filename = g_mime_part_get_filename(part);
  const bool text_body = type == "text/plain" || type == "text/html";
  if (is_attachment_disposition(object) || (!text_body && filename && *filename)) {
    const char* encoding = g_mime_content_encoding_to_string(g_mime_part_get_content_encoding(part));
    found.attachments.push_back(
        {valid_text(filename), type, decoded_size(part), path, true, detail::lower_ascii(encoding ? encoding : "")});
  } else if (type == "text/plain") {
    if (!found.plain) found.plain = part;
  } else if (type == "text/html") {
    if (!found.html) found.html = part;
  } else if (type == "message/delivery-status") {
    found.delivery_status = true;
  }
}

void visit_message_part(GMimeMessagePart* part, Found& found) {
  GMimeObject* object = GMIME_OBJECT(part);
  GMimeMessage* inner = g_mime_message_part_get_message(part);
  const char* filename = g_mime_object_get_content_disposition_parameter(object, "filename");
  std::string name = valid_text(filename);
  if (name.empty() && inner) name = valid_text(g_mime_message_get_subject(inner));
  found.attachments.push_back(
      {std::move(name), mime_type(object), inner ? serialized_size(GMIME_OBJECT(inner)) : 0, {}, false, {}});
  if (inner && !found.forwarded) found.forwarded = inner;
}

// Walks the tree under `root` with an explicit stack: no recursion, depth and part count bounded.
Found walk(GMimeObject* root, const DecodeLimits& limits, Defects& defects) {
  Found found;
  struct Visit {
    GMimeObject* object;
    int depth;
    std::vector<int> path;  // the child indexes from the root
  };
  std::vector<Visit> stack;
  if (root) stack.push_back({root, 1, {}});
  int parts = 0;
  while (!stack.empty()) {
    const Visit visit = std::move(stack.back());
    stack.pop_back();
    GMimeObject* object = visit.object;
    const int depth = visit.depth;
    const auto child = [&visit](int i) {
      std::vector<int> path = visit.path;
      path.push_back(i);
      return path;
    };
    if (++parts > limits.max_parts) {
      defects.add("more than " + std::to_string(limits.max_parts) + " parts");
      break;
    }
    if (GMIME_IS_MESSAGE_PART(object)) {
      visit_message_part(GMIME_MESSAGE_PART(object), found);
    } else if (GMIME_IS_PART(object)) {
      visit_leaf(GMIME_PART(object), visit.path, found);
    } else if (GMIME_IS_MULTIPART(object)) {
      GMimeMultipart* multipart = GMIME_MULTIPART(object);
      const int count = g_mime_multipart_get_count(multipart);
      if (count == 0) {
        defects.add("bad boundary");
        if (found.prologue.empty() && g_mime_multipart_get_prologue(multipart))
          found.prologue = g_mime_multipart_get_prologue(multipart);
        continue;
      }
      if (depth >= limits.max_depth) {
        defects.add("nesting deeper than " + std::to_string(limits.max_depth));
        continue;
      }
      const std::string type = mime_type(object);
      if (type == "multipart/encrypted") defects.add("encrypted message");
      if (type == "multipart/alternative") {
        if (GMimeObject* chosen = chosen_alternative(multipart)) {
          int index = 0;
          while (index < count && g_mime_multipart_get_part(multipart, index) != chosen) ++index;
          stack.push_back({chosen, depth + 1, child(index)});
        }
        continue;
      }
      for (int i = count; i-- > 0;) stack.push_back({g_mime_multipart_get_part(multipart, i), depth + 1, child(i)});
    }
  }
  return found;
}

// ---- headers ----------------------------------------------------------------------------

void append_mailbox(InternetAddress* address, std::vector<Address>& out) {
  if (!INTERNET_ADDRESS_IS_MAILBOX(address)) return;
  out.push_back({valid_text(internet_address_get_name(address)),
                 valid_text(internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(address)))});
}

// Mailboxes in order, a group's members in its place (RFC 5322 groups do not nest: a group
// inside a group is skipped), at most k_max_addresses.
void append_addresses(InternetAddressList* list, std::vector<Address>& out) {
  constexpr std::size_t k_max_addresses = 1000;
  const int count = list ? internet_address_list_length(list) : 0;
  for (int i = 0; i < count && out.size() < k_max_addresses; ++i) {
    InternetAddress* address = internet_address_list_get_address(list, i);
    if (!INTERNET_ADDRESS_IS_GROUP(address)) {
      append_mailbox(address, out);
      continue;
    }
    InternetAddressList* members = internet_address_group_get_members(INTERNET_ADDRESS_GROUP(address));
    const int member_count = members ? internet_address_list_length(members) : 0;
    for (int j = 0; j < member_count && out.size() < k_max_addresses; ++j)
      append_mailbox(internet_address_list_get_address(members, j), out);
  }
}

std::optional<Address> first_address(InternetAddressList* list) {
  std::vector<Address> all;
  append_addresses(list, all);
  if (all.empty()) return std::nullopt;
  return std::move(all.front());
}

std::vector<std::string> message_ids(GMimeParserOptions* options, const char* header) {
  std::vector<std::string> out;
  if (!header) return out;
  GMimeReferences* references = g_mime_references_parse(options, header);
  if (!references) return out;
  const int count = g_mime_references_length(references);
  for (int i = 0; i < count && i < 500; ++i) out.push_back(valid_text(g_mime_references_get_message_id(references, i)));
  g_mime_references_free(references);
  return out;
}

std::string subject_of(GMimeMessage* message, GMimeParserOptions* options) {
  GMimeHeader* header = g_mime_header_list_get_header(g_mime_object_get_header_list(GMIME_OBJECT(message)), "Subject");
  const char* raw = header ? g_mime_header_get_raw_value(header) : nullptr;
  if (const auto fixed = raw ? detail::repadded_encoded_words(raw) : std::nullopt) {
    char* decoded = g_mime_utils_header_decode_text(options, fixed->c_str());
    std::size_t replaced = 0;
    std::string out = detail::valid_utf8(detail::trim_space(decoded ? decoded : ""), replaced);
    g_free(decoded);
    return out;
  }
  return valid_text(g_mime_message_get_subject(message));
}

void read_headers(GMimeMessage* message, GMimeParserOptions* options, Email& email, Defects& defects) {
  GMimeObject* object = GMIME_OBJECT(message);
  email.from = first_address(g_mime_message_get_from(message));
  email.reply_to = first_address(g_mime_message_get_reply_to(message));
  append_addresses(g_mime_message_get_to(message), email.to);
  append_addresses(g_mime_message_get_cc(message), email.cc);
  email.subject = subject_of(message, options);
  if (GDateTime* date = g_mime_message_get_date(message)) {
    email.date = std::chrono::sys_seconds(std::chrono::seconds(g_date_time_to_unix(date)));
  } else if (g_mime_object_get_header(object, "Date")) {
    defects.add("unparseable date");
  }
  email.message_id = valid_text(g_mime_message_get_message_id(message));
  const auto in_reply_to = message_ids(options, g_mime_object_get_header(object, "In-Reply-To"));
  if (!in_reply_to.empty()) email.in_reply_to = in_reply_to.front();
  email.references = message_ids(options, g_mime_object_get_header(object, "References"));
}

// ---- flags ------------------------------------------------------------------------------

std::string header_lower(GMimeObject* object, const char* name) {
  const char* value = g_mime_object_get_header(object, name);
  return value ? detail::lower_ascii(detail::trim_space(value)) : std::string();
}

std::string localpart(const std::optional<Address>& from) {
  if (!from) return "";
  const std::string& address = from->address;
  return detail::lower_ascii(std::string_view(address).substr(0, address.rfind('@')));
}

bool is_no_reply_localpart(std::string local) {
  std::erase_if(local, [](char c) { return c == '-' || c == '_' || c == '.'; });
  return local.starts_with("noreply") || local.starts_with("donotreply") || local.starts_with("dontreply");
}

Flags read_flags(GMimeMessage* message, const Email& email, const Found& found,
                 std::span<const std::string> own_addresses) {
  GMimeObject* object = GMIME_OBJECT(message);
  Flags flags;
  const std::string auto_submitted = header_lower(object, "Auto-Submitted");
  const std::string precedence = header_lower(object, "Precedence");
  flags.auto_reply = (!auto_submitted.empty() && !auto_submitted.starts_with("no")) ||
                     g_mime_object_get_header(object, "X-Autoreply") ||
                     g_mime_object_get_header(object, "X-Autorespond") || precedence == "bulk" ||
                     precedence == "junk" || precedence == "auto_reply";
  flags.list = g_mime_object_get_header(object, "List-Id") || g_mime_object_get_header(object, "List-Unsubscribe") ||
               precedence == "list";
  const std::string local = localpart(email.from);
  const GMimeObject* body = g_mime_message_get_mime_part(message);
  const bool report = body && mime_type(const_cast<GMimeObject*>(body)) == "multipart/report";
  const bool null_sender = header_lower(object, "Return-Path") == "<>";
  flags.bounce = local == "mailer-daemon" || local == "postmaster" || report || (null_sender && found.delivery_status);
  if (email.from) {
    const std::string from = detail::lower_ascii(email.from->address);
    flags.own = std::any_of(own_addresses.begin(), own_addresses.end(), [&](const std::string& own) {
      return detail::lower_ascii(detail::trim_space(own)) == from;
    });
  }
  flags.no_reply = is_no_reply_localpart(local);
  return flags;
}

// ---- body -------------------------------------------------------------------------------

// Sets full_text and text from what the walk found (or from the forwarded message, or the
// prologue of a multipart whose boundary never came).
void read_body(const Found& found, const DecodeLimits& limits, Email& email, Defects& defects) {
  detail::BodyText body;
  if (found.plain) {
    const char* charset = g_mime_object_get_content_type_parameter(GMIME_OBJECT(found.plain), "charset");
    body.full = detail::tidy_lines(to_utf8(decoded_content(found.plain), charset, defects));
    body.trimmed = detail::trim_quoted(body.full);
  } else if (found.html) {
    const char* charset = g_mime_object_get_content_type_parameter(GMIME_OBJECT(found.html), "charset");
    const std::string html = to_utf8(decoded_content(found.html), charset, defects);
    body = detail::html_to_text(html);
    // Nothing readable (images only, or nesting past libxml2's depth limit): say so, so that
    // the connector escalates it rather than taking it for an empty message.
    if (body.full.empty() && !detail::trim_space(html).empty()) defects.add("no text in HTML body");
    body.trimmed = detail::trim_quoted(body.trimmed.empty() ? body.full : body.trimmed);
  } else if (!found.prologue.empty()) {
    std::size_t replaced = 0;
    body.full = detail::tidy_lines(detail::valid_utf8(found.prologue, replaced));
    body.trimmed = detail::trim_quoted(body.full);
  }
  email.full_text = std::move(body.full);
  const std::string_view cut = detail::cut_utf8(body.trimmed, limits.max_text_bytes);
  if (cut.size() < body.trimmed.size()) defects.add("text cut at " + std::to_string(limits.max_text_bytes) + " bytes");
  email.text = std::string(cut);
}

Email decode_message(GMimeMessage* message, GMimeParserOptions* options, std::span<const std::string> own_addresses,
                     const DecodeLimits& limits, Defects& defects) {
  Email email;
  read_headers(message, options, email, defects);
  GMimeObject* root = g_mime_message_get_mime_part(message);
  Found found = walk(root, limits, defects);
  if (!found.plain && !found.html && found.prologue.empty() && found.forwarded) {
    // A forward with nothing of its own to say: the forwarded message's text is the body.
    Found inner = walk(g_mime_message_get_mime_part(found.forwarded), limits, defects);
    found.plain = inner.plain;
    found.html = inner.html;
  }
  // Nothing to read (an attachment alone, an encrypted or unknown body): said as a defect, so
  // that the connector escalates it instead of taking it for an empty message.
  if (!found.plain && !found.html && found.prologue.empty()) defects.add("no text part");
  read_body(found, limits, email, defects);
  email.attachments = std::move(found.attachments);
  email.flags = read_flags(message, email, found, own_addresses);
  return email;
}

// GMime builds every part before the walk can stop at max_parts, at some 100 µs a part: 35 MB
// of tiny parts would take minutes. So the input is cut before the line that would start more
// delimiter-like lines ("--...") than the allowed parts can need (one delimiter per part, one
// close per multipart, and slack for "-- " signatures and the like).
std::string_view within_part_budget(std::string_view raw, const DecodeLimits& limits) {
  const std::size_t budget = 2 * static_cast<std::size_t>(std::max(limits.max_parts, 0)) + 64;
  std::size_t seen = 0;
  for (std::size_t pos = 0; pos < raw.size();) {
    if (raw.compare(pos, 2, "--") == 0 && ++seen > budget) return raw.substr(0, pos);
    const std::size_t nl = raw.find('\n', pos);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return raw;
}

}  // namespace

const char* to_string(DecodeErrorKind kind) {
  switch (kind) {
    case DecodeErrorKind::too_large: return "too_large";
    case DecodeErrorKind::not_a_message: return "not_a_message";
  }
  return "not_a_message";
}

std::expected<Email, DecodeError> decode(std::string_view raw, std::span<const std::string> own_addresses,
                                         const DecodeLimits& limits) {
  if (raw.size() > limits.max_bytes)
    return std::unexpected(DecodeError{
        DecodeErrorKind::too_large,
        "message of " + std::to_string(raw.size()) + " bytes, over the limit of " + std::to_string(limits.max_bytes)});
  if (detail::trim_space(raw).empty())
    return std::unexpected(DecodeError{DecodeErrorKind::not_a_message, "empty message"});
  try {
    detail::ensure_gmime();
    std::vector<std::string> defect_list;
    Defects defects(defect_list);
    auto options = make_options(defects);
    const std::string_view input = within_part_budget(raw, limits);
    if (input.size() < raw.size()) defects.add("more than " + std::to_string(limits.max_parts) + " parts");
    Ref<GMimeStream> stream(g_mime_stream_mem_new_with_buffer(input.data(), input.size()));
    Ref<GMimeParser> parser(g_mime_parser_new_with_stream(stream.get()));
    g_mime_parser_set_format(parser.get(), GMIME_FORMAT_MESSAGE);
    GMimeMessage* parsed = g_mime_parser_construct_message(parser.get(), options.get());
    if (!parsed) return std::unexpected(DecodeError{DecodeErrorKind::not_a_message, "no message headers found"});
    Ref<GMimeMessage> message(parsed);
    Email email = decode_message(message.get(), options.get(), own_addresses, limits, defects);
    email.defects = std::move(defect_list);
    return email;
  } catch (const std::bad_alloc&) {
    return std::unexpected(DecodeError{DecodeErrorKind::too_large, "out of memory while decoding"});
  } catch (const std::exception& e) {
    return std::unexpected(DecodeError{DecodeErrorKind::not_a_message, e.what()});
  }
}

}  // namespace dispatchd::email
