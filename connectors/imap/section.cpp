#include "connectors/imap/section.h"

#include <algorithm>
#include <array>
#include <chrono>

#include "common/settings_reader.h"
#include "config/secrets.h"
#include "connectors/email/inbound.h"

namespace dispatchd::imap {
namespace {

using Value = rapidjson::Value;

constexpr std::array<const char*, 2> k_tls_names = {"implicit", "starttls"};
constexpr std::array<const char*, 3> k_sent_copy_names = {"append", "server", "none"};

bool is_mailbox_name(const std::string& name) {
  return !name.empty() && name.size() <= 64 && std::ranges::all_of(name, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

// "imap" and "smtp" of a mailbox: where the server is.
json::SettingsReader::Key server(json::SettingsReader& r, const char* name, ServerSettings& target) {
  return r.nested(name, [&r, &target](const Value& v, const std::string& at) {
    int port = 0;
    r.object(
        v, at,
        {r.string("host", target.host), r.integer("port", port, 1, 65535), r.one_of("tls", target.tls, k_tls_names)});
    target.port = static_cast<std::uint16_t>(port);
    if (target.host.empty()) r.problem(at + "/host", "must be set");
  });
}

void read_mailbox(json::SettingsReader& r, const Value& v, const std::string& at, const std::string& name,
                  MailboxSection& out) {
  MailboxSettings& m = out.mailbox;
  m.name = name;
  m.imap.tls = TlsMode::implicit;
  m.smtp.tls = TlsMode::starttls;
  std::string user, ca_file, sasl;
  int poll_interval_s = 60, unknown_recheck_s = 60, max_resync = 500;
  bool has_imap = false, has_smtp = false;
  auto imap_key = server(r, "imap", m.imap);
  auto smtp_key = server(r, "smtp", m.smtp);
  r.object(v, at,
           {r.string("address", m.address),
            r.string("user", user),
            r.string("password_env", out.password_env),
            r.string("oauth_token_env", out.oauth_token_env),
            r.string("sasl_mechanism", sasl),
            r.string("ca_file", ca_file),
            {"imap",
             [&](const Value& value, const std::string& where) {
               has_imap = true;
               imap_key.read(value, where);
             }},
            {"smtp",
             [&](const Value& value, const std::string& where) {
               has_smtp = true;
               smtp_key.read(value, where);
             }},
            r.string("folder", m.folder),
            r.string("sent_folder", m.sent_folder),
            r.one_of("sent_copy", m.sent_copy, k_sent_copy_names),
            r.string("handled_flag", m.handled_flag),
            r.integer("poll_interval_s", poll_interval_s, 1, 1500),
            r.integer("max_resync_messages", max_resync, 0, 100000),
            r.integer("unknown_recheck_s", unknown_recheck_s, 1, 3600)});
  if (m.address.find('@') == std::string::npos) r.problem(at + "/address", "must be the mailbox's address");
  if (!has_imap) r.problem(at + "/imap", "must be set ({\"host\": ..., \"port\": ..., \"tls\": ...})");
  if (!has_smtp) r.problem(at + "/smtp", "must be set ({\"host\": ..., \"port\": ..., \"tls\": ...})");
  if (out.password_env.empty() == out.oauth_token_env.empty())
    r.problem(at, "one of password_env and oauth_token_env must be set");
  if (m.folder.empty()) r.problem(at + "/folder", "must not be empty");
  if (m.sent_folder.empty()) r.problem(at + "/sent_folder", "must not be empty");
  for (ServerSettings* s : {&m.imap, &m.smtp}) {
    s->user = user.empty() ? m.address : user;
    s->ca_file = ca_file;
    s->sasl_mechanism = sasl;
  }
  m.poll_interval = std::chrono::seconds(poll_interval_s);
  m.unknown_recheck = std::chrono::seconds(unknown_recheck_s);
  m.max_resync_messages = static_cast<std::size_t>(max_resync);
  // What the clients would refuse (a CR in the user, an unknown mechanism) is said now.
  ServerSettings probe = m.imap;
  probe.password = "probe";
  if (auto wrong = check_settings(probe)) r.problem(at, *wrong);
}

std::unique_ptr<connectors::Section> read(const config::ChannelSection& section, json::SettingsReader& r,
                                          const config::Config& /*config*/) {
  const auto document = r.document(section.json, section.at);
  if (!document) return nullptr;
  const std::string& at = section.at;
  SectionSettings settings;
  settings.message_types = email::mail_types();
  const std::size_t before = r.problems().size();
  r.object(*document, at,
           {r.boolean("enabled", settings.enabled),
            r.nested("mailboxes",
                     [&](const Value& v, const std::string& where) {
                       if (!v.IsObject()) return r.problem(where, "must be an object of mailboxes by name");
                       for (const auto& member : v.GetObject()) {
                         const std::string name(member.name.GetString(), member.name.GetStringLength());
                         if (name == "$comment") continue;
                         if (!is_mailbox_name(name)) {
                           r.problem(where + "/" + name, "a mailbox's name is 1 to 64 of a-z, 0-9, _ and -");
                           continue;
                         }
                         read_mailbox(r, member.value, where + "/" + name, name, settings.mailboxes.emplace_back());
                       }
                     }),
            r.message_types(settings.message_types)});
  if (settings.enabled && settings.mailboxes.empty())
    r.problem(at + "/mailboxes", "must name a mailbox when imap is enabled");
  if (r.problems().size() != before) return nullptr;
  return std::make_unique<ImapSection>(std::move(settings));
}

}  // namespace

std::vector<connectors::SecretKey> ImapSection::secrets() const {
  std::vector<connectors::SecretKey> out;
  for (const auto& m : m_settings.mailboxes) {
    const bool token = !m.oauth_token_env.empty();
    out.push_back({"connectors.imap.mailboxes." + m.mailbox.name + (token ? ".oauth_token_env" : ".password_env"),
                   token ? m.oauth_token_env : m.password_env});
  }
  return out;
}

std::expected<std::vector<MailboxSettings>, std::string> ImapSection::mailboxes() const {
  std::vector<MailboxSettings> out;
  for (const auto& m : m_settings.mailboxes) {
    const bool token = !m.oauth_token_env.empty();
    auto secret = config::read_secret(token ? m.oauth_token_env : m.password_env);
    if (!secret) return std::unexpected("connectors.imap.mailboxes." + m.mailbox.name + ": " + secret.error());
    MailboxSettings settings = m.mailbox;
    for (ServerSettings* s : {&settings.imap, &settings.smtp}) (token ? s->oauth_token : s->password) = *secret;
    out.push_back(std::move(settings));
  }
  return out;
}

std::expected<std::unique_ptr<connectors::Channel>, std::string> ImapSection::make(
    const connectors::ChannelDeps& deps) const {
  auto first = mailboxes();
  if (!first) return std::unexpected(first.error());
  ChannelSettings settings;
  settings.mailboxes = std::move(*first);
  // Read at start and again on reload (a changed password).
  settings.reread = [section = *this] { return section.mailboxes(); };
  return std::make_unique<ImapChannel>(deps, std::move(settings));
}

const connectors::Kind& kind() {
  static const connectors::Kind k{.name = k_channel_name,
                                  .label = "Email (IMAP)",
                                  .webhook_path = "",
                                  .resolves_unknown = true,
                                  .provider_ids_name_counterpart = false,
                                  .read = read};
  return k;
}

}  // namespace dispatchd::imap
