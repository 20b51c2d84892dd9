#include "connectors/whatsapp/webhook.h"

#include <charconv>
#include <cstdint>
#include <utility>

#include "common/json_access.h"
#include "common/strict_json.h"
#include "common/text.h"
#include "connectors/whatsapp/internal/json_util.h"
#include "connectors/whatsapp/internal/message.h"
#include "connectors/whatsapp/internal/template_events.h"

namespace dispatchd::whatsapp {
namespace {

using json::member;
using json::string_of;
using rapidjson::Value;

constexpr std::string_view k_object = "whatsapp_business_account";
constexpr std::size_t k_max_id = 512;
constexpr std::size_t k_max_sender = 64;
constexpr std::size_t k_max_type = 64;

std::unexpected<WebhookError> fail(WebhookErrorCode code, std::string message) {
  return std::unexpected(WebhookError{code, std::move(message)});
}

std::unexpected<WebhookError> bad_shape(const std::string& pointer, const std::string& what) {
  return fail(WebhookErrorCode::wrong_shape, (pointer.empty() ? "/" : pointer) + ": " + what);
}

// Unix seconds as Meta sends them: a string of digits ("1697043223"), or a plain integer.
std::optional<std::chrono::sys_seconds> timestamp_of(const Value* value) {
  std::int64_t unix_seconds = -1;
  if (value != nullptr && value->IsString()) {
    const std::string_view digits = string_of(value);
    if (digits.empty() || digits.size() > 12) return std::nullopt;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), unix_seconds);
    if (ec != std::errc{} || end != digits.data() + digits.size()) return std::nullopt;
  } else if (value != nullptr && value->IsInt64()) {
    unix_seconds = value->GetInt64();
  }
  if (unix_seconds < 0 || unix_seconds > 999'999'999'999) return std::nullopt;
  return std::chrono::sys_seconds{std::chrono::seconds{unix_seconds}};
}

// A required string member of 1..max bytes, or the reason it is not one.
std::expected<std::string, std::string> required(const Value& object, const char* name, std::size_t max) {
  const Value* value = member(object, name);
  if (value == nullptr) return std::unexpected(std::string("no \"") + name + "\"");
  const std::string_view text = string_of(value);
  if (!value->IsString() || text.empty() || text.size() > max) {
    return std::unexpected(std::string("\"") + name + "\" is not a string of 1.." + std::to_string(max) + " bytes");
  }
  return std::string(text);
}

DeliveryStatus status_of(std::string_view text) {
  return store::from_sql<DeliveryStatus>(text).value_or(DeliveryStatus::other);
}

// The array member `name` of `value` (empty when absent); an error when present but not an array.
std::expected<const Value*, WebhookError> optional_array(const Value& value, const char* name, const std::string& at) {
  const Value* array = member(value, name);
  if (array != nullptr && !array->IsArray()) return bad_shape(at + "/" + name, "not an array");
  return array;
}

std::size_t size_of(const Value* array) { return array == nullptr ? 0 : array->Size(); }

class Walker {
 public:
  Walker(Webhook& out, std::string_view phone_number_id, const WebhookLimits& limits)
      : m_out(out), m_phone_number_id(phone_number_id), m_limits(limits) {}

  std::expected<void, WebhookError> entry(const Value& entry, const std::string& at) {
    if (!entry.IsObject()) return bad_shape(at, "entry is not an object");
    const Value* changes = member(entry, "changes");
    if (changes == nullptr || !changes->IsArray()) return bad_shape(at + "/changes", "missing or not an array");
    for (rapidjson::SizeType i = 0; i < changes->Size(); ++i) {
      auto done = change((*changes)[i], string_of(member(entry, "id")), at + "/changes/" + std::to_string(i));
      if (!done) return done;
    }
    return {};
  }

 private:
  std::expected<void, WebhookError> change(const Value& change, std::string_view entry_id, const std::string& at) {
    if (!change.IsObject()) return bad_shape(at, "change is not an object");
    const Value* field = member(change, "field");
    const Value* value = member(change, "value");
    if (field == nullptr || !field->IsString()) return bad_shape(at + "/field", "missing or not a string");
    if (value == nullptr || !value->IsObject()) return bad_shape(at + "/value", "missing or not an object");
    if (string_of(field) == detail::k_template_status_field || string_of(field) == detail::k_template_category_field) {
      auto event = detail::read_template_change(*value, string_of(field), std::string(entry_id));
      if (event)
        m_out.templates.push_back(std::move(*event));
      else
        skip(at + "/value", std::move(event.error()));
      return {};
    }
    if (string_of(field) != "messages") {
      m_out.other_fields.emplace_back(string_of(field));
      return {};
    }
    return messages_value(*value, at + "/value");
  }

  std::expected<void, WebhookError> messages_value(const Value& value, const std::string& at) {
    const std::string phone(string_of(member(member(value, "metadata"), "phone_number_id")));
    if (phone.empty()) return bad_shape(at + "/metadata/phone_number_id", "missing or not a string");
    auto messages = optional_array(value, "messages", at);
    if (!messages) return std::unexpected(messages.error());
    auto statuses = optional_array(value, "statuses", at);
    if (!statuses) return std::unexpected(statuses.error());
    m_events += size_of(*messages) + size_of(*statuses);
    if (m_events > m_limits.max_events) {
      return fail(WebhookErrorCode::too_large, "more than " + std::to_string(m_limits.max_events) + " events");
    }
    if (m_phone_number_id.empty() || phone != m_phone_number_id) {
      count_foreign(phone, size_of(*messages), size_of(*statuses));
      return {};
    }
    detail::read_errors(member(value, "errors"), m_out.errors);
    for (rapidjson::SizeType i = 0; i < size_of(*messages); ++i) {
      message((**messages)[i], value, phone, at + "/messages/" + std::to_string(i));
    }
    for (rapidjson::SizeType i = 0; i < size_of(*statuses); ++i) {
      status((**statuses)[i], at + "/statuses/" + std::to_string(i));
    }
    return {};
  }

