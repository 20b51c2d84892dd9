#pragma once
// The channel kinds this dispatchd has, in one list (registry.cpp), and what each brings:
// its name, how it reads its section of the configuration (connectors.<name>), the secrets
// it needs, its message types' handling, whether it can look up a send whose outcome is
// unknown, what erasure digests of its rows, and its constructor. The daemon, the staff
// API, the store and replay ask here; none of them names a channel.
//
// Adding a channel: a folder connectors/<name>/ with the channel (channel.h's contract), a
// function returning its Kind, and one line in registry.cpp's list.

#include <expected>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.h"
#include "common/message_types.h"
#include "config/config.h"
#include "connectors/channel.h"
#include "store/database.h"

namespace dispatchd::json {
class SettingsReader;
}

namespace dispatchd::connectors {

// A secret a channel reads at start: the configuration key naming it
// ("connectors.gmail.client_id_env") and the variable's (or credential's) name.
struct SecretKey {
  std::string key;
  std::string name;
};

// What a channel says of the catalog with its settings (WhatsApp: template actions against
// the templates listed so far), for --check-config.
struct CatalogCheck {
  std::vector<std::string> problems;
  std::vector<std::string> notes;  // what could not be checked yet, and why
};

// Opens the configured database for a check; an error says why it cannot.
using OpenDatabase = std::function<std::expected<store::Database, std::string>()>;

// One kind's section as read: its settings, opaque to the daemon.
class Section {
 public:
  virtual ~Section() = default;
  virtual bool enabled() const = 0;
  // The secrets make() reads; --check-config and start check each is set.
  virtual std::vector<SecretKey> secrets() const = 0;
  // Every type the channel gives, with its handling (the agent's type rules).
  virtual const common::MessageTypes& message_types() const = 0;
  // The channel, its secrets read (config::read_secret); an error names the key.
  [[nodiscard]] virtual std::expected<std::unique_ptr<Channel>, std::string> make(const ChannelDeps& deps) const = 0;
  // Nothing to say by default.
  virtual CatalogCheck check_catalog(const catalog::Catalog& /*catalog*/, const OpenDatabase& /*open*/) const {
    return {};
  }
};

struct Kind {
  std::string_view name;   // the section's key and the store's channel (inbox.channel)
  std::string_view label;  // how staff see it: "WhatsApp"
  // The listener's path for its webhooks when the provider pushes ("" for a polling
  // channel); while the channel is disabled the path answers 404 saying so.
  std::string_view webhook_path;
  // Channel::resolve_unknown can look a send up: an interrupted send of this channel is
  // asked about at the next start instead of escalated (store::recover_sending).
  bool resolves_unknown = false;
  // Its provider message ids carry the counterpart's address (WhatsApp's wamid encodes the
  // phone number): erasure replaces them with digests (store/tools/erase.h).
  bool provider_ids_name_counterpart = false;
  // Reads connectors.<name> (an empty object when the file has none: the defaults) with
  // `reader`, which collects the problems (SettingsReader::document reads the text);
  // `config` is the rest of the file (http.max_body_bytes, the file's folder for relative
  // paths). Null only with problems.
  std::unique_ptr<Section> (*read)(const config::ChannelSection& section, json::SettingsReader& reader,
                                   const config::Config& config) = nullptr;
};

// Every kind, in registration order.
std::span<const Kind* const> kinds();

// Every kind's name: the channels the store may hold.
std::vector<std::string> kind_names();

// The kind of that name; null for none.
const Kind* find_kind(std::string_view name);

// Every kind with its section read from `config` (its defaults when the file has none),
// in registration order; or every problem, a section for a kind that does not exist
// included, as "file: /connectors/...: message".
struct Configured {
  const Kind* kind = nullptr;
  std::unique_ptr<Section> section;
};
[[nodiscard]] std::expected<std::vector<Configured>, std::vector<std::string>> configure(const config::Config& config);

// configure's problems only: config::load's SectionCheck, so that the channels' problems are
// reported with the rest of the file's.
std::vector<std::string> section_problems(const config::Config& config);

}  // namespace dispatchd::connectors
