#include "connectors/imap/client.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <utility>

#include "connectors/imap/internal/curl.h"

namespace dispatchd::imap {
namespace {

using ImapClock = std::chrono::steady_clock;

// A response line (its literals included) longer than this is a protocol error: the watch
// connection only reads short status lines.
constexpr std::size_t k_imap_max_line = 1u << 20;
// A search's or a STORE's answer larger than this is too_large.
constexpr std::size_t k_imap_max_listing = 16u << 20;
// Server words kept for an error message.
constexpr std::size_t k_imap_max_words = 300;

char imap_client_upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

std::string_view imap_client_word(std::string_view& text) {
  std::size_t end = text.find(' ');
  std::string_view word = text.substr(0, end);
  text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
  return word;
}

std::string_view imap_client_chomp(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  return line;
}

// curl's tags: a letter and three digits ("A003").
bool imap_curl_tag(std::string_view word) {
  return word.size() >= 2 && word.size() <= 8 && word.front() >= 'A' && word.front() <= 'Z' &&
         std::all_of(word.begin() + 1, word.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string imap_client_bounded(std::string_view text) {
  std::string out(text.substr(0, k_imap_max_words));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return out;
}

// What curl's debug callback shows of an IMAP conversation: the verb of the last command
// sent (never its arguments: a LOGIN's or AUTHENTICATE's carry credentials) and the last
// tagged line received. What curl says while closing (LOGOUT) is left out: a failure's
// classification needs the command that failed.
struct ImapTrace {
  std::string verb;
  std::string last_tagged;
  bool closing = false;
};

int imap_trace_debug(CURL* /*easy*/, curl_infotype type, char* data, std::size_t size, void* user) {
  auto* trace = static_cast<ImapTrace*>(user);
  std::string_view text(data, size);
  if (type == CURLINFO_HEADER_OUT) {
    std::string_view rest = imap_client_chomp(text);
    if (!imap_curl_tag(imap_client_word(rest)) || rest.empty()) return 0;  // a SASL continuation
    std::string verb(imap_client_word(rest));
    for (char& c : verb) c = imap_client_upper(c);
    if (verb == "UID") {
      verb += " ";
      for (char c : imap_client_word(rest)) verb.push_back(imap_client_upper(c));
    }
    if (verb == "LOGOUT") {
      trace->closing = true;
    } else if (!trace->closing) {
      trace->verb = std::move(verb);
    }
  } else if (type == CURLINFO_HEADER_IN && !trace->closing) {
    while (!text.empty()) {
      std::size_t end = text.find('\n');
      std::string_view line = imap_client_chomp(text.substr(0, end));
      text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
      std::string_view rest = line;
      if (imap_curl_tag(imap_client_word(rest))) trace->last_tagged = std::string(line.substr(0, k_imap_max_words));
    }
  }
  return 0;
}

std::string imap_refusal_words(std::string_view verb, const Tagged& completion) {
  std::string words(verb);
  words += completion.status == Tagged::Status::no    ? ": NO "
           : completion.status == Tagged::Status::bad ? ": BAD "
                                                      : ": OK ";
  if (!completion.code.empty()) words += "[" + completion.code + "] ";
  words += completion.text;
  return imap_client_bounded(words);
}

// The kind of a failed curl transfer of an IMAP URL.
Error imap_curl_error(CURLcode code, const ImapTrace& trace, const char* error_buffer, bool over_limit) {
  std::string words = detail::curl_words(code, error_buffer);
  std::optional<Tagged> completion;
  if (!trace.last_tagged.empty()) {
    std::string_view rest = trace.last_tagged;
    completion = parse_tagged(trace.last_tagged, imap_client_word(rest));
  }
  auto server = [&](std::string what) {
    if (completion) what += " (" + imap_refusal_words(trace.verb, *completion) + ")";
    return imap_client_bounded(what);
  };
  switch (code) {
    case CURLE_LOGIN_DENIED:   // a refused login, and also a refused SELECT: the verb tells
    case CURLE_QUOTE_ERROR: {  // a custom request answered NO or BAD
      std::string verb = trace.verb.empty() && code == CURLE_LOGIN_DENIED ? "LOGIN" : trace.verb;
      ErrorKind kind = classify_refusal(verb, completion.value_or(Tagged{Tagged::Status::no, "", ""}));
      return Error{kind, server(words)};
    }
    case CURLE_REMOTE_FILE_NOT_FOUND:
      // After SELECT: curl compared the mailbox's UIDVALIDITY with the URL's. After UID
      // FETCH: the server answered OK without the message.
      if (trace.verb == "SELECT" || trace.verb == "EXAMINE") {
        return Error{ErrorKind::uidvalidity_changed, server(words)};
      }
      return Error{ErrorKind::message_missing, server(words)};
    case CURLE_OPERATION_TIMEDOUT: return Error{ErrorKind::timeout, words};
    case CURLE_WRITE_ERROR:
      if (over_limit) return Error{ErrorKind::too_large, "the answer is larger than the client's limit"};
      return Error{ErrorKind::connection, words};
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_BAD_FUNCTION_ARGUMENT:
    case CURLE_NOT_BUILT_IN:
    case CURLE_UNKNOWN_OPTION: return Error{ErrorKind::invalid_argument, words};
    case CURLE_WEIRD_SERVER_REPLY: return Error{ErrorKind::protocol, server(words)};
    default:
      if (detail::is_tls_refusal(code)) return Error{ErrorKind::tls_refused, words};
      return Error{ErrorKind::connection, words};
  }
}

struct ImapBody {
  std::string bytes;
  std::size_t limit = 0;
  bool over = false;
};

std::size_t imap_write_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* body = static_cast<ImapBody*>(user);
  std::size_t bytes = size * count;
  if (body->bytes.size() + bytes > body->limit) {
    body->over = true;
    return 0;  // CURLE_WRITE_ERROR
  }
  body->bytes.append(data, bytes);
  return bytes;
}

// What a command on the watch connection brought back.
struct ImapCompletion {
  std::string untagged;  // its untagged lines, CRLF after each
  Tagged tagged;
};

// Client::interrupter's state: outlives the client when a caller keeps the function.
struct ImapWake {
  ImapWake() : fd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
  ~ImapWake() {
    if (fd >= 0) close(fd);
  }
  ImapWake(const ImapWake&) = delete;
  ImapWake& operator=(const ImapWake&) = delete;
  void fire() {
    fired.store(true);
    std::uint64_t one = 1;
    if (fd >= 0 && write(fd, &one, sizeof one) < 0) {
      // The counter is full or the fd is gone: `fired` still ends the next idle().
    }
  }
  int fd;
  std::atomic<bool> fired{false};
};

// The watch connection: curl connected, did STARTTLS and logged in (CONNECT_ONLY); from
// then on the client speaks IMAP on it with curl_easy_send and curl_easy_recv.
class ImapWatch {
 public:
  // `wake`: Client::interrupter's; its fd ends idle()'s wait, its flag the connecting.
  ImapWatch(const ServerSettings& settings, const ImapWake& wake)
      : m_settings(settings), m_easy(detail::new_easy()), m_wake_fd(wake.fd), m_stop(&wake.fired) {}

  ImapWatch(const ImapWatch&) = delete;
  ImapWatch& operator=(const ImapWatch&) = delete;

  ~ImapWatch() {
    // LOGOUT, not waited for: the server ends the session either way when the socket closes.
    if (m_socket == CURL_SOCKET_BAD) return;
    std::string logout = next_tag() + " LOGOUT\r\n";
    std::size_t sent = 0;
    CURLcode code = curl_easy_send(m_easy.get(), logout.data(), logout.size(), &sent);
    if (code != CURLE_OK) return;
  }

  Result<void> open(const std::string& base_url) {
    CURL* easy = m_easy.get();
    detail::apply_settings(easy, m_settings, m_error);
    std::string url = base_url + "/";
    curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
    curl_easy_setopt(easy, CURLOPT_CONNECT_ONLY, 1L);
    curl_easy_setopt(easy, CURLOPT_VERBOSE, 1L);
    curl_easy_setopt(easy, CURLOPT_DEBUGFUNCTION, imap_trace_debug);
    curl_easy_setopt(easy, CURLOPT_DEBUGDATA, &m_trace);
    detail::abort_when(easy, m_stop);
    CURLcode code = curl_easy_perform(easy);
    detail::detach_callbacks(easy);
    if (code != CURLE_OK) return std::unexpected(imap_curl_error(code, m_trace, m_error, false));
    curl_socket_t socket = CURL_SOCKET_BAD;
    code = curl_easy_getinfo(easy, CURLINFO_ACTIVESOCKET, &socket);
    if (code != CURLE_OK || socket == CURL_SOCKET_BAD) {
      return std::unexpected(Error{ErrorKind::connection, "no socket after connecting"});
    }
    m_socket = socket;
    return {};
  }

  // Whether the connection is gone while it sat unused: the server closed it, or said BYE
  // (an autologout). News it sent meanwhile are read.
  bool gone_while_unused() {
    while (true) {
      pollfd waiting{m_socket, POLLIN, 0};
      int ready = poll(&waiting, 1, 0);
      if (ready == 0) return !m_bye.empty();
      if (ready < 0) return errno != EINTR;
      auto received = receive_some();
      if (!received) return true;
      while (true) {
        std::size_t end = m_buffer.find("\r\n");
        if (end == std::string::npos) break;
        track(std::string_view(m_buffer).substr(0, end));
        m_buffer.erase(0, end + 2);
      }
      if (!*received) return !m_bye.empty();  // nothing decrypted yet
    }
  }

  // Sends `tag command` and reads to its completion. A NO or BAD is the refusal's kind.
  Result<ImapCompletion> command(std::string_view text, std::string_view verb) {
    std::string tag = next_tag();
    if (auto sent = send_line(tag + " " + std::string(text)); !sent) return std::unexpected(std::move(sent.error()));
    ImapCompletion out;
    auto done = read_until(tag, verb, false, &out.untagged);
    if (!done) return std::unexpected(std::move(done.error()));
    out.tagged = std::move(**done);
    return out;
  }

  // APPEND with a synchronizing literal.
  Result<Tagged> append(std::string_view text, std::string_view data) {
    std::string tag = next_tag();
    if (auto sent = send_line(tag + " " + std::string(text)); !sent) return std::unexpected(std::move(sent.error()));
    auto ready = read_until(tag, "APPEND", true, nullptr);
    if (!ready) return std::unexpected(std::move(ready.error()));
    if (*ready) return std::unexpected(Error{ErrorKind::protocol, "APPEND completed before its literal was sent"});
    std::string literal(data);
    literal += "\r\n";
    if (auto sent = send_all(literal, ImapClock::now() + m_settings.operation_timeout); !sent) {
      return std::unexpected(std::move(sent.error()));
    }
    auto done = read_until(tag, "APPEND", false, nullptr);
    if (!done) return std::unexpected(std::move(done.error()));
    return std::move(**done);
  }

  // IDLE until an EXISTS above the count, or `until`; then DONE. Whether mail arrived.
  Result<bool> idle(ImapClock::time_point until) {
    std::string tag = next_tag();
    if (auto sent = send_line(tag + " IDLE"); !sent) return std::unexpected(std::move(sent.error()));
    auto idling = read_until(tag, "IDLE", true, nullptr);
    if (!idling) return std::unexpected(std::move(idling.error()));
    if (*idling) return arrived;  // ended at once: nothing to wait on
    while (!arrived) {
      auto line = read_line(until, true);
      if (!line) {
        if (line.error().kind == ErrorKind::timeout && (ImapClock::now() >= until || m_woken)) break;
        return std::unexpected(std::move(line.error()));
      }
      track(*line);
    }
    if (auto sent = send_line("DONE"); !sent) return std::unexpected(std::move(sent.error()));
    auto done = read_until(tag, "IDLE", false, nullptr);
    if (!done) return std::unexpected(std::move(done.error()));
    return arrived;
  }

  // Whether a line other than the server's goodbye (an untagged BYE) came in since
  // forget_received(): a connection that answered is not stale. A BYE alone is: the server
  // said it before it read the call (a shutdown or a kick racing the call), so the call was
  // not carried out.
  bool received() const { return m_received; }
  void forget_received() { m_received = false; }

  std::string selected;      // the mailbox EXAMINEd on this connection; "" for none
  std::uint32_t exists = 0;  // its message count as last reported
  bool arrived = false;      // an EXISTS above `exists` came in since EXAMINE or idle() last reported
  bool used = false;         // a command ran on it before

 private:
  std::string next_tag() { return "W" + std::to_string(++m_tags); }

  void track(std::string_view line) {
    Untagged news = parse_untagged(line);
    switch (news.type) {
      case Untagged::Type::exists:
        if (news.number > exists) arrived = true;
        exists = news.number;
        break;
      case Untagged::Type::expunge:
        if (exists > 0) --exists;
        break;
      case Untagged::Type::bye: m_bye = news.text.empty() ? "BYE" : news.text; break;
      default: break;
    }
  }

  // Reads until `tag`'s completion (OK: returned; NO or BAD: the refusal) or, when
  // `continuation` is set, the server's "+" (nullopt). Untagged lines are tracked, and
  // appended to `untagged` (CRLF after each) when it is given.
  Result<std::optional<Tagged>> read_until(const std::string& tag, std::string_view verb, bool continuation,
                                           std::string* untagged) {
    while (true) {
      auto line = read_line(ImapClock::now() + m_settings.io_timeout);
      if (!line) return std::unexpected(std::move(line.error()));
      if (continuation && parse_untagged(*line).type == Untagged::Type::continuation) return std::nullopt;
      if (auto tagged = parse_tagged(*line, tag)) {
        if (tagged->status != Tagged::Status::ok) {
          return std::unexpected(Error{classify_refusal(verb, *tagged), imap_refusal_words(verb, *tagged)});
        }
        return tagged;
      }
      track(*line);
      if (untagged != nullptr) {
        *untagged += *line;
        *untagged += "\r\n";
      }
    }
  }

  Result<void> send_line(const std::string& line) {
    return send_all(line + "\r\n", ImapClock::now() + m_settings.io_timeout);
  }

  Error lost(std::string words) const {
    if (!m_bye.empty()) return Error{ErrorKind::unavailable, imap_client_bounded("the server said BYE: " + m_bye)};
    return Error{ErrorKind::connection, std::move(words)};
  }

  // Reads what is there: true when bytes came, false when TLS had nothing whole yet.
  Result<bool> receive_some() {
    char chunk[16384];
    std::size_t got = 0;
    CURLcode code = curl_easy_recv(m_easy.get(), chunk, sizeof chunk, &got);
    if (code == CURLE_AGAIN) return false;
    if (code != CURLE_OK) return std::unexpected(lost(std::string("receiving: ") + curl_easy_strerror(code)));
    if (got == 0) return std::unexpected(lost("the server closed the connection"));
    m_buffer.append(chunk, got);
    return true;
  }

  // `wakeable`: the wake fd ends the wait too (a timeout, m_woken set).
  Result<void> wait_for(short events, ImapClock::time_point deadline, bool wakeable = false) {
    while (true) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - ImapClock::now());
      if (left.count() <= 0) return std::unexpected(Error{ErrorKind::timeout, "the server did not answer in time"});
      pollfd waiting[2] = {{m_socket, events, 0}, {m_wake_fd, POLLIN, 0}};
      const nfds_t count = wakeable && m_wake_fd >= 0 ? 2 : 1;
      int ready = poll(waiting, count, static_cast<int>(std::min<std::int64_t>(left.count(), 60'000)));
      if (ready > 0 && count == 2 && (waiting[1].revents & POLLIN) != 0) {
        m_woken = true;
        return std::unexpected(Error{ErrorKind::timeout, "interrupted"});
      }
      if (ready > 0) return {};
      if (ready < 0 && errno != EINTR) return std::unexpected(Error{ErrorKind::connection, "poll failed"});
    }
  }

  Result<void> send_all(std::string_view data, ImapClock::time_point deadline) {
    while (!data.empty()) {
      std::size_t sent = 0;
      CURLcode code = curl_easy_send(m_easy.get(), data.data(), data.size(), &sent);
      if (code == CURLE_AGAIN) {
        if (auto ready = wait_for(POLLOUT, deadline); !ready) return ready;
        continue;
      }
      if (code != CURLE_OK) return std::unexpected(lost(std::string("sending: ") + curl_easy_strerror(code)));
      data.remove_prefix(sent);
    }
    return {};
  }

  // One response line, its literals ("{n}" at a line's end, n bytes, the line goes on)
  // included, without its final CRLF.
  Result<std::string> read_line(ImapClock::time_point deadline, bool wakeable = false) {
    std::size_t scan = 0;
    while (true) {
      std::size_t end = m_buffer.find("\r\n", scan);
      if (end == std::string::npos) {
        if (m_buffer.size() > k_imap_max_line) {
          return std::unexpected(Error{ErrorKind::protocol, "a response line longer than the client reads"});
        }
        auto received = receive_some();
        if (!received) return std::unexpected(std::move(received.error()));
        if (!*received) {
          if (auto ready = wait_for(POLLIN, deadline, wakeable); !ready) {
            return std::unexpected(std::move(ready.error()));
          }
        }
        continue;
      }
      std::string_view segment = std::string_view(m_buffer).substr(scan, end - scan);
      if (segment.ends_with('}')) {
        std::size_t open = segment.rfind('{');
        std::string_view digits = open == std::string_view::npos ? std::string_view{} : segment.substr(open + 1);
        digits.remove_suffix(1);
        if (!digits.empty() && digits.back() == '+') digits.remove_suffix(1);
        std::size_t size = 0;
        bool number = !digits.empty() && digits.size() <= 7 &&
                      std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (number) {
          for (char c : digits) size = size * 10 + static_cast<std::size_t>(c - '0');
          if (size > k_imap_max_line) {
            return std::unexpected(Error{ErrorKind::protocol, "a literal longer than the client reads"});
          }
          std::size_t need = end + 2 + size;
          while (m_buffer.size() < need) {
            auto received = receive_some();
            if (!received) return std::unexpected(std::move(received.error()));
            if (!*received) {
              if (auto ready = wait_for(POLLIN, deadline); !ready) return std::unexpected(std::move(ready.error()));
            }
          }
          scan = need;
          continue;
        }
      }
      std::string line = m_buffer.substr(0, end);
      m_buffer.erase(0, end + 2);
      if (parse_untagged(line).type != Untagged::Type::bye) m_received = true;
      return line;
    }
  }

  const ServerSettings& m_settings;
  char m_error[CURL_ERROR_SIZE] = {};
  ImapTrace m_trace;
  detail::Easy m_easy;  // after what its options pointed at
  curl_socket_t m_socket = CURL_SOCKET_BAD;
  std::string m_buffer;
  std::string m_bye;
  unsigned m_tags = 0;
  bool m_received = false;
  int m_wake_fd = -1;
  const std::atomic<bool>* m_stop;
  bool m_woken = false;
};

bool imap_breaks_connection(ErrorKind kind) {
  return kind == ErrorKind::connection || kind == ErrorKind::timeout || kind == ErrorKind::unavailable ||
         kind == ErrorKind::protocol;
}

}  // namespace

struct Client::Impl {
  explicit Impl(ServerSettings s) : settings(std::move(s)), problem(check_settings(settings)) {
    if (!problem) base_url = detail::server_url(settings, detail::Scheme::imap);
  }

  ServerSettings settings;
  std::optional<std::string> problem;
  std::string base_url;
  std::shared_ptr<ImapWake> wake = std::make_shared<ImapWake>();

  char url_error[CURL_ERROR_SIZE] = {};
  ImapTrace url_trace;
  detail::Easy url_easy;  // after what its options point at during a transfer

  std::unique_ptr<ImapWatch> watch;
  // The last examine(): what idle() counts from after a reconnection.
  struct Examined {
    std::string mailbox;
    std::uint32_t uidvalidity = 0;
    std::uint32_t uidnext = 0;
  };
  std::optional<Examined> examined;

  std::optional<Error> refuse() const {
    if (problem) return Error{ErrorKind::invalid_argument, "settings: " + *problem};
    return std::nullopt;
  }

  // One transfer on curl's connection: `url`, with `custom` as the command when given.
  Result<std::string> perform(const std::string& url, const std::string* custom, std::size_t limit) {
    if (!url_easy) url_easy = detail::new_easy();
    CURL* easy = url_easy.get();
    curl_easy_reset(easy);  // keeps the connection
    detail::apply_settings(easy, settings, url_error);
    url_trace = {};
    curl_easy_setopt(easy, CURLOPT_VERBOSE, 1L);
    curl_easy_setopt(easy, CURLOPT_DEBUGFUNCTION, imap_trace_debug);
    curl_easy_setopt(easy, CURLOPT_DEBUGDATA, &url_trace);
    curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
    if (custom != nullptr) curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, custom->c_str());
    ImapBody body;
    body.limit = limit;
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, imap_write_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &body);
    detail::abort_when(easy, &wake->fired);
    CURLcode code = curl_easy_perform(easy);
    detail::detach_callbacks(easy);
    if (code != CURLE_OK) {
      Error error = imap_curl_error(code, url_trace, url_error, body.over);
      if (imap_breaks_connection(error.kind)) detail::drop_quietly(url_easy);
      return std::unexpected(std::move(error));
    }
    return std::move(body.bytes);
  }