  void count_foreign(const std::string& phone, std::size_t messages, std::size_t statuses) {
    for (ForeignChange& seen : m_out.foreign) {
      if (seen.phone_number_id == phone) {
        seen.messages += messages;
        seen.statuses += statuses;
        return;
      }
    }
    m_out.foreign.push_back({phone, messages, statuses});
  }

  void skip(const std::string& at, std::string reason) { m_out.skipped.push_back({at, std::move(reason)}); }

  void message(const Value& object, const Value& value, const std::string& phone, const std::string& at) {
    if (!object.IsObject()) return skip(at, "message is not an object");
    auto id = required(object, "id", k_max_id);
    auto from = required(object, "from", k_max_sender);
    auto type = required(object, "type", k_max_type);
    const auto timestamp = timestamp_of(member(object, "timestamp"));
    if (!id) return skip(at, id.error());
    if (!from) return skip(at, from.error());
    if (!type) return skip(at, type.error());
    if (!timestamp) return skip(at, "\"timestamp\" is not unix seconds");
    InboundMessage message;
    message.id = std::move(*id);
    message.from = std::move(*from);
    message.type = std::move(*type);
    message.timestamp = *timestamp;
    message.phone_number_id = phone;
    message.contact_name = contact_name(value, message.from);
    detail::normalize_message(object, message);
    message.raw_json = json::to_string(object);
    m_out.messages.push_back(std::move(message));
  }

  static std::string contact_name(const Value& value, std::string_view wa_id) {
    const Value* contacts = member(value, "contacts");
    if (contacts == nullptr || !contacts->IsArray()) return {};
    for (const Value& contact : contacts->GetArray()) {
      if (string_of(member(contact, "wa_id")) == wa_id)
        return std::string(string_of(member(member(contact, "profile"), "name")));
    }
    return {};
  }

  void status(const Value& object, const std::string& at) {
    if (!object.IsObject()) return skip(at, "status is not an object");
    auto id = required(object, "id", k_max_id);
    auto text = required(object, "status", k_max_type);
    const auto timestamp = timestamp_of(member(object, "timestamp"));
    if (!id) return skip(at, id.error());
    if (!text) return skip(at, text.error());
    if (!timestamp) return skip(at, "\"timestamp\" is not unix seconds");
    StatusEvent event;
    event.id = std::move(*id);
    event.status = status_of(*text);
    event.status_text = std::move(*text);
    event.recipient_id = string_of(member(object, "recipient_id"));
    event.timestamp = *timestamp;
    event.tracker = string_of(member(object, "biz_opaque_callback_data"));
    detail::read_errors(member(object, "errors"), event.errors);
    event.pricing = pricing_of(member(object, "pricing"));
    event.conversation_origin = bounded(member(member(member(object, "conversation"), "origin"), "type"));
    m_out.statuses.push_back(std::move(event));
  }

  // A short string member's text; "" when absent, not a string or longer than k_max_type.
  static std::string bounded(const Value* value) {
    const std::string_view text = string_of(value);
    return text.size() > k_max_type ? std::string() : std::string(text);
  }

  static std::optional<StatusPricing> pricing_of(const Value* pricing) {
    if (pricing == nullptr || !pricing->IsObject()) return std::nullopt;
    StatusPricing out;
    out.category = bounded(member(*pricing, "category"));
    if (out.category.empty()) return std::nullopt;
    out.billable = json::bool_member(*pricing, "billable").value_or(false);
    out.pricing_model = bounded(member(*pricing, "pricing_model"));
    out.type = bounded(member(*pricing, "type"));
    return out;
  }

  Webhook& m_out;
  std::string_view m_phone_number_id;
  const WebhookLimits& m_limits;
  std::size_t m_events = 0;
};

}  // namespace

std::expected<Webhook, WebhookError> parse_webhook(std::string_view raw_body, std::string_view phone_number_id,
                                                   const WebhookLimits& limits) {
  if (raw_body.size() > limits.max_bytes) {
    return fail(WebhookErrorCode::too_large, "body of " + std::to_string(raw_body.size()) + " bytes is over the " +
                                                 std::to_string(limits.max_bytes) + "-byte limit");
  }
  auto parsed = json::parse_strict(raw_body, {.max_depth = limits.max_depth});
  if (!parsed) {
    return fail(WebhookErrorCode::not_json,
                "not JSON: " + parsed.error().message + " at byte " + std::to_string(parsed.error().offset));
  }
  const Value& root = parsed->document;
  if (!root.IsObject()) return bad_shape("", "not an object");
  if (string_of(member(root, "object")) != k_object) {
    return bad_shape("/object", "not " + text::quote(k_object));
  }
  const Value* entries = member(root, "entry");
  if (entries == nullptr || !entries->IsArray()) return bad_shape("/entry", "missing or not an array");
  Webhook out;
  Walker walker(out, phone_number_id, limits);
  for (rapidjson::SizeType i = 0; i < entries->Size(); ++i) {
    auto done = walker.entry((*entries)[i], "/entry/" + std::to_string(i));
    if (!done) return std::unexpected(done.error());
  }
  return out;
}

}  // namespace dispatchd::whatsapp
