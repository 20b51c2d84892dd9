#include "common/settings_reader.h"

#include <cmath>

#include "common/strict_json.h"
#include "common/text.h"
#include "common/utf8.h"

namespace dispatchd::json {
namespace {

// No model costs more than this per million tokens: a larger rate is a typo (a price per
// token or per thousand written in the wrong place), not a price.
constexpr double k_max_rate = 100000;
// No daily budget is this large: a larger amount is a typo (cents for dollars), not a budget.
constexpr double k_max_usd = 1'000'000;
// The longest fixed reply: WhatsApp's limit for a text body, the strictest channel's.
constexpr std::size_t k_max_reply_points = 4096;

// One value of message_types: "model", "escalate", "ignore" or {"reply": "text"}; nullopt
// after reporting what is wrong.
std::optional<common::TypeHandling> read_handling(SettingsReader& r, const rapidjson::Value& v, const std::string& at) {
  static const std::string k_expected = R"(must be "model", "escalate", "ignore" or {"reply": "the text to send"})";
  if (v.IsString()) {
    const std::string_view name(v.GetString(), v.GetStringLength());
    if (name == "model") return common::TypeHandling{common::TypeAction::model, ""};
    if (name == "escalate") return common::TypeHandling{common::TypeAction::escalate, ""};
    if (name == "ignore") return common::TypeHandling{common::TypeAction::ignore, ""};
    r.problem(at, name == "reply" ? std::string(R"("reply" needs its text: {"reply": "the text to send"})")
                                  : k_expected + ", not " + text::quote(name));
    return std::nullopt;
  }
  if (!v.IsObject()) {
    r.problem(at, k_expected);
    return std::nullopt;
  }
  std::optional<std::string> reply;
  const std::size_t before = r.problems().size();
  r.object(v, at, {r.optional_string("reply", reply)});
  if (r.problems().size() != before) return std::nullopt;
  if (!reply) {
    r.problem(at, R"(needs "reply": the text to send)");
  } else if (!utf8::is_valid(*reply)) {
    r.problem(at + "/reply", "must be valid UTF-8");
  } else if (reply->find_first_not_of(" \t\r\n") == std::string::npos) {
    r.problem(at + "/reply", "must not be blank");
  } else if (utf8::code_points(*reply) > k_max_reply_points) {
    r.problem(at + "/reply", "must be at most 4096 characters (WhatsApp's limit for a text)");
  } else {
    return common::TypeHandling{common::TypeAction::reply, std::move(*reply)};
  }
  return std::nullopt;
}

void read_message_types(SettingsReader& r, const rapidjson::Value& v, const std::string& at,
                        common::MessageTypes& types) {
  if (!v.IsObject()) return r.problem(at, "must be an object: message type -> handling");
  for (const auto& member : v.GetObject()) {
    const std::string type(member.name.GetString(), member.name.GetStringLength());
    if (type == "$comment") continue;
    const std::string here = at + "/" + text::pointer_token(type);
    const auto known = types.find(type);
    if (known == types.end()) {
      std::string names, near;
      for (const auto& [name, _] : types) {
        names += (names.empty() ? "" : ", ") + name;
        if (near.empty() && text::edit_distance(type, name, 2) <= 2) near = name;
      }
      r.problem(here, "unknown message type" + (near.empty() ? "" : " (did you mean \"" + near + "\"?)") +
                          "; known: " + names);
      continue;
    }
    if (auto handling = read_handling(r, member.value, here)) known->second = std::move(*handling);
  }
}

}  // namespace

void SettingsReader::object(const rapidjson::Value& value, const std::string& at, std::initializer_list<Key> keys) {
  if (!value.IsObject()) return problem(at.empty() ? "/" : at, "must be an object");
  for (const auto& member : value.GetObject()) {
    const std::string name(member.name.GetString(), member.name.GetStringLength());
    if (name == "$comment") continue;
    const Key* key = nullptr;
    for (const auto& k : keys) {
      if (name == k.name) key = &k;
    }
    if (!key) {
      std::string known;
      for (const auto& k : keys) known += std::string(known.empty() ? "" : ", ") + k.name;
      problem(at + "/" + name, "unknown key (known here: " + known + ")");
      continue;
    }
    key->read(member.value, at + "/" + name);
  }
}

SettingsReader::Key SettingsReader::string(const char* name, std::string& target) {
  return {name, [this, &target](const rapidjson::Value& v, const std::string& at) {
            if (!v.IsString()) return problem(at, "must be a string");
            target.assign(v.GetString(), v.GetStringLength());
          }};
}

SettingsReader::Key SettingsReader::optional_string(const char* name, std::optional<std::string>& target) {
  return {name, [this, &target](const rapidjson::Value& v, const std::string& at) {
            if (v.IsNull()) return target.reset();
            if (!v.IsString()) return problem(at, "must be a string or null");
            target.emplace(v.GetString(), v.GetStringLength());
          }};
}

SettingsReader::Key SettingsReader::boolean(const char* name, bool& target) {
  return {name, [this, &target](const rapidjson::Value& v, const std::string& at) {
            if (!v.IsBool()) return problem(at, "must be true or false");
            target = v.GetBool();
          }};
}

SettingsReader::Key SettingsReader::rate(const char* name, std::optional<double>& target) {
  return {name, [this, &target](const rapidjson::Value& v, const std::string& at) {
            if (!v.IsNumber() || !std::isfinite(v.GetDouble()) || v.GetDouble() < 0 || v.GetDouble() > k_max_rate)
              return problem(at, "must be a number from 0 to 100000 (USD per million tokens)");
            target = v.GetDouble();
          }};
}

SettingsReader::Key SettingsReader::usd(const char* name, std::optional<double>& target) {
  return {name, [this, &target](const rapidjson::Value& v, const std::string& at) {
            if (!v.IsNumber() || !std::isfinite(v.GetDouble()) || v.GetDouble() < 0 || v.GetDouble() > k_max_usd)
              return problem(at, "must be a number from 0 to 1000000 (USD)");
            target = v.GetDouble();
          }};
}

SettingsReader::Key SettingsReader::message_types(common::MessageTypes& types) {
  return {"message_types", [this, &types](const rapidjson::Value& v, const std::string& at) {
            read_message_types(*this, v, at, types);
          }};
}

std::optional<rapidjson::Document> SettingsReader::document(const std::string& json, const std::string& at) {
  auto parsed = parse_strict(json, {.input_utf8_checked = true});
  if (!parsed) {
    problem(at, parsed.error().message);
    return std::nullopt;
  }
  return std::move(parsed->document);
}

void SettingsReader::require(const std::string& at,
                             std::initializer_list<std::pair<const char*, const std::string*>> keys,
                             const std::string& when) {
  for (const auto& [name, value] : keys) {
    if (value->empty()) problem(at + "/" + name, "is required " + when);
  }
}

bool SettingsReader::is_url(const std::string& url) {
  return url.starts_with("http://") || url.starts_with("https://");
}

}  // namespace dispatchd::json
