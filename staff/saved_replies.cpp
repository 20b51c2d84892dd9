#include "staff/saved_replies.h"

#include "common/json_out.h"
#include "common/utf8.h"
#include "store/views.h"

namespace dispatchd::staff {
namespace {

std::unexpected<Refusal> invalid(std::string message) {
  return std::unexpected(Refusal{RefusalKind::invalid, std::move(message), {}});
}

std::unexpected<Refusal> failed(store::Error error) { return std::unexpected(to_refusal(std::move(error))); }

std::expected<void, Refusal> check_text(const std::string& text) {
  if (!utf8::is_valid(text)) return invalid("the saved reply is not valid UTF-8");
  const std::size_t length = utf8::code_points(text);
  if (length == 0) return invalid("the saved reply is empty");
  if (length > k_max_reply_code_points) {
    return invalid("the saved reply has " + std::to_string(length) + " characters; at most " +
                   std::to_string(k_max_reply_code_points) + " can be sent");
  }
  if (auto filled = fill(text, {}); !filled) return invalid(filled.error().message);
  return {};
}

std::expected<void, Refusal> check_name(const std::string& name) {
  if (name.empty() || name.size() > k_max_saved_reply_name)
    return invalid("a saved reply's name has 1 to " + std::to_string(k_max_saved_reply_name) + " bytes");
  if (!utf8::is_valid(name)) return invalid("the saved reply's name is not valid UTF-8");
  for (const char c : name)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return invalid("the saved reply's name has a control character");
  return {};
}

}  // namespace

std::expected<std::string, TemplateError> fill(std::string_view text, const CaseFields& fields) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '}') {
      if (i + 1 < text.size() && text[i + 1] == '}') {
        out += '}';
        i += 2;
        continue;
      }
      return std::unexpected(
          TemplateError{"a } at byte " + std::to_string(i) + " closes nothing (write }} for a brace)", ""});
    }
    if (c != '{') {
      out += c;
      ++i;
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '{') {
      out += '{';
      i += 2;
      continue;
    }
    const auto close = text.find_first_of("{}", i + 1);
    if (close == std::string_view::npos || text[close] == '{')
      return std::unexpected(
          TemplateError{"a { at byte " + std::to_string(i) + " is not closed (write {{ for a brace)", ""});
    const std::string_view name = text.substr(i + 1, close - i - 1);
    if (name == "customer") {
      out += fields.customer;
    } else if (name == "escalation") {
      out += fields.escalation;
    } else if (name == "staff") {
      out += fields.staff;
    } else if (name == "channel") {
      out += fields.channel;
    } else {
      return std::unexpected(TemplateError{
          "unknown placeholder {" + std::string(name) + "}; known: {customer} {escalation} {staff} {channel}",
          std::string(name)});
    }
    i = close + 1;
  }
  return out;
}

std::expected<std::int64_t, Refusal> add_saved_reply(store::Database& db, const std::string& name,
                                                     const std::string& text, const std::string& actor,
                                                     store::Time now) {
  if (auto ok = check_name(name); !ok) return std::unexpected(std::move(ok.error()));
  if (auto ok = check_text(text); !ok) return std::unexpected(std::move(ok.error()));
  auto added = store::add_saved_reply(db, name, text, actor, now);
  if (!added) return failed(std::move(added.error()));
  return *added;
}

std::expected<void, Refusal> change_saved_reply(store::Database& db, std::int64_t id, const std::string& text,
                                                const std::string& actor, store::Time now) {
  if (auto ok = check_text(text); !ok) return std::unexpected(std::move(ok.error()));
  if (auto changed = store::change_saved_reply(db, id, text, actor, now); !changed)
    return failed(std::move(changed.error()));
  return {};
}

std::expected<void, Refusal> remove_saved_reply(store::Database& db, std::int64_t id, const std::string& actor,
                                                store::Time now) {
  if (auto removed = store::remove_saved_reply(db, id, actor, now); !removed) return failed(std::move(removed.error()));
  return {};
}

std::string saved_replies_json(const std::vector<store::SavedReply>& replies) {
  JsonOut out;
  out.begin_array();
  for (const auto& r : replies) {
    out.begin_object().field("id", r.id).field("name", r.name).field("text", r.text);
    out.field("created_by", r.created_by).field("created_at", r.created_at).field("updated_at", r.updated_at);
    out.end_object();
  }
  return out.end_array().str();
}

std::expected<CaseFields, Refusal> case_fields(store::Database& db, std::int64_t escalation, const std::string& who) {
  auto item = store::show_escalation(db, escalation);
  if (!item) return failed(std::move(item.error()));
  return CaseFields{item->message.sender, std::to_string(escalation), who, item->message.channel};
}

std::expected<std::vector<FilledReply>, Refusal> filled_replies(store::Database& db, std::int64_t escalation,
                                                                const std::string& who) {
  auto fields = case_fields(db, escalation, who);
  if (!fields) return std::unexpected(std::move(fields.error()));
  auto replies = store::list_saved_replies(db);
  if (!replies) return failed(std::move(replies.error()));
  std::vector<FilledReply> out;
  for (auto& reply : *replies) {
    auto filled = fill(reply.text, *fields);
    // Checked when saved: a text that no longer fills is the program's fault.
    if (!filled) return std::unexpected(Refusal{RefusalKind::internal, filled.error().message, {}});
    out.push_back({std::move(reply), std::move(*filled)});
  }
  return out;
}

std::expected<std::int64_t, Refusal> reply_saved(store::Database& db, std::int64_t escalation, const std::string& who,
                                                 std::int64_t saved, store::Time now, WindowRuleOf windows) {
  auto reply_row = store::find_saved_reply(db, saved);
  if (!reply_row) return failed(std::move(reply_row.error()));
  auto fields = case_fields(db, escalation, who);
  if (!fields) return std::unexpected(std::move(fields.error()));
  auto filled = fill(reply_row->text, *fields);
  if (!filled) return std::unexpected(Refusal{RefusalKind::internal, filled.error().message, {}});
  return reply(db, escalation, who, *filled, now, windows);
}

}  // namespace dispatchd::staff
