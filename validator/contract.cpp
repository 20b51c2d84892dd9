#include <algorithm>
#include <cmath>
#include <cstring>
#include <regex>

#include "common/strict_json.h"
#include "common/text.h"
#include "common/utf8.h"
#include "validator/checks.h"

namespace dispatchd::validator {
namespace {

using catalog::FieldType;
using json::Value;

// "integer 5" or "string \"abc…\"": what a message says about an offending value.
std::string describe(const Value& v) {
  if (v.is_string()) return "string " + text::quote(v.text);
  if (v.is_null()) return "null";
  std::string shown = json::to_string(v);
  if (shown.size() > 40) shown = std::string(utf8::prefix(shown, 40)) + "…";
  return std::string(json::type_name(v)) + " " + shown;
}

std::string joined(const std::vector<std::string>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == values.size() ? " or " : ", ") + values[i];
  }
  return out;
}

std::string quoted_names(const std::vector<std::string>& names) {
  std::vector<std::string> quoted;
  for (const auto& n : names) quoted.push_back("\"" + n + "\"");
  return joined(quoted);
}

// A near miss among `allowed` (raw strings): same but for case, a small typo, or a prefix.
std::optional<std::string> did_you_mean(std::string_view value, const std::vector<std::string>& allowed) {
  const auto lower = [](std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
    return out;
  };
  const std::string needle = lower(value);
  std::optional<std::string> best;
  std::size_t best_distance = 3;
  for (const auto& candidate : allowed) {
    const std::string hay = lower(candidate);
    std::size_t distance = text::edit_distance(needle, hay, 2);
    if (distance > 2 && needle.size() >= 4 && (hay.starts_with(needle) || needle.starts_with(hay))) distance = 2;
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

// Whether `v` is the catalog literal `canonical` (compact JSON). Strings compare without
// serializing: a catalog string's canonical form is its text in quotes unless it needed
// escapes, and then the slow path decides.
bool equals_literal(const Value& v, const std::string& canonical) {
  if (v.is_string() && canonical.size() >= 2 && canonical.front() == '"' && canonical.find('\\') == std::string::npos) {
    return canonical.size() == v.text.size() + 2 &&
           std::memcmp(canonical.data() + 1, v.text.data(), v.text.size()) == 0;
  }
  return json::to_string(v) == canonical;
}

bool matches_type(FieldType type, const Value& v) {
  switch (type) {
    case FieldType::string: return v.is_string();
    case FieldType::integer: {
      if (v.type != json::Type::number) return false;
      if (v.number.is_integer()) return true;
      // JSON Schema counts 2.0 as an integer; beyond 2^53 a double is no exact integer.
      const double d = v.number.d;
      return std::trunc(d) == d && std::fabs(d) <= 9007199254740992.0;
    }
    case FieldType::number: return v.type == json::Type::number;
    case FieldType::boolean: return v.type == json::Type::boolean;
    case FieldType::buttons: return v.type == json::Type::array;
    case FieldType::list: return v.type == json::Type::object;
  }
  return false;
}

// Patterns run through std::regex, whose matcher recurses per character: long subjects
// are refused rather than risk the stack. Patterns are meant for ids, codes and dates.
constexpr std::size_t k_max_pattern_subject = 1024;

void check_string(const catalog::FieldSchema& s, std::string_view value, const std::string& path,
                  std::vector<Finding>& out) {
  // Code points never outnumber bytes nor fall below a quarter of them: most values are
  // decided by their byte length alone, without counting.
  const bool may_be_short = s.min_length && value.size() < 4 * *s.min_length;
  const bool may_be_long = s.max_length && value.size() > *s.max_length;
  const std::size_t points = (may_be_short || may_be_long) ? utf8::code_points(value) : 0;
  if (may_be_short && points < *s.min_length) {
    out.push_back({path, "min_length",
                   (points == 0 ? std::string("empty") : std::to_string(points) + " characters") + "; at least " +
                       std::to_string(*s.min_length) + " required"});
  }
  if (may_be_long && points > *s.max_length) {
    out.push_back({path, "max_length",
                   std::to_string(points) + " characters; at most " + std::to_string(*s.max_length) + " allowed"});
  }
  if (s.compiled_pattern) {
    if (value.size() > k_max_pattern_subject) {
      out.push_back({path, "pattern",
                     "too long to match the pattern " + *s.pattern + " (at most " +
                         std::to_string(k_max_pattern_subject) + " bytes)"});
    } else if (!std::regex_search(value.begin(), value.end(), *s.compiled_pattern)) {
      out.push_back({path, "pattern", text::quote(value) + " does not match the pattern " + *s.pattern});
    }
  }
  if (s.date && !is_calendar_date(value)) {
    out.push_back({path, "format", text::quote(value) + " is not a real calendar date written YYYY-MM-DD"});
  }
}

}  // namespace

bool is_calendar_date(std::string_view s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
  for (const std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  const auto number = [&](std::size_t at, std::size_t len) {
    int n = 0;
    for (std::size_t i = at; i < at + len; ++i) n = n * 10 + (s[i] - '0');
    return n;
  };
  const int year = number(0, 4), month = number(5, 2), day = number(8, 2);
  if (month < 1 || month > 12 || day < 1) return false;
  static constexpr int k_days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return day <= k_days[month - 1] + (month == 2 && leap ? 1 : 0);
}

void check_field(const catalog::FieldSchema& s, const Value& v, const std::string& path, std::vector<Finding>& out) {
  if (!matches_type(s.type, v)) {
    const std::string expected =
        s.type == FieldType::buttons ? "an array of buttons"
        : s.type == FieldType::list
            ? "a list object"
            : std::string(s.type == FieldType::integer ? "an " : "a ") + catalog::to_string(s.type);
    out.push_back({path, "type", "expected " + expected + ", got " + describe(v)});
    return;
  }
  if (s.type == FieldType::buttons || s.type == FieldType::list) return check_choices(s.type, v, path, out);
  const bool has_enum = !s.enum_values.empty();
  if (has_enum || s.const_value) {
    if (s.const_value && !equals_literal(v, *s.const_value)) {
      out.push_back({path, "const", "must be exactly " + *s.const_value + ", got " + describe(v)});
    }
    if (has_enum && std::none_of(s.enum_values.begin(), s.enum_values.end(),
                                 [&](const std::string& e) { return equals_literal(v, e); })) {
      std::string message = describe(v) + " is not allowed; allowed values: ";
      for (std::size_t i = 0; i < s.enum_values.size(); ++i) message += (i ? ", " : "") + s.enum_values[i];
      if (v.is_string()) {
        std::vector<std::string> raw;
        for (const auto& e : s.enum_values) raw.push_back(e.substr(1, e.size() - 2));
        if (const auto hint = did_you_mean(v.text, raw)) message += " (did you mean \"" + *hint + "\"?)";
      }
      out.push_back({path, "enum", message});
    }
  }
  if (v.is_string()) check_string(s, v.text, path, out);
  if (v.type == json::Type::number) {
    const double d = v.number.as_double();
    const auto shown = [](double bound) { return json::to_string(rapidjson::Value(bound)); };
    if (s.minimum && d < *s.minimum)
      out.push_back({path, "minimum", describe(v) + " is below the minimum " + shown(*s.minimum)});
    if (s.maximum && d > *s.maximum)
      out.push_back({path, "maximum", describe(v) + " is above the maximum " + shown(*s.maximum)});
  }
}

std::vector<Finding> check_contract(const catalog::Catalog& catalog, const json::Object& object,
                                    const catalog::Action*& chosen) {
  std::vector<Finding> out;
  chosen = nullptr;
  const std::string& action_field = catalog.action_field();
  const std::string& action_path = catalog.action_pointer();
  const auto& names = catalog.action_names();

  const Value* action_value = object.find(action_field);
  if (!action_value) {
    out.push_back({action_path, "required",
                   "missing the action field \"" + action_field + "\" (one of " + quoted_names(names) + ")"});
  } else if (!action_value->is_string()) {
    out.push_back({action_path, "type", "expected a string naming the action, got " + describe(*action_value)});
  } else if (!(chosen = catalog.find_action(action_value->text))) {
    std::string message = describe(*action_value) + " is not an action; allowed values: " + quoted_names(names);
    if (const auto hint = did_you_mean(action_value->text, names)) message += " (did you mean \"" + *hint + "\"?)";
    out.push_back({action_path, "enum", message});
  }

  std::size_t known = action_value ? 1 : 0;
  const auto& fields = catalog.fields();
  for (std::size_t index = 0; index < fields.size(); ++index) {
    const catalog::Field& field = fields[index];
    // Without a valid action, a field is required only when every action requires it.
    using catalog::FieldUse;
    const FieldUse use = chosen                                ? chosen->field_uses[index]
                         : catalog.required_by_all(field.name) ? FieldUse::required
                                                               : FieldUse::optional;
    const Value* value = object.find(field.name);
    const bool present = value != nullptr;
    known += present ? 1 : 0;
    const bool is_null = present && value->is_null();
    if (use == FieldUse::unused) {
      if (present && !is_null) {
        out.push_back({field.pointer, "not_allowed",
                       "action \"" + chosen->name + "\" does not use \"" + field.name + "\": set it to null"});
      }
      continue;
    }
    const bool required = use == FieldUse::required;
    if (!present) {
      if (required) out.push_back({field.pointer, "required", "missing required field \"" + field.name + "\""});
      continue;
    }
    if (is_null && !required) continue;
    check_field(field.schema, *value, field.pointer, out);
  }

  if (chosen) {
    check_choices_text(catalog, *chosen, object, out);
    check_template_values(catalog, *chosen, object, out);
  }

  // Keys are unique (the parser refuses duplicates), so a count tells whether any member
  // is outside the contract; only then are they looked up one by one.
  if (known == object.size()) return out;
  std::vector<std::string> allowed{action_field};
  for (const auto& f : catalog.fields()) allowed.push_back(f.name);
  for (const auto& member : object.members()) {
    const std::string_view key = member.key;
    if (key == action_field || catalog.find_field(key)) continue;
    out.push_back({"/" + text::pointer_token(key), "additional_property",
                   text::quote(key) + " is not a field of the contract (fields: " + quoted_names(allowed) + ")"});
  }
  return out;
}

}  // namespace dispatchd::validator
