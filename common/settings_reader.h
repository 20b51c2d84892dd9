#pragma once
// Reading settings from JSON with every problem they have, each named by the file and its
// JSON pointer ("file: /pointer: message"): config::load's reader, and each channel's for its
// own section `connectors.<name>` (connectors/registry.h), which config/ keeps as written.
//
// A Reader collects problems; reading goes on after one, so that a file's every problem is
// reported at once. Keys read their value only when it has the right type and range; a
// target keeps its default otherwise.

#include <rapidjson/document.h>

#include <array>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/message_types.h"

namespace dispatchd::json {

class SettingsReader {
 public:
  using Value = rapidjson::Value;

  // One key of an object: its name and what reads its value at a JSON pointer.
  struct Key {
    const char* name;
    std::function<void(const Value&, const std::string&)> read;
  };

  explicit SettingsReader(std::string file) : m_file(std::move(file)) {}

  // `json`, an object written back by a reader (a section config/ kept as written), read
  // again; a problem at `at` when it is not (UTF-8 is checked where it matters, in the text
  // a channel sends).
  std::optional<rapidjson::Document> document(const std::string& json, const std::string& at);

  void problem(const std::string& at, const std::string& message) {
    m_problems.push_back(m_file + ": " + at + ": " + message);
  }
  std::vector<std::string>& problems() { return m_problems; }

  // Reads the members of an object; unknown keys are problems ("$comment" is allowed anywhere).
  void object(const Value& value, const std::string& at, std::initializer_list<Key> keys);

  Key string(const char* name, std::string& target);
  Key optional_string(const char* name, std::optional<std::string>& target);
  Key boolean(const char* name, bool& target);
  template <typename Int>
  Key integer(const char* name, Int& target, long long min, long long max) {
    return {name, [this, &target, min, max](const Value& v, const std::string& at) {
              if (!v.IsInt64() || v.GetInt64() < min || v.GetInt64() > max) {
                return problem(at, "must be an integer from " + std::to_string(min) + " to " + std::to_string(max));
              }
              target = static_cast<Int>(v.GetInt64());
            }};
  }
  // A price in USD per million tokens: a finite number from 0 to 100000.
  Key rate(const char* name, std::optional<double>& target);
  // An amount in USD: a finite number from 0 to 1000000.
  Key usd(const char* name, std::optional<double>& target);
  // One of `names`, each the name of the enum value at its index.
  template <typename Enum, std::size_t N>
  Key one_of(const char* name, Enum& target, const std::array<const char*, N>& names) {
    return {name, [this, &target, names](const Value& v, const std::string& at) {
              for (std::size_t i = 0; i < N; ++i) {
                if (v.IsString() && v.GetString() == std::string_view(names[i])) {
                  target = static_cast<Enum>(i);
                  return;
                }
              }
              std::string known;
              for (const char* n : names) known += std::string(known.empty() ? "\"" : " or \"") + n + "\"";
              problem(at, "must be " + known);
            }};
  }
  Key nested(const char* name, std::function<void(const Value&, const std::string&)> read) { return {name, read}; }
  // message_types: the types given replace their entries in `types`; a type `types` does not
  // list is a problem (a typo never silently keeps a default).
  Key message_types(common::MessageTypes& types);

  // Each of `keys` (a key under `at` and its value as read) that is empty is a problem:
  // "is required " + `when`.
  void require(const std::string& at, std::initializer_list<std::pair<const char*, const std::string*>> keys,
               const std::string& when);

  // An http(s) URL (the start only: a base URL is checked by its first request).
  static bool is_url(const std::string& url);

 private:
  std::string m_file;
  std::vector<std::string> m_problems;
};

}  // namespace dispatchd::json
