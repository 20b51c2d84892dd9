// Fuzz target: what an IMAP server sends, as connectors/imap/protocol.h reads it (the
// status of EXAMINE/SELECT, UID SEARCH, FETCH lines, IDLE's lines, tagged completions), and
// the same bytes as an argument to the command builders.
// Invariants: a status has a UIDVALIDITY; SEARCH's UIDs are ascending, unique and non-zero;
// FETCH numbers are non-zero; APPENDUID's are non-zero; a quoted string unquotes to the input
// and holds no CR or LF; a mailbox argument, flag list, URL path or curl custom request holds
// no CR, LF or NUL (the URL path only unreserved bytes and %XX); modified UTF-7 is printable
// ASCII; to_crlf leaves no bare CR or LF.

#include <algorithm>
#include <string>
#include <vector>

#include "connectors/imap/protocol.h"
#include "fuzz/fuzz.h"

namespace {

using namespace dispatchd;
using namespace dispatchd::imap;

constexpr const char* k_target = "imap_protocol";

bool no_line_break(std::string_view text) {
  return text.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

std::string unquote(std::string_view quoted_text) {
  std::string out;
  for (std::size_t i = 1; i + 1 < quoted_text.size(); ++i) {
    if (quoted_text[i] == '\\') ++i;
    out.push_back(quoted_text[i]);
  }
  return out;
}

void check_readers(std::string_view input) {
  if (auto status = parse_mailbox_status(input)) {
    fuzz::require(status->uidvalidity != 0, k_target, "a mailbox status without UIDVALIDITY");
  }
  if (auto uids = parse_search(input)) {
    fuzz::require(std::adjacent_find(uids->begin(), uids->end(), std::greater_equal<>()) == uids->end(), k_target,
                  "SEARCH's UIDs are not ascending and unique");
    fuzz::require(std::find(uids->begin(), uids->end(), 0u) == uids->end(), k_target, "a SEARCH UID of 0");
    std::uint32_t first = uids->empty() ? 1 : uids->at(uids->size() / 2);
    auto kept = uids_from(*uids, first);
    fuzz::require(std::all_of(kept.begin(), kept.end(), [first](std::uint32_t uid) { return uid >= first; }), k_target,
                  "uids_from kept a UID below its first");
  }
  if (auto fetched = parse_fetch(input)) {
    for (const FetchFlags& one : *fetched) {
      fuzz::require(one.sequence != 0, k_target, "a FETCH with sequence number 0");
      fuzz::require(one.has_flags || one.flags.empty(), k_target, "flags without FLAGS");
    }
  }
  std::string_view rest = input;
  while (!rest.empty()) {
    std::size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    Untagged news = parse_untagged(line);
    if (news.type == Untagged::Type::other || news.type == Untagged::Type::continuation ||
        news.type == Untagged::Type::bye) {
      fuzz::require(news.number == 0, k_target, "a number for a line that has none");
    }
    std::string_view tag = line.substr(0, line.find(' '));
    if (auto tagged = parse_tagged(line, tag)) {
      for (std::string_view verb : {"LOGIN", "SELECT", "APPEND", "UID FETCH", "IDLE"}) {
        ErrorKind kind = classify_refusal(verb, *tagged);
        fuzz::require(!to_string(kind).empty(), k_target, "a refusal without a kind");
      }
      if (auto appended = parse_appenduid(*tagged)) {
        fuzz::require(appended->uidvalidity != 0 && appended->uid != 0, k_target, "APPENDUID with a 0");
      }
    }
  }
}

void check_builders(std::string_view input) {
  if (auto q = quoted(input)) {
    fuzz::require(q->size() >= 2 && q->front() == '"' && q->back() == '"', k_target, "a quoted string unquoted");
    fuzz::require(no_line_break(*q), k_target, "CR, LF or NUL in a quoted string");
    fuzz::require(unquote(*q) == input, k_target, "a quoted string does not unquote to its text");
  }
  if (auto a = astring(input)) fuzz::require(no_line_break(*a) && !a->empty(), k_target, "a bad astring");
  if (auto utf7 = modified_utf7(input)) {
    fuzz::require(std::all_of(utf7->begin(), utf7->end(), [](char c) { return c >= 0x20 && c < 0x7f; }), k_target,
                  "modified UTF-7 that is not printable ASCII");
  }
  if (auto name = mailbox_argument(input)) fuzz::require(no_line_break(*name), k_target, "CR or LF in a mailbox");
  if (auto path = mailbox_url_path(input)) {
    bool clean = std::all_of(path->begin(), path->end(), [](char c) {
      return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
             c == '_' || c == '~' || c == '%';
    });
    fuzz::require(clean, k_target, "a URL path with a reserved byte");
  }
  if (auto custom = curl_custom_request(input)) {
    fuzz::require(no_line_break(*custom), k_target, "CR or LF in a custom request");
    std::string decoded;
    for (std::size_t i = 0; i < custom->size(); ++i) {
      decoded.push_back((*custom)[i]);
      if (custom->compare(i, 3, "%25") == 0) i += 2;
    }
    fuzz::require(decoded == input, k_target, "a custom request does not decode to its command");
  }
  std::vector<std::string> flags = {std::string(input)};
  if (auto list = flag_list(flags)) fuzz::require(no_line_break(*list), k_target, "CR or LF in a flag list");
  if (auto command = search_message_id_command(input)) {
    fuzz::require(no_line_break(*command), k_target, "CR or LF in a search");
  }
  std::string crlf = to_crlf(input);
  for (std::size_t i = 0; i < crlf.size(); ++i) {
    if (crlf[i] == '\r') fuzz::require(i + 1 < crlf.size() && crlf[i + 1] == '\n', k_target, "a bare CR");
    if (crlf[i] == '\n') fuzz::require(i > 0 && crlf[i - 1] == '\r', k_target, "a bare LF");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input = fuzz::text(data, size);
  check_readers(input);
  check_builders(input);
  return 0;
}
