// dispatchd: the daemon. Parses its arguments, checks the configuration (--check-config),
// or runs the service on one Asio event loop until SIGTERM/SIGINT; SIGHUP reloads the
// catalog and the system prompt. Logs go to stderr (journald keeps them).
#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <spdlog/cfg/env.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <cstdio>
#include <cstring>
#include <string>

#include "common/handler_timing.h"
#include "config/config.h"
#include "config/database_password.h"
#include "connectors/registry.h"
#include "daemon/mcp_servers.h"
#include "daemon/service.h"
#include "daemon/startup.h"
#include "store/backend.h"

namespace {

constexpr const char* k_usage =
    "usage: dispatchd --config FILE [--check-config]\n"
    "  --check-config   check the configuration, the catalog and its examples, the prompt file,\n"
    "                   the migrations and the secrets, and start the MCP servers to pin the\n"
    "                   catalog's tools; print every problem; exit 0 when all is well, 1 otherwise\n"
    "  --version, --help\n";

constexpr std::chrono::seconds k_drain{10};

int check_config(const dispatchd::config::Config& config,
                 const std::vector<dispatchd::connectors::Configured>& channels) {
  auto problems = dispatchd::daemon::check_environment(config);
  // The MCP servers are started and their tools pinned only when all else is well: a
  // catalog that does not load has no actions to pin.
  if (problems.empty()) {
    if (auto catalog = dispatchd::catalog::Catalog::load_file(config.catalog)) {
      problems = dispatchd::daemon::check_mcp(config, *catalog);
      const auto media = dispatchd::daemon::check_model_media(config, channels);
      problems.insert(problems.end(), media.begin(), media.end());
      auto templates = dispatchd::daemon::check_channel_catalog(config, channels, *catalog);
      problems.insert(problems.end(), templates.problems.begin(), templates.problems.end());
      for (const auto& note : templates.notes) std::printf("%s\n", note.c_str());
    }
  }
  for (const auto& problem : problems) std::fprintf(stderr, "%s\n", problem.c_str());
  if (!problems.empty()) return 1;
  // Where a PostgreSQL password comes from (never the password): the systemd credential
  // wins over the variable, which an operator may not expect (config/database_password.h).
  if (dispatchd::store::backend_of(config.database) == dispatchd::store::Backend::postgresql) {
    if (auto password = dispatchd::config::database_password(config))
      std::printf("%s\n", dispatchd::config::describe(*password).c_str());
  }
  std::printf("%s: ok\n", config.path.c_str());
  return 0;
}

void setup_logging() {
  auto logger = spdlog::stderr_logger_st("dispatchd");
  // journald adds the time; the level is enough.
  logger->set_pattern("[%l] %v");
  spdlog::set_default_logger(logger);
  spdlog::cfg::load_env_levels();
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
  auto config = dispatchd::config::load(config_path, dispatchd::connectors::section_problems);
  if (!config) {
    for (const auto& problem : config.error()) std::fprintf(stderr, "%s\n", problem.c_str());
    return 1;
  }
  // The channels read their own sections (connectors/registry.h); load() reported their
  // problems with the file's.
  auto channels = dispatchd::connectors::configure(*config);
  if (!channels) {
    for (const auto& problem : channels.error()) std::fprintf(stderr, "%s\n", problem.c_str());
    return 1;
  }
  if (check_only) return check_config(*config, *channels);

  setup_logging();
  // Open files: systemd starts a service at a soft limit of 1,024; a large
  // llm.max_concurrency needs more (a connection per model permit).
  const auto needed = dispatchd::daemon::open_files_needed(*config);
  if (auto limit = dispatchd::daemon::raise_open_files_limit(needed); !limit)
    spdlog::warn("cannot raise the open files limit: {}", limit.error());
  else if (*limit < needed)
    spdlog::warn("open files limited to {} (the configuration may use {}): raise LimitNOFILE", *limit, needed);
  boost::asio::io_context io(1);
  // Every step the loop runs is timed for /metrics (common/handler_timing.h).
  dispatchd::common::HandlerTimes loop_times;
  const dispatchd::common::TimeHandlers timed(loop_times);
  auto service = dispatchd::daemon::Service::create(std::move(*config), io, &loop_times);
  if (!service) {
    spdlog::critical("cannot start: {}", service.error());
    return 1;
  }
  // The handlers are installed before start() notifies READY: a SIGHUP sent as soon as
  // systemd sees the service ready must reload it, not end it (SIGHUP's default action).
  boost::asio::signal_set signals(io, SIGTERM, SIGINT, SIGHUP);
  std::function<void(const boost::system::error_code&, int)> on_signal = [&](const boost::system::error_code& ec,
                                                                             int signal) {
    if (ec) return;
    if (signal == SIGHUP) {
      (*service)->reload();
      signals.async_wait(on_signal);
      return;
    }
    spdlog::info("signal {}: shutting down", signal == SIGTERM ? "TERM" : "INT");
    (*service)->shutdown(k_drain, [&] { io.stop(); });
  };
  signals.async_wait(on_signal);
  if (auto started = (*service)->start(); !started) {
    spdlog::critical("cannot start: {}", started.error());
    return 1;
  }
  io.run();
  return 0;
}
