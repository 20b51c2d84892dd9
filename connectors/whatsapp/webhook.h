#pragma once
// Parsing of the Cloud API's webhook POSTs (the `messages` field of a
// `whatsapp_business_account`): inbound messages normalized for the inbox, and delivery
// statuses of the messages we sent.
//
//   {"object":"whatsapp_business_account","entry":[{"id":WABA,"changes":[{"field":"messages",
//    "value":{"messaging_product":"whatsapp","metadata":{"display_phone_number","phone_number_id"},
//             "contacts":[{"profile":{"name"},"wa_id"}], "messages":[...], "statuses":[...],
//             "errors":[...]}}]}]}
//
// Untrusted input, bounded: the size is checked before parsing, the parse is RapidJSON's
// iterative one (no recursion) with a nesting limit, and the number of events is capped.
// Verify the signature (signature.h) over the same raw bytes first. Pure; safe from any
// thread.

#include <chrono>
#include <cstddef>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "connectors/whatsapp/errors.h"
#include "connectors/whatsapp/templates.h"
#include "store/states.h"

namespace dispatchd::whatsapp {

enum class MessageKind {
  text,
  image,
  audio,
  video,
  document,
  sticker,
  location,
  contacts,
  interactive,  // a reply to an interactive message: button_reply or list_reply (others: not answerable)
  button,       // a quick-reply button of a template
  reaction,
  order,
  system,
  unsupported,  // Meta's own "unsupported" type (errors[] says why)
  unknown,      // a type this version does not know
};

// "text", "image", ... as the Cloud API spells the type.
const char* to_string(MessageKind kind);

struct Media {
  std::string id;  // the media id (download through the Graph API; not done here)
  std::string mime_type;
  std::string sha256;
  std::string caption;
  std::string filename;   // documents
  bool voice = false;     // audio recorded as a voice note
  bool animated = false;  // stickers
};

struct InboundMessage {
  std::string id;                        // provider message id (wamid.…): the inbox's dedupe key
  std::string from;                      // the sender's wa_id: the counterpart a reply goes to
  std::string contact_name;              // the sender's profile name, when the payload gives it
  std::string phone_number_id;           // our number it was sent to
  std::chrono::sys_seconds timestamp{};  // when the customer sent it (starts the 24-hour window)
  std::string type;                      // the type as sent ("text", "image", … or an unknown name)
  MessageKind kind = MessageKind::unknown;
  // What the pipeline reads. text: the body; interactive and button replies: the title or
  // text the customer tapped; anything else a short description such as "[image: caption]",
  // "[voice message]", "[location: name, address (lat, lon)]", "[reaction: 👍]".
  std::string text;
  // True when `text` is the customer's own words and the model can answer it: text with a
  // body that is not blank, button_reply/list_reply, quick-reply buttons. False for media (the
  // model cannot see it, even with a caption), locations, contacts, reactions, orders,
  // system messages, unsupported and unknown types.
  bool answerable = false;
  std::string reply_id;    // interactive reply id or quick-reply payload
  std::string context_id;  // the message this one replies or reacts to
  bool forwarded = false;
  std::optional<Media> media;
  std::vector<GraphError> errors;  // why Meta could not deliver it (unsupported)
  std::string raw_json;            // the message object, compact (re-serialized, UTF-8)
};

// store/states.h's: the channel parses it, the outbox acts on it.
using DeliveryStatus = store::DeliveryStatus;

// A status's `pricing` object: how Meta bills the message the status is about. The texts are
// kept as sent ("" when absent); store/send_pricing.h maps them to its enums, an unknown
// value to `unknown`.
//   {"billable": true, "pricing_model": "PMP", "category": "marketing", "type": "regular"}
struct StatusPricing {
  bool billable = false;      // absent or not a boolean: false
  std::string pricing_model;  // "CBP", "PMP", ...
  std::string category;       // "marketing", "utility", "authentication", "service", ...
  std::string type;           // "regular", "free_customer_service", "free_entry_point"; often absent
};

struct StatusEvent {
  std::string id;  // the wamid of OUR message (as returned when it was sent)
  DeliveryStatus status = DeliveryStatus::other;
  std::string status_text;  // as sent ("sent", "delivered", "read", "failed", or another)
  std::string recipient_id;
  std::chrono::sys_seconds timestamp{};
  std::string tracker;             // biz_opaque_callback_data: our idempotency key, when we sent one
  std::vector<GraphError> errors;  // for `failed`: classify() them like a send error
  // The pricing object, when the status has one with a non-empty string "category" (a
  // malformed one is left out: the status itself is still applied).
  std::optional<StatusPricing> pricing;
  std::string conversation_origin;  // conversation.origin.type, when given ("" otherwise)
};

// Changes for another phone number of the same business account: not ours to answer.
struct ForeignChange {
  std::string phone_number_id;
  std::size_t messages = 0;
  std::size_t statuses = 0;
};

// An element left out because it lacks what it needs (e.g. a message without an id).
struct Skipped {
  std::string pointer;  // JSON pointer into the payload, e.g. "/entry/0/changes/0/value/messages/1"
  std::string reason;
};

struct Webhook {
  std::vector<InboundMessage> messages;  // for our phone_number_id, in payload order
  std::vector<StatusEvent> statuses;     // for our phone_number_id, in payload order
  std::vector<ForeignChange> foreign;    // for other phone numbers: ignored
  // message_template_status_update and template_category_update changes (templates.h), of
  // any business account: the caller keeps those of its own (TemplateEvent::waba_id).
  std::vector<TemplateEvent> templates;
  std::vector<std::string> other_fields;  // changes of other fields (e.g. "account_update"): ignored
  std::vector<GraphError> errors;         // value.errors[]: Meta reporting a problem of its own
  std::vector<Skipped> skipped;           // malformed elements left out; the rest is kept
};

struct WebhookLimits {
  std::size_t max_bytes = 1024 * 1024;  // config http.max_body_bytes
  std::size_t max_depth = 20;           // nesting of objects and arrays
  std::size_t max_events = 1000;        // messages + statuses in one payload
};

enum class WebhookErrorCode {
  too_large,    // more than max_bytes, or more than max_events: answer 413
  not_json,     // not one strict JSON value (syntax, invalid UTF-8, duplicate keys, too deep): 400
  wrong_shape,  // JSON, but not a whatsapp_business_account envelope: 400
};

struct WebhookError {
  WebhookErrorCode code = WebhookErrorCode::wrong_shape;
  std::string message;  // one line; quotes at most short excerpts of the payload
  int http_status() const { return code == WebhookErrorCode::too_large ? 413 : 400; }
};

// Parses one webhook body. Messages and statuses addressed to `phone_number_id` (the
// configured number; an empty one matches nothing) are returned; changes for other numbers
// are counted in `foreign`. The envelope must have the documented shape (root object,
// "object": "whatsapp_business_account", entry[] of objects with changes[], each change
// with a string "field" and an object "value", and value.metadata.phone_number_id for the
// "messages" field); otherwise the whole body is refused. Within it, a message or status
// without its id, sender, type or unix timestamp, or a template change without its name,
// language and event or new category, is reported in `skipped` and the others are kept.
[[nodiscard]] std::expected<Webhook, WebhookError> parse_webhook(std::string_view raw_body,
                                                                 std::string_view phone_number_id,
                                                                 const WebhookLimits& limits = {});

}  // namespace dispatchd::whatsapp
