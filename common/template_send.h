#pragma once
// A template message as decided: which template, in which language, and the value of each
// of its parameters (docs/catalog.md, "Template actions"). Pure; shared by the validator
// (which fills it from a valid reply), the outbox (which stores it on the action row, so what
// leaves is what was decided even when the catalog or the templates change meanwhile) and
// the channel that sends templates (WhatsApp builds its components from it and the stored
// template, connectors/whatsapp/template_message.h).
//
// Stored form (to_json, parse_stored), parameters in order (header, body, buttons):
//   {"name":"order_shipped","language":"en_US","parameters":[
//     {"part":"header","name":"image","value":"https://..."},
//     {"part":"body","name":"1","value":"A-1234"},
//     {"part":"button","button":0,"name":"1","value":"A-1234"}]}

#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dispatchd::template_send {

// Where a parameter sits in the template.
enum class Part { header, body, button };

struct Parameter {
  Part part = Part::body;
  int button = 0;     // for a button: its position among the template's buttons, from 0
  std::string name;   // "1" for {{1}}, "order_id" for {{order_id}}; a header's media: "image", "video", "document"
  std::string value;  // the text, or the media's link
};

struct TemplateSend {
  std::string name;
  std::string language;
  std::vector<Parameter> parameters;
};

const char* to_string(Part part);
bool is_media(std::string_view name);  // "image", "video" or "document"

// What WhatsApp refuses in a header's or the body's text parameter (Graph answers 132018,
// "Param text cannot have new-line/tab characters or more than 4 consecutive spaces"): one
// phrase ("has a line break"), nullopt when the value may be sent. Checked by the validator
// (so the model is re-asked) and again before the send.
std::optional<std::string> text_parameter_problem(std::string_view value);

std::string to_json(const TemplateSend& send);
// Reads to_json's form back; one phrase on what is wrong otherwise.
[[nodiscard]] std::expected<TemplateSend, std::string> parse_stored(std::string_view json);

// One line for people (the action's body, the trail): `template order_shipped (en_US): 1 = A-1234`.
std::string summary(const TemplateSend& send);

}  // namespace dispatchd::template_send
