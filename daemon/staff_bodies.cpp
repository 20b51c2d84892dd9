#include "daemon/staff_bodies.h"

#include "common/json_access.h"
#include "common/strict_json.h"
#include "validator/validator.h"

namespace dispatchd::daemon {
namespace {

// One level deeper than the validator reads an edited action, so that an edit nested too
// deep gets the validator's own verdict rather than a parse error here.
constexpr json::ParseLimits k_body_limits{.max_depth = validator::Limits{}.max_depth + 1};

std::expected<json::Parsed, BodyError> body_object(std::string_view body) {
  auto parsed = json::parse_strict(body, k_body_limits);
  if (!parsed)
    return std::unexpected(BodyError{BodyErrorKind::not_json, "the body is not valid JSON: " + parsed.error().message});
  if (!parsed->document.IsObject())
    return std::unexpected(BodyError{BodyErrorKind::not_object, "the body must be a JSON object"});
  return std::move(*parsed);
}

BodyError missing(std::string message) { return BodyError{BodyErrorKind::missing_field, std::move(message)}; }

}  // namespace

std::expected<LoginBody, BodyError> read_login(std::string_view body) {
  auto parsed = body_object(body);
  if (!parsed) return std::unexpected(std::move(parsed.error()));
  auto name = json::string_member(parsed->document, "name");
  auto token = json::string_member(parsed->document, "token");
  if (!name || !token) return std::unexpected(missing("\"name\" and \"token\" are required"));
  return LoginBody{std::move(*name), std::move(*token)};
}

std::expected<AccountBody, BodyError> read_account(std::string_view body) {
  auto parsed = body_object(body);
  if (!parsed) return std::unexpected(std::move(parsed.error()));
  auto name = json::string_member(parsed->document, "name");
  if (!name) return std::unexpected(missing("\"name\" is required"));
  return AccountBody{std::move(*name)};
}

std::expected<SavedReplyBody, BodyError> read_saved_reply(std::string_view body, bool needs_name) {
  auto parsed = body_object(body);
  if (!parsed) return std::unexpected(std::move(parsed.error()));
  auto name = json::string_member(parsed->document, "name");
  auto text = json::string_member(parsed->document, "text");
  if (needs_name && (!name || !text)) return std::unexpected(missing("\"name\" and \"text\" are required"));
  if (!text) return std::unexpected(missing("\"text\" is required"));
  return SavedReplyBody{name.value_or(""), std::move(*text)};
}

std::expected<DecisionBody, BodyError> read_decision(std::string_view body, bool needs_action) {
  auto parsed = body_object(body);
  if (!parsed) return std::unexpected(std::move(parsed.error()));
  const auto& doc = parsed->document;
  DecisionBody decision{json::string_member(doc, "note").value_or(""), json::string_member(doc, "text").value_or(""),
                        std::nullopt, json::string_member(doc, "to"), json::int_member(doc, "saved_reply")};
  if (const rapidjson::Value* edited = json::member(doc, "action")) {
    decision.action = edited->IsString() ? std::string(json::string_of(edited)) : json::to_string(*edited);
  }
  if (needs_action && !decision.action) return std::unexpected(missing("\"action\" is required"));
  return decision;
}

}  // namespace dispatchd::daemon
