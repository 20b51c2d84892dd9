// The Email's JSON form (dispatchctl inspect email) and the small pure helpers over an Email.
#include <cctype>
#include <cstdio>

#include "common/json_out.h"
#include "connectors/email/email.h"
#include "connectors/email/internal/text.h"

namespace dispatchd::email {
namespace {

void write_address(JsonOut& out, const Address& address) {
  out.begin_object().field("name", address.name).field("address", address.address).end_object();
}

void write_optional_address(JsonOut& out, std::string_view key, const std::optional<Address>& address) {
  if (address) {
    out.begin_object(key).field("name", address->name).field("address", address->address).end_object();
  } else {
    out.field(key, nullptr);
  }
}

void write_addresses(JsonOut& out, std::string_view key, const std::vector<Address>& addresses) {
  out.begin_array(key);
  for (const auto& address : addresses) write_address(out, address);
  out.end_array();
}

void write_strings(JsonOut& out, std::string_view key, const std::vector<std::string>& strings) {
  out.begin_array(key);
  for (const auto& s : strings) out.value(s);
  out.end_array();
}

std::optional<std::string> iso_date(const std::optional<std::chrono::sys_seconds>& date) {
  if (!date) return std::nullopt;
  const auto days = std::chrono::floor<std::chrono::days>(*date);
  const std::chrono::year_month_day ymd{days};
  const std::chrono::hh_mm_ss time{*date - days};
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%04d-%02u-%02uT%02d:%02d:%02dZ", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(time.hours().count()), static_cast<int>(time.minutes().count()),
                static_cast<int>(time.seconds().count()));
  return std::string(buffer);
}

}  // namespace

std::string counterpart(const Email& email) {
  const auto& chosen = email.reply_to && !email.reply_to->address.empty() ? email.reply_to : email.from;
  if (!chosen) return "";
  return detail::lower_ascii(chosen->address);
}

bool is_automatic(const Flags& flags) {
  return flags.own || flags.auto_reply || flags.list || flags.bounce || flags.no_reply;
}

std::string to_json(const Email& email) {
  JsonOut out;
  out.begin_object();
  write_optional_address(out, "from", email.from);
  write_optional_address(out, "reply_to", email.reply_to);
  write_addresses(out, "to", email.to);
  write_addresses(out, "cc", email.cc);
  out.field("subject", email.subject).field("date", iso_date(email.date));
  out.field("message_id", email.message_id).field("in_reply_to", email.in_reply_to);
  write_strings(out, "references", email.references);
  out.field("text", email.text);
  out.begin_array("attachments");
  for (const auto& attachment : email.attachments)
    out.begin_object()
        .field("name", attachment.name)
        .field("type", attachment.type)
        .field("size", attachment.size)
        .end_object();
  out.end_array();
  const Flags& f = email.flags;
  out.begin_object("flags")
      .field("auto_reply", f.auto_reply)
      .field("list", f.list)
      .field("bounce", f.bounce)
      .field("own", f.own)
      .field("no_reply", f.no_reply)
      .end_object();
  write_strings(out, "defects", email.defects);
  out.end_object();
  return out.str();
}

}  // namespace dispatchd::email
