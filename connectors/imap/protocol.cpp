#include "connectors/imap/protocol.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <limits>
#include <utility>

namespace dispatchd::imap {
namespace {

Error imap_protocol_error(std::string message) { return Error{ErrorKind::protocol, std::move(message)}; }
Error imap_invalid(std::string message) { return Error{ErrorKind::invalid_argument, std::move(message)}; }

char imap_upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

bool imap_iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return imap_upper(x) == imap_upper(y); });
}

std::string imap_upper_copy(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = imap_upper(c);
  return out;
}

// The next line of `text` (without its CRLF or LF), advancing `text`.
std::string_view imap_next_line(std::string_view& text) {
  std::size_t end = text.find('\n');
  std::string_view line = text.substr(0, end);
  text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

// A 32-bit unsigned number (RFC 3501 number / nz-number); nullopt when `token` is not one.
std::optional<std::uint32_t> imap_number(std::string_view token) {
  if (token.empty() || token.size() > 10) return std::nullopt;
  std::uint64_t value = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (value > std::numeric_limits<std::uint32_t>::max()) return std::nullopt;
  return static_cast<std::uint32_t>(value);
}

// Splits off the first space-separated word of `text`.
std::string_view imap_word(std::string_view& text) {
  std::size_t end = text.find(' ');
  std::string_view word = text.substr(0, end);
  text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
  return word;
}

bool imap_is_atom_char(unsigned char c) {
  if (c <= 0x1f || c >= 0x7f) return false;
  switch (c) {
    case '(':
    case ')':
    case '{':
    case ' ':
    case '%':
    case '*':
    case '"':
    case '\\':
    case ']': return false;
    default: return true;
  }
}

// A parenthesised list of flags "(\Seen $X)" at the start of `text`; advances past ')'.
std::optional<std::vector<std::string>> imap_flag_list_at(std::string_view& text) {
  if (text.empty() || text.front() != '(') return std::nullopt;
  std::size_t close = text.find(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view inner = text.substr(1, close - 1);
  text.remove_prefix(close + 1);
  std::vector<std::string> flags;
  while (!inner.empty()) {
    std::string_view flag = imap_word(inner);
    if (flag.empty()) continue;
    for (std::size_t i = 0; i < flag.size(); ++i) {
      auto c = static_cast<unsigned char>(flag[i]);
      bool ok = imap_is_atom_char(c) || (i == 0 && c == '\\') || (flag == "\\*");
      if (!ok) return std::nullopt;
    }
    flags.emplace_back(flag);
  }
  return flags;
}

// "[CODE args]" at the start of `text` (after "OK "/"NO "...): the code and the rest after
// "] ". nullopt when there is no bracket; an unclosed bracket is malformed (empty optional
// inside).
struct ImapRespCode {
  std::string_view code;  // "UIDVALIDITY 3"
  std::string_view rest;
};
std::optional<std::optional<ImapRespCode>> imap_resp_code(std::string_view text) {
  if (text.empty() || text.front() != '[') return std::nullopt;
  std::size_t close = text.find(']');
  if (close == std::string_view::npos) return std::optional<ImapRespCode>{};
  ImapRespCode out{text.substr(1, close - 1), text.substr(close + 1)};
  if (!out.rest.empty() && out.rest.front() == ' ') out.rest.remove_prefix(1);
  return std::optional<ImapRespCode>{out};
}

// Skips one FETCH attribute value at the start of `text`: a number, atom, NIL, quoted
// string or parenthesised list (nested, counted without recursion). A literal is refused.
std::optional<Error> imap_skip_value(std::string_view& text) {
  if (text.empty()) return imap_protocol_error("a FETCH attribute without a value");
  if (text.front() == '{') return imap_protocol_error("a literal in a FETCH line");
  int depth = 0;
  std::size_t i = 0;
  bool in_quote = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (in_quote) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_quote = false;
        if (depth == 0) {
          ++i;
          break;
        }
      }
      continue;
    }
    if (c == '"') {
      in_quote = true;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      if (depth == 0) break;  // the end of the attribute list
      if (--depth == 0) {
        ++i;
        break;
      }
    } else if (c == '{') {
      return imap_protocol_error("a literal in a FETCH line");
    } else if (c == ' ' && depth == 0) {
      break;
    }
  }
  if (in_quote || depth != 0) return imap_protocol_error("an unbalanced FETCH value");
  text.remove_prefix(i);
  return std::nullopt;
}

