#include "mcp/stdio_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <deque>
#include <mutex>
#include <utility>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

namespace dispatchd::mcp {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

struct StdioProcess::State {
  State(asio::io_context& io, const StdioLimits& l, StdioCallbacks c)
      : limits(l), callbacks(std::move(c)), in(io), out(io), err(io), reaper(io) {}

  StdioLimits limits;
  StdioCallbacks callbacks;
  pid_t pid = -1;
  asio::posix::stream_descriptor in, out, err;
  asio::steady_timer reaper;
  std::array<char, 64 * 1024> out_chunk{}, err_chunk{};
  std::string out_line, err_line;
  bool out_skipping = false, err_skipping = false;
  std::deque<std::string> queue;
  bool writing = false;
  bool ending = false;
  bool reaped = false;
  bool alive = true;  // false once the owner is gone: no callback after that
  Clock::time_point end_started;
  int signals_sent = 0;
  Clock::time_point window_start;
  std::size_t window_lines = 0;
  std::uint64_t window_dropped = 0;
  Stats stats;
};

namespace {

using State = StdioProcess::State;

void read_out(const std::shared_ptr<State>& s);
void read_err(const std::shared_ptr<State>& s);
void begin_end(const std::shared_ptr<State>& s);

// The lines in `data`: complete ones handed to `line`; a line growing past the limit is
// dropped whole (`skipping` until its '\n'), `oversized` counting it once.
template <typename Line, typename Oversized>
void split(const std::shared_ptr<State>& s, const char* data, std::size_t size, std::string& pending, bool& skipping,
           Line&& line, Oversized&& oversized) {
  std::size_t at = 0;
  while (at < size && s->alive) {
    const char* nl = static_cast<const char*>(std::memchr(data + at, '\n', size - at));
    const std::size_t end = nl ? static_cast<std::size_t>(nl - data) : size;
    if (!skipping) {
      if (pending.size() + (end - at) > s->limits.max_line_bytes) {
        skipping = true;
        pending.clear();
        oversized();
      } else {
        pending.append(data + at, end - at);
      }
    }
    if (!nl) return;
    if (!skipping) line(std::exchange(pending, {}));
    skipping = false;
    at = end + 1;
  }
}

void report_stderr(const std::shared_ptr<State>& s, std::string text) {
  const auto now = Clock::now();
  if (now - s->window_start >= s->limits.stderr_window) {
    if (s->window_dropped > 0 && s->callbacks.on_stderr)
      s->callbacks.on_stderr("(" + std::to_string(s->window_dropped) + " more stderr lines not shown)");
    s->window_start = now;
    s->window_lines = 0;
    s->window_dropped = 0;
    if (!s->alive) return;
  }
  if (s->window_lines >= s->limits.stderr_lines) {
    ++s->window_dropped;
    ++s->stats.stderr_dropped;
    return;
  }
  ++s->window_lines;
  ++s->stats.stderr_lines;
  if (s->callbacks.on_stderr) s->callbacks.on_stderr(std::move(text));
}

void read_out(const std::shared_ptr<State>& s) {
  s->out.async_read_some(asio::buffer(s->out_chunk), [s](const boost::system::error_code& ec, std::size_t n) {
    if (!s->alive) return;
    if (ec) return begin_end(s);  // end of file (the server closed it or exited) or an error
    split(
        s, s->out_chunk.data(), n, s->out_line, s->out_skipping,
        [&](std::string line) {
          ++s->stats.lines;
          if (s->callbacks.on_line) s->callbacks.on_line(std::move(line));
        },
        [&] { ++s->stats.oversized_lines; });
    if (s->alive) read_out(s);
  });
}

void read_err(const std::shared_ptr<State>& s) {
  s->err.async_read_some(asio::buffer(s->err_chunk), [s](const boost::system::error_code& ec, std::size_t n) {
    if (!s->alive || ec) return;
    split(
        s, s->err_chunk.data(), n, s->err_line, s->err_skipping,
        [&](std::string line) { report_stderr(s, std::move(line)); },
        [&] { report_stderr(s, "(a stderr line over the length limit, not shown)"); });
    if (s->alive) read_err(s);
  });
}

void write_next(const std::shared_ptr<State>& s) {
  if (s->writing || s->queue.empty() || s->ending) return;
  s->writing = true;
  asio::async_write(s->in, asio::buffer(s->queue.front()), [s](const boost::system::error_code& ec, std::size_t) {
    s->writing = false;
    if (!s->alive) return;
    // The server stopped reading (it is ending, and what it missed fails with it), or stdin
    // was closed meanwhile (begin_end kept only this write's text, for its buffer).
    if (ec || s->ending) {
      s->queue.clear();
      return;
    }
    s->queue.pop_front();
    write_next(s);
  });
}

std::string how_it_ended(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "ended (wait status " + std::to_string(status) + ")";
}

// Polls for the exit, escalating from the closed stdin to SIGTERM and SIGKILL of the group.
void reap(const std::shared_ptr<State>& s) {
  int status = 0;
  const pid_t done = ::waitpid(s->pid, &status, WNOHANG);
  if (done == s->pid || (done < 0 && errno == ECHILD)) {
    s->reaped = true;
    boost::system::error_code ignored;
    s->out.close(ignored);
    s->err.close(ignored);
    if (s->callbacks.on_exit) s->callbacks.on_exit(done == s->pid ? how_it_ended(status) : "gone (not our child)");
    return;
  }
  const auto elapsed = Clock::now() - s->end_started;
  if (s->signals_sent == 0 && elapsed >= s->limits.exit_wait) {
    ::kill(-s->pid, SIGTERM);
    s->signals_sent = 1;
  }
  if (s->signals_sent == 1 && elapsed >= s->limits.exit_wait + s->limits.term_wait) {
    ::kill(-s->pid, SIGKILL);
    s->signals_sent = 2;
  }
  s->reaper.expires_after(std::chrono::milliseconds(20));
  s->reaper.async_wait([s](const boost::system::error_code& ec) {
    if (!ec && s->alive) reap(s);
  });
}

void begin_end(const std::shared_ptr<State>& s) {
  if (s->ending) return;
  s->ending = true;
  s->end_started = Clock::now();
  // A write in progress still reads from the front text: it stays until its handler runs.
  s->queue.erase(s->writing ? std::next(s->queue.begin()) : s->queue.begin(), s->queue.end());
  boost::system::error_code ignored;
  s->in.close(ignored);  // EOF on the server's stdin: the polite way to ask it to exit
  reap(s);
}

void ignore_sigpipe() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action {};
    action.sa_handler = SIG_IGN;
    sigemptyset(&action.sa_mask);
    if (::sigaction(SIGPIPE, &action, nullptr) != 0) {
      // Writes to a server that died could then end dispatchd; nothing better to do here.
    }
  });
}

