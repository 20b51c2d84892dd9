#include "config/database_password.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <system_error>

#include "common/database_kind.h"

namespace dispatchd::config {
namespace {

// The credential file: absent is "not this source"; present but unusable is an error, since
// the operator meant it (a broken LoadCredential= must not fall back to another password).
std::expected<std::optional<std::string>, PasswordError> read_credential(const std::string& dir) {
  const std::string path = dir + "/" + k_password_credential;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  const auto unreadable = [&](const std::string& why) {
    return std::unexpected(PasswordError{PasswordErrorKind::unreadable, "the credential " + path + " " + why});
  };
  if (!std::filesystem::is_regular_file(path, ec)) return unreadable("is not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return unreadable("cannot be read");
  std::string value(k_max_password_bytes + 1, '\0');
  in.read(value.data(), static_cast<std::streamsize>(value.size()));
  value.resize(static_cast<std::size_t>(in.gcount()));
  if (value.size() > k_max_password_bytes)
    return unreadable("is larger than " + std::to_string(k_max_password_bytes) + " bytes");
  while (!value.empty() && (value.back() == '\n' || value.back() == '\r')) value.pop_back();
  if (value.empty()) return unreadable("is empty");
  return value;
}

}  // namespace

PasswordSources system_sources() {
  PasswordSources sources;
  sources.getenv = [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (!value) return std::nullopt;
    return std::string(value);
  };
  if (const char* dir = std::getenv("CREDENTIALS_DIRECTORY"); dir && *dir) sources.credentials_dir = dir;
  return sources;
}

std::expected<DatabasePassword, PasswordError> resolve_database_password(const std::string& database,
                                                                         const std::string& password_env,
                                                                         const PasswordSources& sources) {
  if (database_kind(database) != DatabaseKind::postgresql) return DatabasePassword{};
  if (sources.credentials_dir) {
    auto credential = read_credential(*sources.credentials_dir);
    if (!credential) return std::unexpected(std::move(credential.error()));
    if (*credential)
      return DatabasePassword{PasswordSource::credential, std::move(**credential),
                              *sources.credentials_dir + "/" + k_password_credential};
  }
  if (password_env.empty()) return DatabasePassword{};
  auto value = sources.getenv ? sources.getenv(password_env) : std::nullopt;
  if (!value || value->empty())
    return std::unexpected(
        PasswordError{PasswordErrorKind::env_unset, "database_password_env names " + password_env +
                                                        ", which is not set (and there is no credential " +
                                                        k_password_credential + " in $CREDENTIALS_DIRECTORY)"});
  return DatabasePassword{PasswordSource::environment, std::move(*value), password_env};
}

std::expected<DatabasePassword, PasswordError> database_password(const Config& config) {
  return resolve_database_password(config.database, config.database_password_env, system_sources());
}

std::string describe(const DatabasePassword& password) {
  switch (password.source) {
    case PasswordSource::credential: return "database password: from the systemd credential " + password.origin;
    case PasswordSource::environment: return "database password: from the environment variable " + password.origin;
    case PasswordSource::none: break;
  }
  return "database password: none given (libpq reads PGPASSWORD or ~/.pgpass)";
}

bool uri_has_password(const std::string& uri) {
  const std::string_view text = uri;
  const std::size_t scheme = text.find("://");
  if (scheme == std::string_view::npos) return false;
  const std::size_t start = scheme + 3;
  const std::size_t authority_end = std::min(text.find_first_of("/?", start), text.size());
  const std::string_view authority = text.substr(start, authority_end - start);
  const std::size_t at = authority.rfind('@');
  if (at != std::string_view::npos && authority.substr(0, at).find(':') != std::string_view::npos) return true;
  const std::size_t query = text.find('?', start);
  if (query == std::string_view::npos) return false;
  std::string_view rest = text.substr(query + 1);
  while (!rest.empty()) {
    const std::size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    if (pair.substr(0, pair.find('=')) == "password") return true;
    if (amp == std::string_view::npos) break;
    rest.remove_prefix(amp + 1);
  }
  return false;
}

}  // namespace dispatchd::config