// A FETCH attribute's name: an atom, with a bracketed section ("BODY[HEADER.FIELDS (X)]")
// and a partial "<0>" as written.
std::string_view imap_attribute_name(std::string_view& text) {
  std::size_t i = 0;
  while (i < text.size() && text[i] != ' ' && text[i] != '(' && text[i] != ')' && text[i] != '[') ++i;
  if (i < text.size() && text[i] == '[') {
    std::size_t close = text.find(']', i);
    i = close == std::string_view::npos ? text.size() : close + 1;
    if (i < text.size() && text[i] == '<') {
      std::size_t end = text.find('>', i);
      i = end == std::string_view::npos ? text.size() : end + 1;
    }
  }
  std::string_view name = text.substr(0, i);
  text.remove_prefix(i);
  return name;
}

std::string imap_system_flag(std::string_view flag) {
  constexpr std::array<std::string_view, 5> k_system_flags = {"\\Seen", "\\Answered", "\\Flagged", "\\Deleted",
                                                              "\\Draft"};
  for (std::string_view known : k_system_flags) {
    if (imap_iequal(flag, known)) return std::string(known);
  }
  return {};
}

}  // namespace

std::string_view to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::connection: return "connection";
    case ErrorKind::timeout: return "timeout";
    case ErrorKind::unavailable: return "unavailable";
    case ErrorKind::protocol: return "protocol";
    case ErrorKind::auth_refused: return "auth_refused";
    case ErrorKind::tls_refused: return "tls_refused";
    case ErrorKind::mailbox_missing: return "mailbox_missing";
    case ErrorKind::uidvalidity_changed: return "uidvalidity_changed";
    case ErrorKind::message_missing: return "message_missing";
    case ErrorKind::too_large: return "too_large";
    case ErrorKind::refused: return "refused";
    case ErrorKind::unsupported: return "unsupported";
    case ErrorKind::invalid_argument: return "invalid_argument";
  }
  return "unknown";
}

bool is_retryable(ErrorKind kind) {
  return kind == ErrorKind::connection || kind == ErrorKind::timeout || kind == ErrorKind::unavailable ||
         kind == ErrorKind::protocol;
}

Result<MailboxStatus> parse_mailbox_status(std::string_view untagged) {
  MailboxStatus status;
  bool have_uidvalidity = false;
  while (!untagged.empty()) {
    std::string_view line = imap_next_line(untagged);
    if (!line.starts_with("* ")) continue;
    std::string_view rest = line.substr(2);
    std::string_view first = imap_word(rest);
    if (auto number = imap_number(first)) {
      std::string_view what = imap_word(rest);
      if (imap_iequal(what, "EXISTS")) status.exists = *number;
      continue;
    }
    if (imap_iequal(first, "FLAGS")) {
      auto flags = imap_flag_list_at(rest);
      if (!flags) return std::unexpected(imap_protocol_error("a malformed FLAGS line"));
      status.flags = std::move(*flags);
      continue;
    }
    if (!imap_iequal(first, "OK")) continue;
    auto code = imap_resp_code(rest);
    if (!code) continue;
    if (!*code) return std::unexpected(imap_protocol_error("an unclosed response code"));
    std::string_view text = (*code)->code;
    std::string_view name = imap_word(text);
    if (imap_iequal(name, "UIDVALIDITY") || imap_iequal(name, "UIDNEXT")) {
      auto number = imap_number(text);
      if (!number || *number == 0) {
        return std::unexpected(imap_protocol_error("[" + std::string(name) + "] without a valid number"));
      }
      if (imap_iequal(name, "UIDVALIDITY")) {
        status.uidvalidity = *number;
        have_uidvalidity = true;
      } else {
        status.uidnext = *number;
      }
    } else if (imap_iequal(name, "PERMANENTFLAGS")) {
      // The list holds "\*", and its ')' is followed by the code's ']'.
      std::string_view all = line.substr(line.find('[') + 1);
      imap_word(all);
      auto flags = imap_flag_list_at(all);
      if (!flags) return std::unexpected(imap_protocol_error("a malformed PERMANENTFLAGS code"));
      status.permanent_flags = std::move(*flags);
    }
  }
  if (!have_uidvalidity) return std::unexpected(imap_protocol_error("no UIDVALIDITY in the mailbox's status"));
  return status;
}