// A pipe whose both ends close on exec: the child gets only the ends dup2 makes 0, 1 and 2.
bool make_pipe(int fds[2]) { return ::pipe2(fds, O_CLOEXEC) == 0; }

void close_all(std::initializer_list<int> fds) {
  for (const int fd : fds)
    if (fd >= 0) ::close(fd);
}

}  // namespace

StdioProcess::StdioProcess(std::shared_ptr<State> state) : m_state(std::move(state)) {}

std::expected<std::shared_ptr<StdioProcess>, std::string> StdioProcess::start(asio::io_context& io,
                                                                              const StdioCommand& command,
                                                                              const StdioLimits& limits,
                                                                              StdioCallbacks callbacks) {
  if (command.argv.empty() || command.argv[0].empty()) return std::unexpected(std::string("no command to run"));
  ignore_sigpipe();
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
  if (!make_pipe(in) || !make_pipe(out) || !make_pipe(err)) {
    const std::string why = std::strerror(errno);
    close_all({in[0], in[1], out[0], out[1], err[0], err[1]});
    return std::unexpected("cannot make pipes: " + why);
  }
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attributes);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
  if (!command.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, command.cwd.c_str());
  // Its own process group, no blocked signals, and every signal's default action (dispatchd
  // ignores SIGPIPE; the server must not inherit that).
  sigset_t none, every;
  sigemptyset(&none);
  sigfillset(&every);
  sigdelset(&every, SIGKILL);
  sigdelset(&every, SIGSTOP);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &every);

  std::vector<char*> argv;
  for (const auto& arg : command.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (const auto& [key, value] : command.env) env_strings.push_back(key + "=" + value);
  std::vector<char*> envp;
  for (auto& entry : env_strings) envp.push_back(entry.data());
  envp.push_back(nullptr);

  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, argv[0], &actions, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  close_all({in[0], out[1], err[1]});
  if (rc != 0) {
    close_all({in[1], out[0], err[0]});
    return std::unexpected("cannot start " + command.argv[0] + (command.cwd.empty() ? "" : " in " + command.cwd) +
                           ": " + std::strerror(rc));
  }

  auto state = std::make_shared<State>(io, limits, std::move(callbacks));
  state->pid = pid;
  state->in.assign(in[1]);
  state->out.assign(out[0]);
  state->err.assign(err[0]);
  state->window_start = Clock::now();
  read_out(state);
  read_err(state);
  return std::shared_ptr<StdioProcess>(new StdioProcess(std::move(state)));
}

StdioProcess::~StdioProcess() {
  auto& s = *m_state;
  s.alive = false;
  boost::system::error_code ignored;
  s.reaper.cancel();
  s.in.close(ignored);
  s.out.close(ignored);
  s.err.close(ignored);
  if (!s.reaped && s.pid > 0) {
    ::kill(-s.pid, SIGKILL);
    int status = 0;
    while (::waitpid(s.pid, &status, 0) < 0 && errno == EINTR) {
    }
    s.reaped = true;
  }
}

void StdioProcess::send(std::string line) {
  auto& s = m_state;
  if (s->ending) return;
  line += '\n';
  s->queue.push_back(std::move(line));
  write_next(s);
}

void StdioProcess::stop() { begin_end(m_state); }

pid_t StdioProcess::pid() const { return m_state->pid; }

bool StdioProcess::running() const { return !m_state->reaped; }

StdioProcess::Stats StdioProcess::stats() const { return m_state->stats; }

}  // namespace dispatchd::mcp
