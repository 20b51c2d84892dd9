#include <type_traits>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "validator/validator.h"

namespace dispatchd::validator {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void write_string(Writer& w, std::string_view s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }

// Findings and repairs share {code, message}; findings add their path first.
template <typename Item>
void write_list(Writer& w, const char* key, const std::vector<Item>& items) {
  w.Key(key);
  w.StartArray();
  for (const auto& item : items) {
    w.StartObject();
    if constexpr (std::is_same_v<Item, Finding>) {
      w.Key("path");
      write_string(w, item.path);
    }
    w.Key("code");
    write_string(w, item.code);
    w.Key("message");
    write_string(w, item.message);
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace

std::string to_json(const Verdict& verdict) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("ok");
  w.Bool(verdict.ok);
  if (verdict.ok) {
    w.Key("output");
    w.RawValue(verdict.output.data(), verdict.output.size(), rapidjson::kObjectType);
  } else {
    w.Key("stage");
    w.String(to_string(*verdict.failed_stage));
    write_list(w, "errors", verdict.errors);
    if (verdict.error_count > verdict.errors.size()) {
      w.Key("error_count");
      w.Uint64(verdict.error_count);
    }
    w.Key("feedback");
    write_string(w, verdict.feedback);
  }
  write_list(w, "repairs", verdict.repairs);
  if (verdict.ok) write_list(w, "review", verdict.review);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace dispatchd::validator
