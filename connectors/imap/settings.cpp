#include "connectors/imap/settings.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace dispatchd::imap {
namespace {

bool settings_has_line_break(std::string_view text) {
  return text.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos;
}

}  // namespace

std::optional<std::string> check_settings(const ServerSettings& settings) {
  if (settings.host.empty()) return "host is empty";
  bool host_ok = std::all_of(settings.host.begin(), settings.host.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
           c == ':' || c == '_';
  });
  if (!host_ok) return "host must be a name or an IP address (letters, digits, '.', '-', ':')";
  if (settings.user.empty()) return "user is empty";
  if (settings_has_line_break(settings.user)) return "user holds CR, LF or NUL";
  if (settings.oauth_token.empty() && settings.password.empty()) return "neither a password nor an OAuth token";
  if (settings_has_line_break(settings.password) || settings_has_line_break(settings.oauth_token)) {
    return "a credential holds CR, LF or NUL";
  }
  if (!settings.sasl_mechanism.empty()) {
    constexpr std::array<std::string_view, 4> k_mechanisms = {"PLAIN", "LOGIN", "XOAUTH2", "OAUTHBEARER"};
    if (std::find(k_mechanisms.begin(), k_mechanisms.end(), settings.sasl_mechanism) == k_mechanisms.end()) {
      return "sasl_mechanism must be PLAIN, LOGIN, XOAUTH2 or OAUTHBEARER";
    }
    bool bearer = settings.sasl_mechanism == "XOAUTH2" || settings.sasl_mechanism == "OAUTHBEARER";
    if (bearer != !settings.oauth_token.empty()) {
      return "sasl_mechanism " + settings.sasl_mechanism +
             (bearer ? " needs an OAuth token" : " needs a password, not an OAuth token");
    }
  }
  if (settings_has_line_break(settings.ca_file)) return "ca_file holds CR, LF or NUL";
  if (settings.connect_timeout.count() <= 0 || settings.io_timeout.count() <= 0 ||
      settings.operation_timeout.count() <= 0) {
    return "timeouts must be positive";
  }
  return std::nullopt;
}

}  // namespace dispatchd::imap
