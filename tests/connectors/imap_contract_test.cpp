// The IMAP channel against the channel contract (tests/connectors/channel_contract.h): the
// channel on a migrated database reads the real Dovecot of tests/mail/servers.sh (messages
// APPENDed to the support INBOX, the channel waiting in IDLE) and sends through
// tests/fakes/fake_smtp.py, a process of the harness's own scripted on its stdin, which files
// what it takes in the Dovecot mailbox's Sent folder as Gmail and Microsoft 365 do
// (sent_copy "server": a lookup there proves a send). Run by tests/mail/imap_clients_test.py,
// which starts the pair and passes DISPATCHD_MAIL_DIR.
//
// Each harness answers from a domain of its own (soporte@c<n>.example.test), so that our
// Message-IDs, made of the idempotency key and that domain, are new in Sent for every section.

#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "connectors/imap/channel.h"
#include "connectors/imap/client.h"
#include "tests/connectors/channel_contract.h"
#include "tests/fakes/fake_transport.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"
#include "tests/test_util.h"

using namespace dispatchd;
using test::contract::Answer;

namespace {

using namespace std::chrono_literals;

constexpr auto k_imap_contract_tick = 50ms;

std::map<std::string, std::string> imap_contract_pair() {
  const char* dir = std::getenv("DISPATCHD_MAIL_DIR");
  if (dir == nullptr || *dir == '\0') throw std::runtime_error("DISPATCHD_MAIL_DIR is not set");
  std::map<std::string, std::string> out;
  std::ifstream in(std::string(dir) + "/env");
  if (!in) throw std::runtime_error("no env file in DISPATCHD_MAIL_DIR");
  std::string line;
  while (std::getline(in, line)) {
    const auto eq = line.find('=');
    if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return out;
}

// fake_smtp.py on a port of its own, scripted through its stdin; stopped with this object,
// and by the kernel when this process dies first.
class FakeSmtpProcess {
 public:
  explicit FakeSmtpProcess(const std::map<std::string, std::string>& pair) {
    const std::string dir = std::getenv("DISPATCHD_MAIL_DIR");
    std::vector<std::string> args = {"python3",
                                     test::source_path("tests/fakes/fake_smtp.py"),
                                     dir + "/tls/server.pem",
                                     dir + "/tls/server.key",
                                     "--file-sent",
                                     pair.at("IMAPS_PORT"),
                                     pair.at("SUPPORT_USER"),
                                     pair.at("SUPPORT_PASSWORD"),
                                     pair.at("CA_FILE")};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    const pid_t parent = ::getpid();
    m_pid = ::fork();
    if (m_pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != parent) ::_exit(127);
      ::dup2(in[0], STDIN_FILENO);
      ::dup2(out[1], STDOUT_FILENO);
      ::execvp("python3", argv.data());
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    if (m_pid < 0) throw std::runtime_error("cannot fork for tests/fakes/fake_smtp.py");
    m_stdin = in[1];
    m_stdout = out[0];
    const std::string first = next_line(10s);
    const auto at = first.find("\"port\": ");
    if (at == std::string::npos) throw std::runtime_error("fake_smtp.py did not say where it listens: " + first);
    m_port = static_cast<std::uint16_t>(std::stoi(first.substr(at + 8)));
  }
  ~FakeSmtpProcess() {
    ::close(m_stdin);
    ::kill(m_pid, SIGTERM);
    int status = 0;
    ::waitpid(m_pid, &status, 0);
    ::close(m_stdout);
  }
  FakeSmtpProcess(const FakeSmtpProcess&) = delete;
  FakeSmtpProcess& operator=(const FakeSmtpProcess&) = delete;

  std::uint16_t port() const { return m_port; }

  void command(const std::string& line) {
    const std::string text = line + "\n";
    if (::write(m_stdin, text.data(), text.size()) != static_cast<ssize_t>(text.size()))
      throw std::runtime_error("cannot script fake_smtp.py");
  }

  // How often `name` was reported so far (the lines already written are read first).
  std::size_t count(const std::string& name) {
    for (std::string line = next_line(0ms, true); !line.empty(); line = next_line(0ms, true))
      ++m_events[event_of(line)];
    return m_events[name];
  }

 private:
  static std::string event_of(const std::string& line) {
    const auto at = line.find("\"event\": \"");
    if (at == std::string::npos) return "";
    const auto start = at + 10;
    return line.substr(start, line.find('"', start) - start);
  }

  // One line of its stdout, waiting at most `wait`; "" when none came (with `quiet`; else
  // a throw). The fake never writes an empty line.
  std::string next_line(std::chrono::milliseconds wait, bool quiet = false) {
    const auto until = std::chrono::steady_clock::now() + wait;
    while (true) {
      if (const auto end = m_buffer.find('\n'); end != std::string::npos) {
        std::string line = m_buffer.substr(0, end);
        m_buffer.erase(0, end + 1);
        return line;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      pollfd readable{m_stdout, POLLIN, 0};
      if (::poll(&readable, 1, static_cast<int>(std::max<std::int64_t>(left.count(), 0))) <= 0) {
        if (quiet) return "";
        throw std::runtime_error("fake_smtp.py said nothing");
      }
      char chunk[512];
      const auto got = ::read(m_stdout, chunk, sizeof chunk);
      if (got <= 0) {
        if (quiet) return "";
        throw std::runtime_error("fake_smtp.py ended");
      }
      m_buffer.append(chunk, static_cast<std::size_t>(got));
    }
  }

  pid_t m_pid = 0;
  int m_stdin = -1;
  int m_stdout = -1;
  std::uint16_t m_port = 0;
  std::string m_buffer;
  std::map<std::string, std::size_t> m_events;
};

// Mail from customer<n>@example.test, Message-ID <order-<n>.<run>@example.test>.
std::string imap_contract_mail(int n, const std::string& run) {
  const std::string id = std::to_string(n);
  return "From: Customer " + id + " <customer" + id + "@example.test>\r\nTo: soporte@example.test\r\nSubject: Order " +
         id + "\r\nMessage-ID: <order-" + id + "." + run +
         "@example.test>\r\nDate: Mon, 07 Dec 2026 12:00:00 +0000\r\nMIME-Version: 1.0\r\n"
         "Content-Type: text/plain; charset=utf-8\r\n\r\nWhere is my order " +
         id + "?\r\n";
}

int imap_contract_harnesses = 0;

class ImapContractHarness final : public test::contract::Harness {
 public:
  ImapContractHarness()
      : m_pair(imap_contract_pair()),
        m_fake(m_pair),
        m_run(std::to_string(::getpid()) + "-" + std::to_string(++imap_contract_harnesses)) {
    imap::MailboxSettings box;
    box.name = "contract";
    box.address = "soporte@c" + m_run + ".example.test";
    box.imap.host = "127.0.0.1";
    box.imap.port = static_cast<std::uint16_t>(std::stoi(m_pair.at("IMAPS_PORT")));
    box.imap.tls = imap::TlsMode::implicit;
    box.imap.user = m_pair.at("SUPPORT_USER");
    box.imap.password = m_pair.at("SUPPORT_PASSWORD");
    box.imap.ca_file = m_pair.at("CA_FILE");
    box.smtp = box.imap;
    box.smtp.port = m_fake.port();
    box.sent_copy = imap::SentCopy::server;
    box.poll_interval = 1s;
    box.unknown_recheck = k_imap_contract_tick;
    m_settings.mailboxes = {box};
    imap::ChannelSettings settings = m_settings;
    settings.reread = [this]() -> std::expected<std::vector<imap::MailboxSettings>, std::string> {
      return m_settings.mailboxes;
    };
    m_channel.emplace(test::contract::polling_deps(m_io, m_db, m_transport, m_pokes, k_imap_contract_tick),
                      std::move(settings));
    // The first poll takes the mailbox's position: mail from then on is the channel's.
    run_until([this] { return m_channel->poll_counters()->polls >= 1; });
  }

  connectors::Channel* channel() override { return m_channel ? &*m_channel : nullptr; }
  void destroy_channel() override { m_channel.reset(); }
  boost::asio::io_context& io() override { return m_io; }

  // APPENDed to the INBOX; the channel, waiting in IDLE, stores it.
  void deliver(int n) override {
    append(n);
    const std::string id = "contract:order-" + std::to_string(n) + "." + m_run + "@example.test";
    run_until([&] {
      return test::query_int(m_db, "SELECT count(*) FROM inbox WHERE provider_message_id = '" + id + "'").value() == 1;
    });
  }
  // The same message APPENDed again (a new UID, the same Message-ID): read, stored once.
  void redeliver(int n) override {
    const auto duplicates = m_channel->poll_counters()->duplicates;
    append(n);
    run_until([&] { return m_channel->poll_counters()->duplicates > duplicates; });
  }
  std::int64_t inbox_rows() override { return test::query_int(m_db, "SELECT count(*) FROM inbox").value(); }
  int inbound_pokes() const override { return m_pokes; }

  store::OutboxItem reply_to(int n, const std::string& idempotency_key) override {
    const std::string id = "contract:order-" + std::to_string(n) + "." + m_run + "@example.test";
    const auto row = test::query_int(m_db, "SELECT id FROM inbox WHERE provider_message_id = '" + id + "'");
    REQUIRE(row);
    return {.id = n,
            .message_id = *row,
            .channel = "imap",
            .conversation_id = id,
            .recipient = "customer" + std::to_string(n) + "@example.test",
            .body = "Your order is on its way.",
            .idempotency_key = idempotency_key};
  }
  // A reply to a message the inbox does not have: no original to build it from.
  store::OutboxItem unsendable(const std::string& idempotency_key) override {
    auto item = reply_to(1, idempotency_key);
    item.message_id = 0;
    return item;
  }

  void script_next_send(Answer answer) override {
    switch (answer) {
      case Answer::accept: return;
      case Answer::refuse: return m_fake.command("next refuse-rcpt");
      case Answer::rate_limit: return m_fake.command("next later-rcpt");
      case Answer::refuse_credential:
        // The password changed at the server: the kept connection ends, the next AUTH is refused.
        m_fake.command("auth refuse");
        return m_fake.command("kick");
      case Answer::refuse_connection: return m_fake.command("next drop-at-mail");
      case Answer::drop_after_request: return m_fake.command("next drop-after-data");
      case Answer::hold: return m_fake.command("next hold");
    }
  }
  std::size_t sends_received() override { return m_fake.count("received"); }
  std::size_t messages_delivered() override { return m_fake.count("delivered"); }
  std::size_t sends_held() override { return m_fake.count("held") - m_released; }
  void release_held() override {
    m_released = m_fake.count("held");
    m_fake.command("release");
  }
  // The server takes the password again; reload() makes the connections anew.
  void restore_credential() override {
    m_fake.command("auth ok");
    m_channel->reload();
  }

 private:
  void append(int n) {
    imap::Client client(m_settings.mailboxes.front().imap);
    auto appended = client.append("INBOX", imap_contract_mail(n, m_run), {});
    INFO((appended ? std::string() : appended.error().message));
    REQUIRE(appended.has_value());
  }

  std::map<std::string, std::string> m_pair;
  FakeSmtpProcess m_fake;
  std::string m_run;
  imap::ChannelSettings m_settings;
  std::size_t m_released = 0;
  test::TempDir m_dir;
  store::Database m_db = test::migrated_db(m_dir);
  boost::asio::io_context m_io;
  fakes::FakeTransport m_transport{m_io};  // the channel makes no HTTP call
  int m_pokes = 0;
  std::optional<imap::ImapChannel> m_channel;
};

}  // namespace

TEST_CASE("imap channel: the channel contract", "[imap][contract]") {
  test::contract::check_channel_contract([] { return std::make_unique<ImapContractHarness>(); });
}
