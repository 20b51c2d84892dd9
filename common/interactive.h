#pragma once
// Interactive replies: reply buttons and lists, as a catalog action may send them
// (docs/catalog.md, "Interactive fields"). Pure; shared by the validator (which checks what
// the model wrote), the outbox (which stores the checked choice) and the channels (WhatsApp
// sends it as an interactive message, Gmail as a numbered list under the text).
//
// What the model writes, the field's value:
//   buttons  [{"id": "confirm", "title": "Confirm"}, ...]
//   list     {"button": "Options", "sections": [{"title": "Shipping",
//              "rows": [{"id": "express", "title": "Express", "description": "1 day"}]}]}
// What the outbox stores (to_json, parse_stored): the same with its kind,
//   {"type": "button", "buttons": [...]} or {"type": "list", "button": ..., "sections": [...]}.
//
// The limits are Meta's, from the Cloud API reference pages "Interactive reply buttons
// messages" and "Interactive list messages": lengths in Unicode code points.

#include <cstddef>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dispatchd::interactive {

enum class Kind { buttons, list };

inline constexpr std::size_t k_max_buttons = 3;
inline constexpr std::size_t k_max_button_title = 20;
inline constexpr std::size_t k_max_button_id = 256;
inline constexpr std::size_t k_max_list_button = 20;
inline constexpr std::size_t k_max_sections = 10;
inline constexpr std::size_t k_max_rows = 10;  // in all sections together
inline constexpr std::size_t k_max_section_title = 24;
inline constexpr std::size_t k_max_row_id = 200;
inline constexpr std::size_t k_max_row_title = 24;
inline constexpr std::size_t k_max_row_description = 72;
// The message text above the choices: Meta allows 1024 with buttons, 4096 with a list.
inline constexpr std::size_t k_max_buttons_body = 1024;
inline constexpr std::size_t k_max_list_body = 4096;

struct Button {
  std::string id;
  std::string title;
};

struct Row {
  std::string id;
  std::string title;
  std::optional<std::string> description;
};

struct Section {
  std::string title;
  std::vector<Row> rows;
};

struct Choices {
  Kind kind = Kind::buttons;
  std::vector<Button> buttons;  // Kind::buttons
  std::string list_button;      // Kind::list: the label of the button that opens the list
  std::vector<Section> sections;
};

// What is wrong with a value, as the validator reports it (its error code of that name).
enum class ProblemKind { type, required, additional_property, min_length, max_length, min_items, max_items, duplicate };

struct Problem {
  std::string pointer;  // relative to the field's value: "" or "/0/title", "/sections/1/rows/0/id"
  ProblemKind kind = ProblemKind::type;
  std::string message;
};

// Reads a field's value as the model wrote it (compact or not, valid JSON; REQUIRES: valid
// UTF-8) and checks every rule: the shape (no other members, every required one), Meta's
// limits, non-empty titles and ids, ids unique in the message, button titles unique. Every
// problem is reported, not only the first.
[[nodiscard]] std::expected<Choices, std::vector<Problem>> read(Kind kind, std::string_view json);

// The stored form (the header's second shape), compact.
std::string to_json(const Choices& choices);
// Reads what to_json wrote, checked as read() checks; a message when it is not that.
[[nodiscard]] std::expected<Choices, std::string> parse_stored(std::string_view json);

// The text and its choices as plain text, for a channel without interactive messages:
// the text, a blank line, then one numbered line per choice ("1. Title", "2. Title - what
// it is" for a row with a description; a list's section titles as lines of their own).
std::string as_text(std::string_view body, const Choices& choices);

// The longest text Meta accepts above `kind`'s choices.
std::size_t max_body(Kind kind);

const char* to_string(ProblemKind kind);  // the validator's error code

}  // namespace dispatchd::interactive
