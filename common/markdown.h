#pragma once
// Markdown for the documents dispatchctl writes for people (trail, replay and eval reports):
// one escaper for table cells, so that every document treats untrusted values alike.

#include <string>
#include <string_view>

namespace dispatchd::markdown {

// `text` as one table cell: line breaks and tabs become spaces (a cell is one line), and `|`
// (ends the cell), `\`, `` ` ``, `<`, `*`, `_` and `[` are backslash-escaped, so that a value
// from outside (a provider id, model output, an error quoting it) can neither end the cell
// nor start code, HTML, emphasis or a link when the document is rendered.
std::string table_cell(std::string_view text);

}  // namespace dispatchd::markdown
