#pragma once
// The WhatsApp channel's kind (connectors/registry.h): connectors.whatsapp as read, its
// secrets, message types and constructor (docs/configuration.md has the keys).

#include <cstddef>
#include <string>

#include "connectors/registry.h"
#include "store/send_pricing.h"

namespace dispatchd::whatsapp {

// The message types the channel gives (the names of MessageKind, webhook.h, with "unknown":
// any type this version does not know), each with its default handling: the customer's
// own words (text, interactive and button replies, locations) go to the model; media,
// contacts, orders and unsupported or unknown types, which the model cannot see, escalate;
// stickers, reactions and system notices are ignored.
const common::MessageTypes& default_types();

// connectors.whatsapp as read.
struct SectionSettings {
  bool enabled = false;
  std::string graph_base_url = "https://graph.facebook.com/v21.0";
  std::string phone_number_id;
  std::string access_token_env;
  std::string app_secret_env;
  std::string verify_token_env;
  bool typing_indicator = true;
  std::string waba_id;
  int template_refresh_minutes = 60;
  common::MessageTypes message_types = default_types();
  store::PriceTable prices;
  std::size_t max_body_bytes = 0;  // http.max_body_bytes
};

// What the registry holds for connectors.whatsapp; settings() for tests.
class WhatsAppSection final : public connectors::Section {
 public:
  explicit WhatsAppSection(SectionSettings settings) : m_settings(std::move(settings)) {}
  const SectionSettings& settings() const { return m_settings; }

  bool enabled() const override { return m_settings.enabled; }
  std::vector<connectors::SecretKey> secrets() const override;
  const common::MessageTypes& message_types() const override { return m_settings.message_types; }
  [[nodiscard]] std::expected<std::unique_ptr<connectors::Channel>, std::string> make(
      const connectors::ChannelDeps& deps) const override;
  connectors::CatalogCheck check_catalog(const catalog::Catalog& catalog,
                                         const connectors::OpenDatabase& open) const override;

 private:
  SectionSettings m_settings;
};

const connectors::Kind& kind();

}  // namespace dispatchd::whatsapp
