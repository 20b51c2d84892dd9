#include "connectors/email/inbound.h"

#include "media/policy.h"

namespace dispatchd::email {
namespace {

std::string size_text(std::size_t bytes) {
  if (bytes >= 1u << 20) return std::to_string(bytes >> 20) + " MB";
  if (bytes >= 1u << 10) return std::to_string(bytes >> 10) + " KB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace

std::string inbox_type(const Flags& flags) {
  if (flags.own) return "own";
  if (flags.bounce) return "bounce";
  if (flags.auto_reply) return "auto_reply";
  if (flags.list) return "list";
  if (flags.no_reply) return "no_reply";
  return "email";
}

std::string model_text(const Email& email) {
  std::string text = "Subject: " + email.subject + "\n";
  if (!email.attachments.empty()) {
    text += "Attachments (not shown):";
    for (const auto& a : email.attachments) text += " " + a.name + " (" + a.type + ", " + size_text(a.size) + ");";
    text += "\n";
  }
  return text + "\n" + email.text;
}

Inbound read_inbound(std::string_view raw, std::span<const std::string> own_addresses) {
  return read_inbound(decode(raw, own_addresses));
}

Inbound read_inbound(const std::expected<Email, DecodeError>& email) {
  Inbound out;
  if (email && !(email->text.empty() && email->attachments.empty() && !email->defects.empty())) {
    out.sender = counterpart(*email);
    out.text = model_text(*email);
    out.type = inbox_type(email->flags);
    return out;
  }
  out.sender = email ? counterpart(*email) : "";
  out.type = "undecodable";
  out.undecodable = true;
  std::string why = email ? "no readable text" : email.error().message;
  if (email && !email->defects.empty()) why += " (" + email->defects.front() + ")";
  out.text = "(an email that could not be decoded: " + why + "; its raw bytes are stored)";
  return out;
}

std::vector<store::MediaRef> media_of(const Email& mail,
                                      const std::function<std::string(const Attachment&)>& provider_ref) {
  std::vector<store::MediaRef> out;
  for (const auto& attachment : mail.attachments) {
    if (!attachment.leaf) continue;
    store::MediaRef ref;
    ref.kind = media::kind_of(attachment.type);
    ref.provider_ref = provider_ref(attachment);
    ref.declared_type = attachment.type;
    ref.filename = attachment.name;
    out.push_back(std::move(ref));
  }
  return out;
}

const common::MessageTypes& mail_types() {
  // Mail for a person goes to the model; what loop prevention recognises is recorded and
  // ignored; what cannot be decoded is escalated with its raw bytes stored.
  static const common::MessageTypes types = [] {
    common::MessageTypes out;
    using common::TypeAction;
    out["email"] = {TypeAction::model, ""};
    for (const char* type : {"own", "auto_reply", "list", "bounce", "no_reply"}) out[type] = {TypeAction::ignore, ""};
    out["undecodable"] = {TypeAction::escalate, ""};
    return out;
  }();
  return types;
}

}  // namespace dispatchd::email