  Result<std::string> mailbox_url(std::string_view mailbox, std::uint32_t uidvalidity) {
    auto path = mailbox_url_path(mailbox);
    if (!path) return std::unexpected(std::move(path.error()));
    std::string url = base_url + "/" + *path;
    if (uidvalidity != 0) url += ";UIDVALIDITY=" + std::to_string(uidvalidity);
    return url;
  }

  // Runs `run` on the watch connection, opening it first when there is none. A connection
  // that turns out dead (it sat unused; nothing but a goodbye came back for this call) is
  // opened again, once; a connection a call broke is dropped.
  template <class T, class Run>
  Result<T> on_watch(Run&& run) {
    for (int attempt = 0;; ++attempt) {
      bool reused = false;
      if (watch && watch->gone_while_unused()) watch.reset();
      if (!watch) {
        auto fresh = std::make_unique<ImapWatch>(settings, *wake);
        if (auto opened = fresh->open(base_url); !opened) return std::unexpected(std::move(opened.error()));
        watch = std::move(fresh);
      } else {
        reused = true;
      }
      bool previously_used = std::exchange(watch->used, true);
      watch->forget_received();
      Result<T> result = run(*watch);
      bool answered = watch->received();
      if (result || !imap_breaks_connection(result.error().kind)) return result;
      watch.reset();
      bool stale = reused && previously_used && !answered &&
                   (result.error().kind == ErrorKind::connection || result.error().kind == ErrorKind::unavailable);
      if (!stale || attempt > 0) return result;
    }
  }