Result<std::vector<std::uint32_t>> parse_search(std::string_view untagged) {
  std::vector<std::uint32_t> uids;
  bool seen = false;
  while (!untagged.empty()) {
    std::string_view line = imap_next_line(untagged);
    if (!line.starts_with("* ")) continue;
    std::string_view rest = line.substr(2);
    std::string_view first = imap_word(rest);
    if (!imap_iequal(first, "SEARCH")) continue;
    seen = true;
    while (!rest.empty()) {
      std::string_view token = imap_word(rest);
      if (token.empty()) continue;
      if (token.front() == '(') break;  // RFC 7162's "(MODSEQ n)" ends the list
      auto uid = imap_number(token);
      if (!uid || *uid == 0) return std::unexpected(imap_protocol_error("a SEARCH result that is not a UID"));
      uids.push_back(*uid);
    }
  }
  if (!seen) return std::unexpected(imap_protocol_error("no SEARCH response"));
  std::sort(uids.begin(), uids.end());
  uids.erase(std::unique(uids.begin(), uids.end()), uids.end());
  return uids;
}

Result<FetchFlags> parse_fetch_line(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (!line.starts_with("* ")) return std::unexpected(imap_protocol_error("not an untagged line"));
  std::string_view rest = line.substr(2);
  auto sequence = imap_number(imap_word(rest));
  if (!sequence || *sequence == 0) return std::unexpected(imap_protocol_error("a FETCH line without its number"));
  if (!imap_iequal(imap_word(rest), "FETCH") || rest.empty() || rest.front() != '(') {
    return std::unexpected(imap_protocol_error("not a FETCH line"));
  }
  rest.remove_prefix(1);
  FetchFlags out;
  out.sequence = *sequence;
  while (true) {
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    if (rest.empty()) return std::unexpected(imap_protocol_error("a FETCH line cut short"));
    if (rest.front() == ')') break;
    std::string_view name = imap_attribute_name(rest);
    if (name.empty()) return std::unexpected(imap_protocol_error("a FETCH attribute without a name"));
    if (rest.empty() || rest.front() != ' ') return std::unexpected(imap_protocol_error("a FETCH line cut short"));
    rest.remove_prefix(1);
    if (imap_iequal(name, "UID")) {
      std::size_t end = rest.find_first_of(" )");
      auto uid = imap_number(rest.substr(0, end));
      if (!uid || *uid == 0) return std::unexpected(imap_protocol_error("a FETCH UID that is not a number"));
      out.uid = *uid;
      rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
    } else if (imap_iequal(name, "FLAGS")) {
      auto flags = imap_flag_list_at(rest);
      if (!flags) return std::unexpected(imap_protocol_error("a malformed FETCH FLAGS list"));
      out.flags = std::move(*flags);
      out.has_flags = true;
    } else if (auto error = imap_skip_value(rest)) {
      return std::unexpected(std::move(*error));
    }
  }
  return out;
}

Result<std::vector<FetchFlags>> parse_fetch(std::string_view untagged) {
  std::vector<FetchFlags> out;
  while (!untagged.empty()) {
    std::string_view line = imap_next_line(untagged);
    if (!line.starts_with("* ")) continue;
    std::string_view rest = line.substr(2);
    if (!imap_number(imap_word(rest)) || !imap_iequal(imap_word(rest), "FETCH")) continue;
    auto fetched = parse_fetch_line(line);
    if (!fetched) return std::unexpected(std::move(fetched.error()));
    out.push_back(std::move(*fetched));
  }
  return out;
}

