#include "config/secrets.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace dispatchd::config {

std::expected<std::string, std::string> read_secret(const std::string& name) {
  if (name.empty()) return std::unexpected("no secret name configured");
  if (const char* value = std::getenv(name.c_str()); value && *value) return std::string(value);
  if (const char* dir = std::getenv("CREDENTIALS_DIRECTORY"); dir && *dir) {
    std::ifstream in(std::string(dir) + "/" + name, std::ios::binary);
    if (in) {
      std::ostringstream bytes;
      bytes << in.rdbuf();
      std::string value = bytes.str();
      while (!value.empty() && (value.back() == '\n' || value.back() == '\r')) value.pop_back();
      if (!value.empty()) return value;
    }
  }
  return std::unexpected("secret " + name +
                         " is not set (environment variable, or a file of that name in "
                         "$CREDENTIALS_DIRECTORY)");
}

}  // namespace dispatchd::config