  Result<MailboxStatus> examine_on(ImapWatch& w, std::string_view mailbox) {
    auto command = examine_command(mailbox);
    if (!command) return std::unexpected(std::move(command.error()));
    w.selected.clear();
    auto done = w.command(*command, "EXAMINE");
    if (!done) return std::unexpected(std::move(done.error()));
    auto status = parse_mailbox_status(done->untagged);
    if (!status) return std::unexpected(std::move(status.error()));
    w.selected = std::string(mailbox);
    w.exists = status->exists;
    w.arrived = false;  // the count starts here
    return status;
  }
};

Client::Client(ServerSettings settings) : m_impl(std::make_unique<Impl>(std::move(settings))) {}
Client::~Client() = default;
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;

Result<MailboxStatus> Client::examine(std::string_view mailbox) {
  if (auto refused = m_impl->refuse()) return std::unexpected(std::move(*refused));
  auto status = m_impl->on_watch<MailboxStatus>([&](ImapWatch& w) { return m_impl->examine_on(w, mailbox); });
  if (status) m_impl->examined = Impl::Examined{std::string(mailbox), status->uidvalidity, status->uidnext};
  return status;
}

Result<std::vector<std::uint32_t>> Client::search_uids_from(std::string_view mailbox, std::uint32_t uidvalidity,
                                                            std::uint32_t uid) {
  if (auto refused = m_impl->refuse()) return std::unexpected(std::move(*refused));
  if (uidvalidity == 0) return std::unexpected(Error{ErrorKind::invalid_argument, "UIDVALIDITY 0"});
  auto url = m_impl->mailbox_url(mailbox, uidvalidity);
  if (!url) return std::unexpected(std::move(url.error()));
  auto custom = curl_custom_request(uid_search_from_command(uid));
  if (!custom) return std::unexpected(std::move(custom.error()));
  auto body = m_impl->perform(*url, &*custom, k_imap_max_listing);
  if (!body) return std::unexpected(std::move(body.error()));
  auto uids = parse_search(*body);
  if (!uids) return std::unexpected(std::move(uids.error()));
  return uids_from(*uids, uid);
}

Result<std::string> Client::fetch_raw(std::string_view mailbox, std::uint32_t uidvalidity, std::uint32_t uid) {
  if (auto refused = m_impl->refuse()) return std::unexpected(std::move(*refused));
  if (uidvalidity == 0 || uid == 0) return std::unexpected(Error{ErrorKind::invalid_argument, "UIDVALIDITY or UID 0"});
  auto url = m_impl->mailbox_url(mailbox, uidvalidity);
  if (!url) return std::unexpected(std::move(url.error()));
  *url += ";UID=" + std::to_string(uid);
  return m_impl->perform(*url, nullptr, k_max_fetch_bytes);
}

Result<std::string> Client::fetch_section(std::string_view mailbox, std::uint32_t uidvalidity, std::uint32_t uid,
                                          std::string_view section, std::size_t max_bytes) {
  if (auto refused = m_impl->refuse()) return std::unexpected(std::move(*refused));
  if (uidvalidity == 0 || uid == 0) return std::unexpected(Error{ErrorKind::invalid_argument, "UIDVALIDITY or UID 0"});
  for (const char c : section) {
    if ((c < '0' || c > '9') && c != '.')
      return std::unexpected(Error{ErrorKind::invalid_argument, "a section of other than digits and dots"});
  }
  if (section.empty()) return std::unexpected(Error{ErrorKind::invalid_argument, "no section"});
  auto url = m_impl->mailbox_url(mailbox, uidvalidity);
  if (!url) return std::unexpected(std::move(url.error()));
  *url += ";UID=" + std::to_string(uid) + ";SECTION=" + std::string(section);
  return m_impl->perform(*url, nullptr, std::min(max_bytes, k_max_fetch_bytes));
}

Result<void> Client::add_flags(std::string_view mailbox, std::uint32_t uidvalidity, std::uint32_t uid,
                               std::span<const std::string> flags) {
  if (auto refused = m_impl->refuse()) return std::unexpected(std::move(*refused));
  if (uidvalidity == 0) return std::unexpected(Error{ErrorKind::invalid_argument, "UIDVALIDITY 0"});
  auto url = m_impl->mailbox_url(mailbox, uidvalidity);
  if (!url) return std::unexpected(std::move(url.error()));
  auto command = uid_store_add_flags_command(uid, flags);
  if (!command) return std::unexpected(std::move(command.error()));
  auto custom = curl_custom_request(*command);
  if (!custom) return std::unexpected(std::move(custom.error()));
  auto body = m_impl->perform(*url, &*custom, k_imap_max_listing);
  if (!body) return std::unexpected(std::move(body.error()));
  return {};
}

Result<std::vector<std::string>> Client::fetch_flags(std::string_view mailbox, std::uint32_t uidvalidity,
                                                     std::uint32_t uid) {
  if (auto refused = m_impl->refuse()) return std::unexpected(std::move(*refused));
  if (uidvalidity == 0 || uid == 0) return std::unexpected(Error{ErrorKind::invalid_argument, "UIDVALIDITY or UID 0"});
  auto url = m_impl->mailbox_url(mailbox, uidvalidity);
  if (!url) return std::unexpected(std::move(url.error()));
  auto custom = curl_custom_request("UID FETCH " + std::to_string(uid) + " (UID FLAGS)");
  if (!custom) return std::unexpected(std::move(custom.error()));
  auto body = m_impl->perform(*url, &*custom, k_imap_max_listing);
  if (!body) return std::unexpected(std::move(body.error()));
  auto fetched = parse_fetch(*body);
  if (!fetched) return std::unexpected(std::move(fetched.error()));
  for (FetchFlags& one : *fetched) {
    if (one.uid == uid && one.has_flags) return std::move(one.flags);
  }
  return std::unexpected(Error{ErrorKind::message_missing, "no message with UID " + std::to_string(uid)});
}

Result<std::optional<AppendUid>> Client::append(std::string_view mailbox, std::string_view raw,
                                                std::span<const std::string> flags) {
  if (auto refused = m_impl->refuse()) return std::unexpected(std::move(*refused));
  if (raw.find('\0') != std::string_view::npos) {
    return std::unexpected(Error{ErrorKind::invalid_argument, "a NUL byte in the message"});
  }
  std::string data = to_crlf(raw);
  auto command = append_command(mailbox, flags, data.size());
  if (!command) return std::unexpected(std::move(command.error()));
  auto done = m_impl->on_watch<Tagged>([&](ImapWatch& w) { return w.append(*command, data); });
  if (!done) return std::unexpected(std::move(done.error()));
  return parse_appenduid(*done);
}

Result<std::vector<std::uint32_t>> Client::search_message_id(std::string_view mailbox, std::string_view message_id) {
  if (auto refused = m_impl->refuse()) return std::unexpected(std::move(*refused));
  auto url = m_impl->mailbox_url(mailbox, 0);
  if (!url) return std::unexpected(std::move(url.error()));
  auto command = search_message_id_command(message_id);
  if (!command) return std::unexpected(std::move(command.error()));
  auto custom = curl_custom_request(*command);
  if (!custom) return std::unexpected(std::move(custom.error()));
  auto body = m_impl->perform(*url, &*custom, k_imap_max_listing);
  if (!body) return std::unexpected(std::move(body.error()));
  return parse_search(*body);
}

std::function<void()> Client::interrupter() {
  return [wake = m_impl->wake] { wake->fire(); };
}

Result<bool> Client::idle(std::string_view mailbox, std::chrono::milliseconds timeout) {
  if (auto refused = m_impl->refuse()) return std::unexpected(std::move(*refused));
  if (m_impl->wake->fired.load()) return false;
  auto examine = examine_command(mailbox);
  if (!examine) return std::unexpected(std::move(examine.error()));
  auto until = ImapClock::now() + std::min<std::chrono::milliseconds>(timeout, k_max_idle);
  Impl& impl = *m_impl;
  return impl.on_watch<bool>([&](ImapWatch& w) -> Result<bool> {
    if (w.selected != mailbox) {
      // A new connection, or another mailbox: what arrived since the caller's examine()
      // shows in UIDNEXT.
      auto status = impl.examine_on(w, mailbox);
      if (!status) return std::unexpected(std::move(status.error()));
      if (impl.examined && impl.examined->mailbox == mailbox) {
        bool moved = status->uidvalidity != impl.examined->uidvalidity || status->uidnext == 0 ||
                     status->uidnext > impl.examined->uidnext;
        impl.examined = Impl::Examined{std::string(mailbox), status->uidvalidity, status->uidnext};
        if (moved) return true;
      }
    } else {
      // The server's news since the last command (RFC 3501: NOOP is the poll).
      if (auto done = w.command("NOOP", "NOOP"); !done) return std::unexpected(std::move(done.error()));
    }
    // What arrived is reported once: from here on, the count the server last gave is the base.
    if (std::exchange(w.arrived, false)) return true;
    auto woke = w.idle(until);
    w.arrived = false;
    return woke;
  });
}

void Client::disconnect() {
  m_impl->watch.reset();
  m_impl->url_easy.reset();
}

}  // namespace dispatchd::imap