Untagged parse_untagged(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  Untagged out;
  if (line == "+" || line.starts_with("+ ")) {
    out.type = Untagged::Type::continuation;
    return out;
  }
  if (!line.starts_with("* ")) return out;
  std::string_view rest = line.substr(2);
  std::string_view first = imap_word(rest);
  if (imap_iequal(first, "BYE")) {
    out.type = Untagged::Type::bye;
    out.text = std::string(rest);
    return out;
  }
  auto number = imap_number(first);
  if (!number) return out;
  std::string_view what = imap_word(rest);
  out.number = *number;
  if (imap_iequal(what, "EXISTS")) {
    out.type = Untagged::Type::exists;
  } else if (imap_iequal(what, "RECENT")) {
    out.type = Untagged::Type::recent;
  } else if (imap_iequal(what, "EXPUNGE")) {
    out.type = Untagged::Type::expunge;
  } else if (imap_iequal(what, "FETCH")) {
    out.type = Untagged::Type::fetch;
  } else {
    out.number = 0;
  }
  return out;
}

std::optional<Tagged> parse_tagged(std::string_view line, std::string_view tag) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (tag.empty() || line.size() <= tag.size() || !line.starts_with(tag) || line[tag.size()] != ' ') {
    return std::nullopt;
  }
  std::string_view rest = line.substr(tag.size() + 1);
  std::string_view status = imap_word(rest);
  Tagged out;
  if (imap_iequal(status, "OK")) {
    out.status = Tagged::Status::ok;
  } else if (imap_iequal(status, "NO")) {
    out.status = Tagged::Status::no;
  } else if (imap_iequal(status, "BAD")) {
    out.status = Tagged::Status::bad;
  } else {
    return std::nullopt;
  }
  auto code = imap_resp_code(rest);
  if (code && *code) {
    out.code = std::string((*code)->code);
    out.text = std::string((*code)->rest);
  } else {
    out.text = std::string(rest);
  }
  return out;
}

ErrorKind classify_refusal(std::string_view verb, const Tagged& completion) {
  std::string_view code_text = completion.code;
  std::string code = imap_upper_copy(imap_word(code_text));
  if (code == "UNAVAILABLE" || code == "INUSE" || code == "SERVERBUG" || code == "OVERQUOTA" || code == "LIMIT") {
    return ErrorKind::unavailable;
  }
  if (code == "AUTHENTICATIONFAILED" || code == "AUTHORIZATIONFAILED" || code == "EXPIRED" ||
      code == "PRIVACYREQUIRED" || code == "CONTACTADMIN") {
    return ErrorKind::auth_refused;
  }
  if (code == "NONEXISTENT" || code == "TRYCREATE") return ErrorKind::mailbox_missing;
  if (code == "EXPUNGEISSUED") return ErrorKind::message_missing;
  std::string upper_verb = imap_upper_copy(verb);
  if (upper_verb == "LOGIN" || upper_verb == "AUTHENTICATE") return ErrorKind::auth_refused;
  if (upper_verb == "SELECT" || upper_verb == "EXAMINE" || upper_verb == "STATUS") return ErrorKind::mailbox_missing;
  if (upper_verb == "IDLE") return ErrorKind::unsupported;
  return ErrorKind::refused;
}

std::optional<AppendUid> parse_appenduid(const Tagged& completion) {
  std::string_view code = completion.code;
  if (!imap_iequal(imap_word(code), "APPENDUID")) return std::nullopt;
  auto uidvalidity = imap_number(imap_word(code));
  auto uid = imap_number(imap_word(code));
  if (!uidvalidity || !uid || *uidvalidity == 0 || *uid == 0 || !code.empty()) return std::nullopt;
  return AppendUid{*uidvalidity, *uid};
}

