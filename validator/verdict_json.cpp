#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "validator/validator.h"

namespace dispatchd::validator {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void write_string(Writer& w, std::string_view s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }

void write_findings(Writer& w, const char* key, const std::vector<Finding>& findings) {
  w.Key(key);
  w.StartArray();
  for (const auto& f : findings) {
    w.StartObject();
    w.Key("path");
    write_string(w, f.path);
    w.Key("code");
    write_string(w, f.code);
    w.Key("message");
    write_string(w, f.message);
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
    write_findings(w, "errors", verdict.errors);
    if (verdict.error_count > verdict.errors.size()) {
      w.Key("error_count");
      w.Uint64(verdict.error_count);
    }
    w.Key("feedback");
    write_string(w, verdict.feedback);
  }
  w.Key("repairs");
  w.StartArray();
  for (const auto& r : verdict.repairs) {
    w.StartObject();
    w.Key("code");
    write_string(w, r.code);
    w.Key("message");
    write_string(w, r.message);
    w.EndObject();
  }
  w.EndArray();
  if (verdict.ok) write_findings(w, "review", verdict.review);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace dispatchd::validator
