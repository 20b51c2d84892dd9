#include "validator/extract.h"

#include <algorithm>
#include <string>
#include <utility>

#include "common/json_reader.h"
#include "common/small_vector.h"
#include "common/strict_json.h"
#include "common/utf8.h"

namespace dispatchd::validator {
namespace {

// A stretch of the reply: either the content of a fenced block or text outside fences.
struct Region {
  std::size_t begin;
  std::size_t end;
  bool fenced;
};

// Lists kept inline: a reply has a handful of regions (more only with many fences).
struct FenceScan {
  SmallVector<Region, 8> regions;
  std::size_t blocks = 0;
  std::string_view first_info;  // the first block's info string ("json", "JSON", "")
  std::optional<Finding> error;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::size_t skip_space(std::string_view s, std::size_t i, std::size_t end) {
  while (i < end && is_space(s[i])) ++i;
  return i;
}

std::string_view trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && is_space(s[b])) ++b;
  while (e > b && is_space(s[e - 1])) --e;
  return s.substr(b, e - b);
}

Finding finding(std::string code, std::string message) { return {"", std::move(code), std::move(message)}; }

std::size_t run_of(std::string_view s, std::size_t i, std::size_t end, char c) {
  std::size_t n = 0;
  while (i + n < end && s[i + n] == c) ++n;
  return n;
}

// A one-line block such as ```json {"a":1}```: returns the content span, or nullopt when
// the line is not one.
std::optional<Region> inline_block(std::string_view s, std::size_t after_open, std::size_t line_end) {
  std::string_view rest = trim(s.substr(after_open, line_end - after_open));
  if (rest.size() < 3 || !rest.ends_with("```")) return std::nullopt;
  rest.remove_suffix(3);
  while (!rest.empty() && rest.back() == '`') rest.remove_suffix(1);
  std::size_t lang = 0;
  while (lang < rest.size() && is_alpha(rest[lang])) ++lang;
  if (lang < rest.size() && (is_space(rest[lang]) || rest[lang] == '{' || rest[lang] == '[')) rest.remove_prefix(lang);
  const auto begin = static_cast<std::size_t>(rest.data() - s.data());
  return Region{begin, begin + rest.size(), true};
}

void scan_fences(std::string_view s, std::size_t start, FenceScan& scan) {
  std::size_t outside_begin = start;
  bool open = false;
  char fence_char = 0;
  std::size_t fence_len = 0, content_begin = 0, open_line = 0, line_number = 0;
  for (std::size_t line = start; line < s.size(); ++line_number) {
    const std::size_t newline = s.find('\n', line);
    const std::size_t line_end = newline == std::string_view::npos ? s.size() : newline;
    const std::size_t next = newline == std::string_view::npos ? s.size() : newline + 1;
    std::size_t p = line;
    while (p < line_end && p - line < 3 && s[p] == ' ') ++p;
    const char c = p < line_end ? s[p] : '\0';
    const std::size_t run = (c == '`' || c == '~') ? run_of(s, p, line_end, c) : 0;
    const std::string_view rest = s.substr(p + run, line_end - p - run);
    if (!open && run >= 3) {
      if (c == '`' && rest.find('`') != std::string_view::npos) {
        if (const auto block = inline_block(s, p + run, line_end)) {
          scan.regions.push_back({outside_begin, line, false});
          scan.regions.push_back(*block);
          if (scan.blocks++ == 0) scan.first_info = "inline";
          outside_begin = next;
        }
      } else {
        scan.regions.push_back({outside_begin, line, false});
        if (scan.blocks == 0) scan.first_info = trim(rest);
        open = true;
        fence_char = c;
        fence_len = run;
        content_begin = next;
        open_line = line_number + 1;
      }
    } else if (open && c == fence_char && run >= fence_len && trim(rest).empty()) {
      scan.regions.push_back({content_begin, line, true});
      ++scan.blocks;
      open = false;
      outside_begin = next;
    }
    line = next;
  }
  if (open) {
    scan.error = finding("truncated", "the code fence opened on line " + std::to_string(open_line) +
                                          " is never closed: the reply is cut off");
    return;
  }
  scan.regions.push_back({outside_begin, s.size(), false});
}

bool is_literal_at(std::string_view s, std::size_t i, std::size_t end) {
  for (const std::string_view word : {"true", "false", "null"}) {
    if (s.substr(i, std::min(end, s.size()) - i).starts_with(word)) {
      const std::size_t after = i + word.size();
      return after >= end || !is_alpha(s[after]);
    }
  }
  return false;
}

bool is_unquoted_key(std::string_view s, std::size_t i, std::size_t end) {
  if (i >= end || !(is_alpha(s[i]) || s[i] == '_' || s[i] == '$')) return false;
  while (i < end && (is_alpha(s[i]) || is_digit(s[i]) || s[i] == '_' || s[i] == '$')) ++i;
  i = skip_space(s, i, end);
  return i < end && s[i] == ':';
}

// Whether the bracket at `i` opens something JSON-like rather than prose such as "[1]" in
// a footnote or "{name}" in a template. The test is deliberately generous: a false
// positive costs a re-ask, a false negative could let a fragment through.
bool json_looking(std::string_view s, std::size_t i, std::size_t end) {
  const std::size_t j = skip_space(s, i + 1, end);
  if (j >= end) return true;
  const char c = s[j];
  if (s[i] == '{') return c == '"' || c == '\'' || c == '}' || is_unquoted_key(s, j, end);
  return c == '{' || c == '[' || c == '"' || c == '\'' || c == '-' || c == ']' || is_digit(c) ||
         is_literal_at(s, j, end);
}

enum class MatchKind { closed, unclosed, mismatched, too_deep };
struct Match {
  MatchKind kind;
  std::size_t end;  // one past the closing bracket, or where matching stopped
};

// Finds the bracket closing the one at `i`, skipping brackets inside JSON strings.
// Iterative with an explicit stack bounded by `max_depth`: hostile nesting cannot recurse.
Match match_brackets(std::string_view s, std::size_t i, std::size_t end, std::size_t max_depth) {
  std::string expected;
  for (std::size_t k = i; k < end; ++k) {
    switch (s[k]) {
      case '"':  // skip the string: brackets inside it do not count
        k = json::string_end(s, k, end);
        if (k == std::string_view::npos) return {MatchKind::unclosed, end};
        break;
      case '{':
      case '[':
        if (expected.size() == max_depth) return {MatchKind::too_deep, k};
        expected.push_back(s[k] == '{' ? '}' : ']');
        break;
      case '}':
      case ']':
        if (expected.empty() || expected.back() != s[k]) return {MatchKind::mismatched, k};
        expected.pop_back();
        if (expected.empty()) return {MatchKind::closed, k + 1};
        break;
      default: break;
    }
  }
  return {MatchKind::unclosed, end};
}

// Where the bracket at `i` is closed. The reply's first JSON-looking object is tried with
// the strict reader (one try: `object` is then cleared), which leaves it read; when that
// succeeds the brackets match exactly where the object ends, as valid JSON has no other
// brackets outside its strings. What the reader refuses is matched bracket by bracket.
Match match_at(std::string_view s, std::size_t i, std::size_t end, std::size_t max_depth, json::Object*& object,
               bool& read) {
  read = false;
  if (object && s[i] == '{') {
    json::Object& target = *std::exchange(object, nullptr);
    if (const auto length = json::read_object_prefix(s.substr(i, end - i), max_depth, target)) {
      read = true;
      return {MatchKind::closed, i + *length};
    }
  }
  return match_brackets(s, i, end, max_depth);
}

struct Segment {
  std::size_t begin;
  std::size_t end;
  bool fenced;
  std::optional<std::size_t> enclosed_by;  // an open non-JSON-looking bracket around it
  bool read;                               // match_at read it into the object
};
using Segments = SmallVector<Segment, 4>;  // more than one is already an error

// Collects the JSON-looking structures of one region. Brackets that do not look like JSON
// are tracked too: a structure inside one of them (`{ /* draft */ "a": {...} }`,
// `[NaN, {...}]`) is part of something larger that is not JSON, and is marked so.
std::optional<Finding> scan_region(std::string_view s, const Region& region, const Limits& limits, Segments& out,
                                   json::Object*& object) {
  // Open non-JSON-looking brackets: how many, and where the outermost one opened.
  std::size_t prose_depth = 0, prose_first = 0;
  for (std::size_t i = region.begin; i < region.end; ++i) {
    const char c = s[i];
    if (c == '}' || c == ']') {
      if (prose_depth > 0) --prose_depth;
      continue;
    }
    if (c != '{' && c != '[') continue;
    if (!json_looking(s, i, region.end)) {
      if (prose_depth++ == 0) prose_first = i;
      continue;
    }
    bool read = false;
    const Match m = match_at(s, i, region.end, limits.max_depth, object, read);
    const auto at = [i] { return " (the value starting at byte " + std::to_string(i) + ")"; };
    switch (m.kind) {
      case MatchKind::unclosed: return finding("truncated", "the JSON is cut off: a bracket is never closed" + at());
      case MatchKind::too_deep:
        return finding("too_deep",
                       "brackets nested deeper than " + std::to_string(limits.max_depth) + " levels" + at());
      case MatchKind::mismatched:
        return finding("syntax",
                       "brackets do not match: byte " + std::to_string(m.end) + " closes the wrong one" + at());
      case MatchKind::closed:
        out.push_back(
            {i, m.end, region.fenced, prose_depth == 0 ? std::nullopt : std::optional<std::size_t>(prose_first), read});
        i = m.end - 1;
        break;
    }
  }
  return std::nullopt;
}

// Characters (code points) that are not whitespace in [begin, end).
std::size_t non_space(std::string_view s, std::size_t begin, std::size_t end) {
  std::size_t n = 0;
  for (std::size_t i = begin; i < end; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    n += (is_space(s[i]) || (c & 0xC0) == 0x80) ? 0 : 1;
  }
  return n;
}

// Counts prose (non-whitespace outside fence markers) before and after the segment.
std::pair<std::size_t, std::size_t> prose_around(std::string_view s, const FenceScan& scan, const Segment& seg) {
  std::size_t before = 0, after = 0;
  for (const auto& r : scan.regions) {
    before += non_space(s, r.begin, std::min(r.end, seg.begin));
    after += non_space(s, std::max(r.begin, seg.end), r.end);
  }
  return {before, after};
}

// Where the text after the taken value continues it as JSON, or nullopt: a closing bracket
// that no bracket after the value opened (`{...}}`, `{...}, "b": 1}`), or a double quote
// followed by a colon, the end of a `"name":` pair (`{...} "b": 1`). Either means the
// model's value was longer than the part that closed first. Prose stays prose: balanced or
// unclosed brackets (`{name}`, `[see below]`, `(see [note`) and quoted words that no colon
// follows. The regions after the value are read as one text, fence lines left out, so a
// continuation after the closing fence counts too. One pass: each byte is read at most
// twice (a run of spaces after a quote).
std::optional<std::size_t> continuation_after(std::string_view s, const FenceScan& scan, std::size_t after) {
  std::size_t open = 0;  // brackets opened after the value and not closed yet
  for (const auto& r : scan.regions) {
    for (std::size_t i = std::max(r.begin, after); i < r.end; ++i) {
      const char c = s[i];
      if (c == '{' || c == '[') {
        ++open;
      } else if (c == '}' || c == ']') {
        if (open == 0) return i;
        --open;
      } else if (c == '"') {
        const std::size_t next = skip_space(s, i + 1, r.end);
        if (next < r.end && s[next] == ':') return i;
      }
    }
  }
  return std::nullopt;
}

Extraction extract_into(std::string_view reply, const Limits& limits, json::Object* object) {
  Extraction result;
  const auto fail = [&](std::string code, std::string message) {
    result.error = finding(std::move(code), std::move(message));
    return result;
  };
  if (reply.size() > limits.max_reply_bytes) {
    return fail("too_large", "the reply is " + std::to_string(reply.size()) + " bytes; at most " +
                                 std::to_string(limits.max_reply_bytes) + " are accepted");
  }
  if (const auto bad = utf8::first_invalid(reply)) {
    return fail("invalid_utf8", "the reply is not valid UTF-8 (byte " + std::to_string(*bad) + ")");
  }
  std::size_t start = 0;
  if (reply.starts_with("\xEF\xBB\xBF")) {
    start = 3;
    result.repairs.push_back({"bom", "removed a byte order mark"});
  }
  if (skip_space(reply, start, reply.size()) == reply.size()) return fail("empty", "the reply is empty");

  FenceScan scan;
  scan_fences(reply, start, scan);
  if (scan.error) {
    result.error = std::move(scan.error);
    return result;
  }
  Segments segments;
  for (const auto& region : scan.regions) {
    if (auto error = scan_region(reply, region, limits, segments, object)) {
      result.error = std::move(error);
      return result;
    }
  }
  if (segments.empty()) return fail("no_json", "the reply holds no JSON object");
  if (segments.size() > 1) {
    return fail("ambiguous", "the reply holds " + std::to_string(segments.size()) + " JSON values (at bytes " +
                                 std::to_string(segments[0].begin) + " and " + std::to_string(segments[1].begin) +
                                 "); exactly one is allowed");
  }
  if (scan.blocks > 1) {
    return fail("ambiguous",
                "the reply holds " + std::to_string(scan.blocks) + " code blocks; exactly one JSON object is allowed");
  }
  const Segment& seg = segments[0];
  if (seg.enclosed_by) {
    return fail("syntax", "the JSON at byte " + std::to_string(seg.begin) + " sits inside a larger structure at byte " +
                              std::to_string(*seg.enclosed_by) +
                              " that is not valid JSON; it is never taken on its own");
  }
  if (scan.blocks == 1 && !seg.fenced) {
    return fail("ambiguous", "the reply has a code block and JSON outside it");
  }
  if (const auto at = continuation_after(reply, scan, seg.end)) {
    return fail("ambiguous", "the JSON at byte " + std::to_string(seg.begin) + " is closed at byte " +
                                 std::to_string(seg.end - 1) + ", then continued: byte " + std::to_string(*at) +
                                 (reply[*at] == '"' ? " ends a \"name\": pair" : " closes a bracket never opened") +
                                 "; close the object once, after its last field");
  }
  if (scan.blocks == 1) {
    result.repairs.push_back(
        {"fence", "removed a code fence" +
                      (scan.first_info.empty() ? std::string() : " (" + std::string(scan.first_info) + ")")});
  }
  const auto [before, after] = prose_around(reply, scan, seg);
  if (before > 0)
    result.repairs.push_back(
        {"prose_before", "removed " + std::to_string(before) + " characters of text before the JSON"});
  if (after > 0)
    result.repairs.push_back(
        {"prose_after", "removed " + std::to_string(after) + " characters of text after the JSON"});
  result.offset = seg.begin;
  result.length = seg.end - seg.begin;
  result.object_read = seg.read;
  return result;
}

}  // namespace

Extraction extract(std::string_view reply, const Limits& limits) { return extract_into(reply, limits, nullptr); }

Extraction extract(std::string_view reply, const Limits& limits, json::Object& object) {
  return extract_into(reply, limits, &object);
}

}  // namespace dispatchd::validator
