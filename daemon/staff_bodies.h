#pragma once
// The staff API's request bodies (staff_api.h), read into what its handlers need. A body
// is untrusted: parsed strictly (common/strict_json.h: iterative, UTF-8, no duplicate
// keys, bounded depth) and must be one JSON object; the listener has already bounded its
// size. Pure: no store, no clock; safe from any thread. The API answers 400 with the
// error's message to every BodyError.

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

namespace dispatchd::daemon {

enum class BodyErrorKind {
  not_json,       // not one strict JSON value
  not_object,     // JSON, but not an object
  missing_field,  // a required member absent or not a string
};

struct BodyError {
  BodyErrorKind kind = BodyErrorKind::not_json;
  std::string message;  // one line, for the 400 answer
};

// POST /api/session: {"name","token"}, both strings.
struct LoginBody {
  std::string name;
  std::string token;
};
[[nodiscard]] std::expected<LoginBody, BodyError> read_login(std::string_view body);

// POST /api/staff (admin token): {"name"}.
struct AccountBody {
  std::string name;
};
[[nodiscard]] std::expected<AccountBody, BodyError> read_account(std::string_view body);

// POST /api/replies {"name","text"}; PUT /api/replies/{id} {"text"} (`needs_name` false:
// the name is not changed, and ignored).
struct SavedReplyBody {
  std::string name;
  std::string text;
};
[[nodiscard]] std::expected<SavedReplyBody, BodyError> read_saved_reply(std::string_view body, bool needs_name);

// POST /api/escalations/{id}/{verb}: what each decision reads. "note" (dismiss, and the
// optional one of release, takeover and reassign) and "text" (reply, notes) are "" when
// absent or not strings; the decision itself refuses an empty one.
// "action" (edit) is required: a string of JSON as it is, or the object itself written as
// compact JSON; either way the validator reads it as raw model text.
// "to" (reassign) is the new holder's name, none when absent or not a string.
// "saved_reply" (reply) is a saved reply's id, sent filled instead of "text"; none when
// absent or not an integer.
struct DecisionBody {
  std::string note;
  std::string text;
  std::optional<std::string> action;
  std::optional<std::string> to;
  std::optional<std::int64_t> saved_reply;
};
// `needs_action`: the edit decision, which refuses a body without "action".
[[nodiscard]] std::expected<DecisionBody, BodyError> read_decision(std::string_view body, bool needs_action);

}  // namespace dispatchd::daemon
