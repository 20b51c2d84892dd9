#pragma once
#ifndef DISPATCHD_INTERNAL_CONNECTORS
#error "connectors/email/internal/ is private to connectors/: include the module's public headers instead"
#endif
// Turning a decoded body into the text the model sees (internal to the mail library):
// HTML reduced to text, quoted history trimmed, bytes made valid UTF-8.

#include <cstddef>
#include <string>
#include <string_view>

namespace dispatchd::email::detail {

struct BodyText {
  std::string full;     // the whole body as text
  std::string trimmed;  // without quoted history; equal to `full` when nothing was quoted
};

// `html` (UTF-8) as readable text, with libxml2's forgiving HTML parser: script, style and
// head dropped, block elements and <br> as line breaks, <li> as "- ", whitespace collapsed,
// entities decoded. `trimmed` leaves out Gmail's div.gmail_quote, <blockquote> and what
// follows Outlook's reply separator (div#divRplyFwdMsg, div#appendonsend). Never recurses on
// the document's nesting.
BodyText html_to_text(std::string_view html);

// `text` without a reply's quoted history: from an attribution line ("On ... wrote:",
// "El ... escribió:", "Le ... a écrit :", "Am ... schrieb ...:") followed by ">" lines, from
// Outlook's "-----Original Message-----" or "From: / Sent:" header block, or a trailing block
// of ">" lines. Returns `text` unchanged when trimming would leave nothing.
std::string trim_quoted(std::string_view text);

// `bytes` as valid UTF-8: each invalid sequence becomes U+FFFD. `replaced` counts them.
std::string valid_utf8(std::string_view bytes, std::size_t& replaced);

// The longest prefix of valid UTF-8 `text` of at most `max_bytes` bytes that does not split
// a character.
std::string_view cut_utf8(std::string_view text, std::size_t max_bytes);

// `s` without leading and trailing ASCII whitespace.
std::string_view trim_space(std::string_view s);

// `s` with ASCII letters lower-cased (header values, addresses, charset labels).
std::string lower_ascii(std::string_view s);

// Text with LF line ends, trailing blanks removed from each line, runs of blank lines
// collapsed to one, and no blank lines at either end.
std::string tidy_lines(std::string_view text);

}  // namespace dispatchd::email::detail
