// dispatchd: the daemon. So far it checks its configuration (--check-config) and prepares
// the store at start (migrations, interrupted sends, leases); the agent loop, the HTTP
// listener and the connectors arrive with the next issues, so after preparing the store it
// says so and exits rather than pretend to serve.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "config/config.h"
#include "daemon/startup.h"

namespace {

constexpr const char* k_usage =
    "usage: dispatchd --config FILE [--check-config]\n"
    "  --check-config   check the configuration, the catalog, the migrations and the secrets;\n"
    "                   print every problem, exit 0 when all is well, 1 otherwise\n";

int check_config(const dispatchd::config::Config& config) {
  const auto problems = dispatchd::daemon::check_environment(config);
  for (const auto& problem : problems) std::fprintf(stderr, "%s\n", problem.c_str());
  if (!problems.empty()) return 1;
  std::printf("%s: ok\n", config.path.c_str());
  return 0;
}

std::string worker_name() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return std::string("dispatchd@") + host;
}

}  // namespace

int main(int argc, char** argv) {
  std::string config_path;
  bool check_only = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--version") == 0) {
      std::printf("dispatchd %s\n", DISPATCHD_VERSION);
      return 0;
    }
    if (std::strcmp(argv[i], "--help") == 0) {
      std::fputs(k_usage, stdout);
      return 0;
    }
    if (std::strcmp(argv[i], "--check-config") == 0) {
      check_only = true;
    } else if (std::strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
      config_path = argv[++i];
    } else {
      std::fprintf(stderr, "dispatchd: unknown argument %s\n%s", argv[i], k_usage);
      return 2;
    }
  }
  if (config_path.empty()) {
    std::fprintf(stderr, "dispatchd: --config FILE is required\n%s", k_usage);
    return 2;
  }
  auto config = dispatchd::config::load(config_path);
  if (!config) {
    for (const auto& problem : config.error()) std::fprintf(stderr, "%s\n", problem.c_str());
    return 1;
  }
  if (check_only) return check_config(*config);

  const auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  auto ready = dispatchd::daemon::prepare_store(*config, worker_name(), now);
  if (!ready) {
    std::fprintf(stderr, "dispatchd: %s\n", ready.error().c_str());
    return 1;
  }
  for (const auto& name : ready->applied) std::printf("dispatchd: applied migration %s\n", name.c_str());
  for (const auto id : ready->unknown_sends) {
    std::printf("dispatchd: action %lld was being sent when the last run stopped: now unknown, escalated\n",
                static_cast<long long>(id));
  }
  std::printf("dispatchd: store ready at %s (schema version %d)\n", config->database.c_str(), ready->schema_version);
  std::fprintf(stderr, "dispatchd: the agent loop is not built yet (issue 4); exiting\n");
  return 2;
}
