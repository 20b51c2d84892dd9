#pragma once
// Reading a parsed document (parse_strict's rapidjson::Document) defensively: for code that
// walks JSON from outside the process (webhooks, Graph API and provider answers, staff API
// bodies). Every accessor tolerates a missing value, a missing member or a value of another
// type, and says so by its result (nullptr, nullopt, ""), never by an assertion: RapidJSON's
// own GetString() on a number is undefined behaviour in release builds.
//
// Internal to the modules' .cpp files, like strict_json.h: it exposes RapidJSON.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

namespace dispatchd::json {

// Where an accessor looks: a value, or nothing (nullptr, what a lookup that found nothing
// returns). Made from either, so lookups chain: string_member(member(doc, "error"), "message").
class Lookup {
 public:
  Lookup(const rapidjson::Value& value) : m_value(&value) {}
  Lookup(const rapidjson::Value* value) : m_value(value) {}
  const rapidjson::Value* get() const { return m_value; }

 private:
  const rapidjson::Value* m_value;
};

// The member `name` of `object` when `object` is an object that has one; else nullptr.
const rapidjson::Value* member(Lookup object, std::string_view name);
// The same, only when the member is an object / an array.
const rapidjson::Value* object_member(Lookup object, std::string_view name);
const rapidjson::Value* array_member(Lookup object, std::string_view name);

// The member's value when it has that type; else nullopt. int_member takes integers that
// fit an int64 (not 1.0); number_member any number, as a double.
std::optional<std::string> string_member(Lookup object, std::string_view name);
std::optional<std::int64_t> int_member(Lookup object, std::string_view name);
std::optional<double> number_member(Lookup object, std::string_view name);
std::optional<bool> bool_member(Lookup object, std::string_view name);

// The text of `value` when it is a string; else "". A view into the document.
std::string_view string_of(Lookup value);

}  // namespace dispatchd::json