Result<std::string> quoted(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out.push_back('"');
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    if (byte == '\r' || byte == '\n' || byte == 0) {
      return std::unexpected(imap_invalid("CR, LF or NUL in a quoted string"));
    }
    if (byte > 0x7f) return std::unexpected(imap_invalid("an 8-bit byte in a quoted string"));
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

Result<std::string> astring(std::string_view text) {
  bool atom = !text.empty() && std::all_of(text.begin(), text.end(),
                                           [](char c) { return imap_is_atom_char(static_cast<unsigned char>(c)); });
  if (atom) return std::string(text);
  return quoted(text);
}

Result<std::string> modified_utf7(std::string_view utf8) {
  constexpr std::string_view k_alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+,";
  std::string out;
  std::vector<std::uint16_t> units;  // UTF-16 of the current non-ASCII run
  auto flush = [&] {
    if (units.empty()) return;
    out.push_back('&');
    std::uint32_t bits = 0;
    int count = 0;
    for (std::uint16_t unit : units) {
      bits = (bits << 16) | unit;
      count += 16;
      while (count >= 6) {
        count -= 6;
        out.push_back(k_alphabet[(bits >> count) & 0x3f]);
      }
      bits &= (1u << count) - 1;
    }
    if (count > 0) out.push_back(k_alphabet[(bits << (6 - count)) & 0x3f]);
    out.push_back('-');
    units.clear();
  };
  std::size_t i = 0;
  while (i < utf8.size()) {
    auto c = static_cast<unsigned char>(utf8[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f) return std::unexpected(imap_invalid("a control character in a mailbox name"));
      flush();
      if (c == '&') {
        out += "&-";
      } else {
        out.push_back(static_cast<char>(c));
      }
      ++i;
      continue;
    }
    int length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
    if (length == 0 || c > 0xf4 || i + static_cast<std::size_t>(length) > utf8.size()) {
      return std::unexpected(imap_invalid("a mailbox name that is not UTF-8"));
    }
    std::uint32_t point = c & (0xff >> (length + 1));
    for (int k = 1; k < length; ++k) {
      auto next = static_cast<unsigned char>(utf8[i + static_cast<std::size_t>(k)]);
      if ((next & 0xc0) != 0x80) return std::unexpected(imap_invalid("a mailbox name that is not UTF-8"));
      point = (point << 6) | (next & 0x3f);
    }
    constexpr std::array<std::uint32_t, 5> k_min = {0, 0, 0x80, 0x800, 0x10000};
    if (point < k_min[static_cast<std::size_t>(length)] || point > 0x10ffff || (point >= 0xd800 && point <= 0xdfff)) {
      return std::unexpected(imap_invalid("a mailbox name that is not UTF-8"));
    }
    if (point >= 0x10000) {
      point -= 0x10000;
      units.push_back(static_cast<std::uint16_t>(0xd800 + (point >> 10)));
      units.push_back(static_cast<std::uint16_t>(0xdc00 + (point & 0x3ff)));
    } else {
      units.push_back(static_cast<std::uint16_t>(point));
    }
    i += static_cast<std::size_t>(length);
  }
  flush();
  return out;
}

Result<std::string> mailbox_argument(std::string_view mailbox) {
  if (mailbox.empty()) return std::unexpected(imap_invalid("an empty mailbox name"));
  if (imap_iequal(mailbox, "INBOX")) return std::string("INBOX");
  auto encoded = modified_utf7(mailbox);
  if (!encoded) return std::unexpected(std::move(encoded.error()));
  return astring(*encoded);
}

Result<std::string> flag_list(std::span<const std::string> flags) {
  if (flags.empty()) return std::unexpected(imap_invalid("an empty flag list"));
  std::string out = "(";
  for (const std::string& flag : flags) {
    if (out.size() > 1) out.push_back(' ');
    if (!flag.empty() && flag.front() == '\\') {
      std::string system = imap_system_flag(flag);
      if (system.empty()) return std::unexpected(imap_invalid("not a flag a client may set: " + flag));
      out += system;
      continue;
    }
    bool atom = !flag.empty() && std::all_of(flag.begin(), flag.end(),
                                             [](char c) { return imap_is_atom_char(static_cast<unsigned char>(c)); });
    if (!atom) return std::unexpected(imap_invalid("a keyword that is not an atom"));
    out += flag;
  }
  out.push_back(')');
  return out;
}

Result<std::string> examine_command(std::string_view mailbox) {
  auto name = mailbox_argument(mailbox);
  if (!name) return std::unexpected(std::move(name.error()));
  return "EXAMINE " + *name;
}

std::string uid_search_from_command(std::uint32_t uid) {
  return "UID SEARCH UID " + std::to_string(std::max<std::uint32_t>(uid, 1)) + ":*";
}

Result<std::string> search_message_id_command(std::string_view message_id) {
  std::string id(message_id);
  if (!id.starts_with('<')) id = "<" + id + ">";
  if (id.size() <= 2 || !id.ends_with('>')) return std::unexpected(imap_invalid("an empty or malformed Message-ID"));
  auto value = quoted(id);
  if (!value) return std::unexpected(std::move(value.error()));
  return "UID SEARCH HEADER Message-ID " + *value;
}

Result<std::string> uid_store_add_flags_command(std::uint32_t uid, std::span<const std::string> flags) {
  if (uid == 0) return std::unexpected(imap_invalid("UID 0"));
  auto list = flag_list(flags);
  if (!list) return std::unexpected(std::move(list.error()));
  return "UID STORE " + std::to_string(uid) + " +FLAGS.SILENT " + *list;
}

Result<std::string> append_command(std::string_view mailbox, std::span<const std::string> flags, std::size_t size) {
  auto name = mailbox_argument(mailbox);
  if (!name) return std::unexpected(std::move(name.error()));
  std::string out = "APPEND " + *name;
  if (!flags.empty()) {
    auto list = flag_list(flags);
    if (!list) return std::unexpected(std::move(list.error()));
    out += " " + *list;
  }
  out += " {" + std::to_string(size) + "}";
  return out;
}

std::vector<std::uint32_t> uids_from(std::span<const std::uint32_t> uids, std::uint32_t first) {
  std::vector<std::uint32_t> out;
  std::copy_if(uids.begin(), uids.end(), std::back_inserter(out), [first](std::uint32_t uid) { return uid >= first; });
  return out;
}

std::string to_crlf(std::string_view raw) {
  std::string out;
  out.reserve(raw.size() + raw.size() / 32);
  for (std::size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (c == '\r') {
      out += "\r\n";
      if (i + 1 < raw.size() && raw[i + 1] == '\n') ++i;
    } else if (c == '\n') {
      out += "\r\n";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

Result<std::string> mailbox_url_path(std::string_view mailbox) {
  if (mailbox.empty()) return std::unexpected(imap_invalid("an empty mailbox name"));
  auto encoded = modified_utf7(mailbox);
  if (!encoded) return std::unexpected(std::move(encoded.error()));
  constexpr std::string_view k_hex = "0123456789ABCDEF";
  std::string out;
  for (char c : *encoded) {
    auto byte = static_cast<unsigned char>(c);
    bool unreserved = (byte >= 'A' && byte <= 'Z') || (byte >= 'a' && byte <= 'z') || (byte >= '0' && byte <= '9') ||
                      byte == '-' || byte == '.' || byte == '_' || byte == '~';
    if (unreserved) {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(k_hex[byte >> 4]);
      out.push_back(k_hex[byte & 0xf]);
    }
  }
  return out;
}

Result<std::string> curl_custom_request(std::string_view command) {
  std::string out;
  out.reserve(command.size());
  for (char c : command) {
    if (c == '\r' || c == '\n' || c == '\0') return std::unexpected(imap_invalid("CR, LF or NUL in a command"));
    if (c == '%') {
      out += "%25";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace dispatchd::imap
