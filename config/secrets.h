#pragma once
// Secrets by name: the environment variable `name`, else the file
// $CREDENTIALS_DIRECTORY/`name` (systemd LoadCredential=), trailing newline removed.
// Values never appear in errors or logs; only the name does.

#include <expected>
#include <string>

namespace dispatchd::config {

[[nodiscard]] std::expected<std::string, std::string> read_secret(const std::string& name);

}  // namespace dispatchd::config
