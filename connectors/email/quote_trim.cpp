// Trimming a reply's quoted history from plain text: the model answers the new part only.
#include <algorithm>
#include <cctype>
#include <vector>

#include "connectors/email/internal/text.h"

namespace dispatchd::email::detail {
namespace {

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  return std::equal(prefix.begin(), prefix.end(), s.begin(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
}

bool ends_with(std::string_view s, std::string_view suffix) { return s.ends_with(suffix); }

bool is_quoted(std::string_view line) { return !line.empty() && line.front() == '>'; }

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (true) {
    const std::size_t nl = text.find('\n');
    lines.push_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

// "On Mon, 30 Nov 2026 at 12:00, Ana <ana@example.com> wrote:" and its translations. Mail
// clients wrap long attributions, so the caller also tries a line joined with the next.
bool is_attribution(std::string_view line) {
  line = trim_space(line);
  if (line.size() < 8 || line.size() > 400 || line.back() != ':') return false;
  const bool english = starts_with_ci(line, "On ") && ends_with(line, "wrote:");
  const bool spanish = starts_with_ci(line, "El ") && ends_with(line, "escribió:");
  const bool french = starts_with_ci(line, "Le ") && (ends_with(line, "a écrit :") || ends_with(line, "a écrit:"));
  const bool german = starts_with_ci(line, "Am ") && line.find(" schrieb") != std::string_view::npos;
  const bool portuguese = starts_with_ci(line, "Em ") && ends_with(line, "escreveu:");
  return english || spanish || french || german || portuguese;
}

// The index of the first non-blank line at or after `i`, or lines.size().
std::size_t next_nonblank(const std::vector<std::string_view>& lines, std::size_t i) {
  while (i < lines.size() && trim_space(lines[i]).empty()) ++i;
  return i;
}

bool attribution_at(const std::vector<std::string_view>& lines, std::size_t i) {
  std::size_t last = i;
  bool found = is_attribution(lines[i]);
  if (!found && i + 1 < lines.size() && !trim_space(lines[i + 1]).empty()) {
    const std::string joined = std::string(trim_space(lines[i])) + " " + std::string(trim_space(lines[i + 1]));
    found = is_attribution(joined);
    last = i + 1;
  }
  if (!found) return false;
  const std::size_t next = next_nonblank(lines, last + 1);
  return next < lines.size() && is_quoted(lines[next]);
}

bool is_original_message_separator(std::string_view line) {
  line = trim_space(line);
  for (const auto marker : {"-----Original Message-----", "-----Mensaje original-----", "-----Message d'origine-----",
                            "-----Ursprüngliche Nachricht-----", "-----Original Nachricht-----"})
    if (starts_with_ci(line, marker)) return true;
  return false;
}

// Outlook's header block of the original: "From: ..." and, within the next few lines,
// "Sent: ..." (or "Date: ...") and "To:" or "Subject:". A run of underscores above it belongs to it.
bool outlook_header_at(const std::vector<std::string_view>& lines, std::size_t i) {
  const auto from = trim_space(lines[i]);
  if (!starts_with_ci(from, "From:") && !starts_with_ci(from, "De:") && !starts_with_ci(from, "Von:")) return false;
  bool sent = false, to = false;
  for (std::size_t j = i + 1; j < lines.size() && j <= i + 5; ++j) {
    const auto line = trim_space(lines[j]);
    sent = sent || starts_with_ci(line, "Sent:") || starts_with_ci(line, "Date:") || starts_with_ci(line, "Enviado:") ||
           starts_with_ci(line, "Envoyé :") || starts_with_ci(line, "Gesendet:");
    to = to || starts_with_ci(line, "To:") || starts_with_ci(line, "Subject:") || starts_with_ci(line, "Para:") ||
         starts_with_ci(line, "À :") || starts_with_ci(line, "An:");
  }
  return sent && to;
}

bool is_underscore_rule(std::string_view line) {
  line = trim_space(line);
  return line.size() >= 10 && line.find_first_not_of('_') == std::string_view::npos;
}

// Where the quoted history starts: the first attribution, separator or header block, else a
// trailing block of ">" lines; lines.size() when there is none.
std::size_t history_start(const std::vector<std::string_view>& lines) {
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (is_original_message_separator(lines[i]) || attribution_at(lines, i)) return i;
    if (outlook_header_at(lines, i)) {
      const std::size_t prev = i > 0 ? i - 1 : i;
      return i > 0 && is_underscore_rule(lines[prev]) ? prev : i;
    }
  }
  std::size_t start = lines.size();
  for (std::size_t i = lines.size(); i-- > 0;) {
    if (is_quoted(lines[i]))
      start = i;
    else if (!trim_space(lines[i]).empty())
      break;
  }
  return start;
}

}  // namespace

std::string_view trim_space(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower_ascii(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string trim_quoted(std::string_view text) {
  const auto lines = split_lines(text);
  const std::size_t cut = history_start(lines);
  if (cut == lines.size()) return std::string(text);
  std::string out;
  for (std::size_t i = 0; i < cut; ++i) {
    out.append(lines[i]);
    out.push_back('\n');
  }
  out = tidy_lines(out);
  return out.empty() ? std::string(text) : out;
}

}  // namespace dispatchd::email::detail
