#include "connectors/whatsapp/internal/message.h"

#include <cstdio>
#include <string_view>

#include "common/json_access.h"
#include "connectors/whatsapp/internal/json_util.h"

namespace dispatchd::whatsapp::detail {
namespace {

using json::member;
using json::string_of;
using rapidjson::Value;

struct KindName {
  MessageKind kind;
  std::string_view name;
};

constexpr KindName k_kinds[] = {
    {MessageKind::text, "text"},
    {MessageKind::image, "image"},
    {MessageKind::audio, "audio"},
    {MessageKind::video, "video"},
    {MessageKind::document, "document"},
    {MessageKind::sticker, "sticker"},
    {MessageKind::location, "location"},
    {MessageKind::contacts, "contacts"},
    {MessageKind::interactive, "interactive"},
    {MessageKind::button, "button"},
    {MessageKind::reaction, "reaction"},
    {MessageKind::order, "order"},
    {MessageKind::system, "system"},
    {MessageKind::unsupported, "unsupported"},
};

// True when `text` has something besides spaces and line breaks: only then is there
// anything to answer.
bool has_words(std::string_view text) { return text.find_first_not_of(" \t\r\n") != std::string_view::npos; }

MessageKind kind_of(std::string_view type) {
  for (const auto& [kind, name] : k_kinds) {
    if (name == type) return kind;
  }
  return MessageKind::unknown;
}

// "[label]" or "[label: detail]".
std::string bracket(std::string_view label, std::string_view detail = {}) {
  std::string out = "[";
  out += label;
  if (!detail.empty()) {
    out += ": ";
    out += detail;
  }
  out += "]";
  return out;
}

void join(std::string& into, std::string_view part, std::string_view separator = ", ") {
  if (part.empty()) return;
  if (!into.empty()) into += separator;
  into += part;
}

// A coordinate with six decimals, or "" when the member is not a number.
std::string number(const Value* object, const char* name) {
  const auto value = json::number_member(object, name);
  if (!value) return {};
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6f", *value);
  return buffer;
}

Media media_of(const Value* object) {
  Media media;
  media.id = string_of(member(object, "id"));
  media.mime_type = string_of(member(object, "mime_type"));
  media.sha256 = string_of(member(object, "sha256"));
  media.caption = string_of(member(object, "caption"));
  media.filename = string_of(member(object, "filename"));
  media.voice = json::bool_member(object, "voice").value_or(false);
  media.animated = json::bool_member(object, "animated").value_or(false);
  return media;
}

void describe_media(const Value* body, InboundMessage& out) {
  Media media = media_of(body);
  std::string detail = media.filename;
  join(detail, media.caption, ": ");
  if (out.kind == MessageKind::audio && media.voice) {
    out.text = bracket("voice message");
  } else {
    out.text = bracket(out.type, detail);
  }
  out.media = std::move(media);
}

void describe_location(const Value* location, InboundMessage& out) {
  std::string detail(string_of(member(location, "name")));
  join(detail, string_of(member(location, "address")));
  const std::string lat = number(location, "latitude");
  const std::string lon = number(location, "longitude");
  if (!lat.empty() && !lon.empty()) join(detail, "(" + lat + ", " + lon + ")", detail.empty() ? "" : " ");
  out.text = bracket("location", detail);
}

void describe_contacts(const Value* contacts, InboundMessage& out) {
  std::string names;
  if (contacts != nullptr && contacts->IsArray()) {
    for (const Value& contact : contacts->GetArray()) {
      join(names, string_of(member(member(contact, "name"), "formatted_name")));
    }
  }
  out.text = bracket("contacts", names);
}

void describe_interactive(const Value* interactive, InboundMessage& out) {
  const std::string type(string_of(member(interactive, "type")));
  if (type == "button_reply" || type == "list_reply") {
    const Value* reply = member(interactive, type);
    out.reply_id = string_of(member(reply, "id"));
    out.text = string_of(member(reply, "title"));
    out.answerable = has_words(out.text);
    // The model reads the text only: the id the reply's buttons or rows gave the choice
    // goes with the title, so that it can tell two choices with like titles apart.
    if (out.answerable && !out.reply_id.empty()) out.text += " " + bracket("reply id", out.reply_id);
    if (out.answerable) return;
  }
  out.text = bracket("interactive", type);
}

void describe_reaction(const Value* reaction, InboundMessage& out) {
  out.context_id = string_of(member(reaction, "message_id"));
  const std::string emoji(string_of(member(reaction, "emoji")));
  out.text = emoji.empty() ? bracket("reaction removed") : bracket("reaction", emoji);
}

void describe_order(const Value* order, InboundMessage& out) {
  const Value* items = member(order, "product_items");
  const std::size_t count = items != nullptr && items->IsArray() ? items->Size() : 0;
  out.text = bracket("order", std::to_string(count) + (count == 1 ? " item" : " items"));
}

void describe_unsupported(InboundMessage& out) {
  const GraphError* first = out.errors.empty() ? nullptr : &out.errors.front();
  std::string detail;
  if (first != nullptr) detail = first->details.empty() ? first->title : first->details;
  out.text = bracket(out.kind == MessageKind::unsupported ? "unsupported message" : out.type + " message", detail);
}

void read_context(const Value& message, InboundMessage& out) {
  const Value* context = member(message, "context");
  out.context_id = string_of(member(context, "id"));
  for (const char* flag : {"forwarded", "frequently_forwarded"}) {
    if (json::bool_member(context, flag).value_or(false)) out.forwarded = true;
  }
}

}  // namespace

void normalize_message(const Value& message, InboundMessage& out) {
  out.kind = kind_of(out.type);
  read_context(message, out);
  read_errors(member(message, "errors"), out.errors);
  const Value* body = member(message, out.type);
  switch (out.kind) {
    case MessageKind::text:
      out.text = string_of(member(body, "body"));
      out.answerable = has_words(out.text);
      break;
    case MessageKind::button:
      out.text = string_of(member(body, "text"));
      out.reply_id = string_of(member(body, "payload"));
      out.answerable = has_words(out.text);
      break;
    case MessageKind::image:
    case MessageKind::audio:
    case MessageKind::video:
    case MessageKind::document:
    case MessageKind::sticker: describe_media(body, out); break;
    case MessageKind::location: describe_location(body, out); break;
    case MessageKind::contacts: describe_contacts(body, out); break;
    case MessageKind::interactive: describe_interactive(body, out); break;
    case MessageKind::reaction: describe_reaction(body, out); break;
    case MessageKind::order: describe_order(body, out); break;
    case MessageKind::system: out.text = bracket("system", string_of(member(body, "body"))); break;
    case MessageKind::unsupported:
    case MessageKind::unknown: describe_unsupported(out); break;
  }
}

}  // namespace dispatchd::whatsapp::detail

namespace dispatchd::whatsapp {

const char* to_string(MessageKind kind) {
  for (const auto& [k, name] : detail::k_kinds) {
    if (k == kind) return name.data();
  }
  return "unknown";
}

}  // namespace dispatchd::whatsapp
