#pragma once
// The Gmail channel's kind (connectors/registry.h): connectors.gmail as read, its secrets,
// message types and constructor (docs/configuration.md has the keys).

#include <string>

#include "connectors/registry.h"

namespace dispatchd::gmail {

// The message types the channel gives (channel.h): "email" to the model; "own",
// "auto_reply", "list", "bounce", "no_reply" (loop prevention) ignored; "undecodable"
// escalated.
const common::MessageTypes& default_types();

// connectors.gmail as read.
struct SectionSettings {
  bool enabled = false;
  std::string api_base_url = "https://gmail.googleapis.com";
  std::string token_url = "https://oauth2.googleapis.com/token";
  std::string client_id_env;
  std::string client_secret_env;
  std::string refresh_token_env;
  int poll_interval_s = 60;
  std::string label = "INBOX";
  int backfill_days = 0;
  std::string handled_label;
  int unknown_recheck_s = 60;  // between the two searches for a send whose outcome is unknown
  common::MessageTypes message_types = default_types();
};

// What the registry holds for connectors.gmail; settings() for tests.
class GmailSection final : public connectors::Section {
 public:
  explicit GmailSection(SectionSettings settings) : m_settings(std::move(settings)) {}
  const SectionSettings& settings() const { return m_settings; }

  bool enabled() const override { return m_settings.enabled; }
  std::vector<connectors::SecretKey> secrets() const override;
  const common::MessageTypes& message_types() const override { return m_settings.message_types; }
  [[nodiscard]] std::expected<std::unique_ptr<connectors::Channel>, std::string> make(
      const connectors::ChannelDeps& deps) const override;

 private:
  SectionSettings m_settings;
};

const connectors::Kind& kind();

}  // namespace dispatchd::gmail
