#pragma once
// The IMAP channel's kind (connectors/registry.h): connectors.imap as read, its secrets,
// message types and constructor (docs/configuration.md has the keys).

#include <string>
#include <vector>

#include "connectors/imap/channel.h"
#include "connectors/registry.h"

namespace dispatchd::imap {

// One mailbox as connectors.imap.mailboxes.<name> names it; secrets by name, read by make().
struct MailboxSection {
  MailboxSettings mailbox;      // its credentials empty
  std::string password_env;     // the password's variable or credential, or
  std::string oauth_token_env;  // an OAuth 2.0 access token's (XOAUTH2), one of the two
};

// connectors.imap as read.
struct SectionSettings {
  bool enabled = false;
  std::vector<MailboxSection> mailboxes;  // in the order the file lists them
  common::MessageTypes message_types;     // email::mail_types() unless the file says otherwise
};

// What the registry holds for connectors.imap; settings() for tests.
class ImapSection final : public connectors::Section {
 public:
  explicit ImapSection(SectionSettings settings) : m_settings(std::move(settings)) {}
  const SectionSettings& settings() const { return m_settings; }

  bool enabled() const override { return m_settings.enabled; }
  std::vector<connectors::SecretKey> secrets() const override;
  const common::MessageTypes& message_types() const override { return m_settings.message_types; }
  [[nodiscard]] std::expected<std::unique_ptr<connectors::Channel>, std::string> make(
      const connectors::ChannelDeps& deps) const override;

  // Every mailbox with its secret read (config::read_secret); an error names the key.
  [[nodiscard]] std::expected<std::vector<MailboxSettings>, std::string> mailboxes() const;

 private:
  SectionSettings m_settings;
};

const connectors::Kind& kind();

}  // namespace dispatchd::imap
