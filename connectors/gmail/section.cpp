#include "connectors/gmail/section.h"

#include <chrono>

#include "common/settings_reader.h"
#include "config/secrets.h"
#include "connectors/email/inbound.h"
#include "connectors/gmail/channel.h"

namespace dispatchd::gmail {
namespace {

using Value = rapidjson::Value;

std::unique_ptr<connectors::Section> read(const config::ChannelSection& section, json::SettingsReader& r,
                                          const config::Config& /*config*/) {
  const auto document = r.document(section.json, section.at);
  if (!document) return nullptr;
  const Value& v = *document;
  const std::string& at = section.at;
  SectionSettings gm;
  const std::size_t before = r.problems().size();
  r.object(v, at,
           {r.boolean("enabled", gm.enabled), r.string("api_base_url", gm.api_base_url),
            r.string("token_url", gm.token_url), r.string("client_id_env", gm.client_id_env),
            r.string("client_secret_env", gm.client_secret_env), r.string("refresh_token_env", gm.refresh_token_env),
            r.integer("poll_interval_s", gm.poll_interval_s, 1, 86400), r.string("label", gm.label),
            r.integer("backfill_days", gm.backfill_days, 0, 3650), r.string("handled_label", gm.handled_label),
            r.integer("unknown_recheck_s", gm.unknown_recheck_s, 1, 3600), r.message_types(gm.message_types)});
  if (gm.enabled) {
    if (!json::SettingsReader::is_url(gm.api_base_url)) r.problem(at + "/api_base_url", "must be an http(s) URL");
    if (!json::SettingsReader::is_url(gm.token_url)) r.problem(at + "/token_url", "must be an http(s) URL");
    r.require(at,
              {{"client_id_env", &gm.client_id_env},
               {"client_secret_env", &gm.client_secret_env},
               {"refresh_token_env", &gm.refresh_token_env}},
              "when gmail is enabled");
  }
  if (r.problems().size() != before) return nullptr;
  return std::make_unique<GmailSection>(std::move(gm));
}

}  // namespace

std::vector<connectors::SecretKey> GmailSection::secrets() const {
  return {{"connectors.gmail.client_id_env", m_settings.client_id_env},
          {"connectors.gmail.client_secret_env", m_settings.client_secret_env},
          {"connectors.gmail.refresh_token_env", m_settings.refresh_token_env}};
}

std::expected<std::unique_ptr<connectors::Channel>, std::string> GmailSection::make(
    const connectors::ChannelDeps& deps) const {
  const SectionSettings& gm = m_settings;
  // Read at start and again on reload (a rotated refresh token in a credential file).
  auto credentials = [gm]() -> std::expected<OAuthCredentials, std::string> {
    OAuthCredentials c{gm.token_url, {}, {}, {}};
    for (auto [name, target] :
         {std::pair{gm.client_id_env, &c.client_id}, std::pair{gm.client_secret_env, &c.client_secret},
          std::pair{gm.refresh_token_env, &c.refresh_token}}) {
      auto value = config::read_secret(name);
      if (!value) return std::unexpected("connectors.gmail: " + value.error());
      *target = std::move(*value);
    }
    return c;
  };
  auto first = credentials();
  if (!first) return std::unexpected(first.error());
  ChannelSettings settings;
  settings.api_base_url = gm.api_base_url;
  settings.credentials = std::move(*first);
  settings.poll_interval = std::chrono::seconds(gm.poll_interval_s);
  settings.label = gm.label;
  settings.backfill_days = gm.backfill_days;
  settings.handled_label = gm.handled_label;
  settings.unknown_recheck = std::chrono::seconds(gm.unknown_recheck_s);
  settings.reread_credentials = credentials;
  return std::make_unique<GmailChannel>(deps, std::move(settings));
}

const common::MessageTypes& default_types() { return email::mail_types(); }

const connectors::Kind& kind() {
  static const connectors::Kind k{.name = k_channel_name,
                                  .label = "Gmail",
                                  .webhook_path = "",
                                  .resolves_unknown = true,
                                  .provider_ids_name_counterpart = false,
                                  .read = read};
  return k;
}

}  // namespace dispatchd::gmail
