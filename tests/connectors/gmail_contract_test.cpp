// The Gmail channel against the channel contract (tests/connectors/channel_contract.h): the
// channel on a migrated database, polling and sending over the real transport to the fake
// Gmail API and token endpoint (tests/fakes/fake_gmail.py, a process of the harness's own)
// through a FaultTransport. The channel's timers are cut to at most 50 ms: a poll every
// 50 ms, the unknown send's second search 50 ms after the first.

#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <fcntl.h>
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
#include <expected>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/json_access.h"
#include "common/json_out.h"
#include "connectors/gmail/channel.h"
#include "net/curl_transport.h"
#include "tests/connectors/channel_contract.h"
#include "tests/connectors/fault_transport.h"
#include "tests/store/store_fixture.h"
#include "tests/support/raw_sql.h"
#include "tests/test_util.h"

using namespace dispatchd;
using test::contract::Answer;

namespace {

using namespace std::chrono_literals;

constexpr auto k_gmail_contract_tick = 50ms;
// fake_gmail.py's defaults: its mailbox's address and the OAuth client it accepts.
constexpr const char* k_gmail_contract_address = "support@example.com";
constexpr const char* k_gmail_contract_client_id = "fake-client-id.apps.googleusercontent.com";
constexpr const char* k_gmail_contract_client_secret = "fake-client-secret";
constexpr const char* k_gmail_contract_refresh_token = "1//fake-refresh-token";

// `name` as execv needs it: the first executable of that name on PATH.
std::string contract_executable(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string_view rest = path ? path : "/usr/bin:/bin";
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const std::string candidate = std::string(rest.substr(0, colon)) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
  }
  throw std::runtime_error(name + " is not on PATH");
}

// fake_gmail.py on a port of its own, stopped (SIGTERM, then reaped) with this object, and
// by the kernel when this process dies first (a crashed test leaves no server behind).
class FakeGmailProcess {
 public:
  FakeGmailProcess() {
    std::string python = contract_executable("python3");
    std::string script = test::source_path("tests/fakes/fake_gmail.py");
    std::string quiet = "--quiet";
    std::vector<char*> argv{python.data(), script.data(), quiet.data(), nullptr};
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    const pid_t parent = ::getpid();
    m_pid = ::fork();
    if (m_pid == 0) {
      // The child of a threaded process: system calls only until execv.
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != parent) ::_exit(127);
      ::dup2(out[1], STDOUT_FILENO);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(out[1]);
    if (m_pid < 0) {
      ::close(out[0]);
      throw std::runtime_error("cannot fork for tests/fakes/fake_gmail.py");
    }
    m_stdout = out[0];
    // Its first line: {"event":"listening","port":N,"api_base_url":"http://127.0.0.1:N",...}
    std::string line;
    char c = 0;
    while (::read(m_stdout, &c, 1) == 1 && c != '\n') line += c;
    const auto listening = test::parse_json(line);
    const auto base = json::string_member(listening, "api_base_url");
    if (!base) throw std::runtime_error("fake_gmail.py did not say where it listens: " + line);
    m_base_url = *base;
  }
  ~FakeGmailProcess() {
    ::kill(m_pid, SIGTERM);
    int status = 0;
    ::waitpid(m_pid, &status, 0);
    ::close(m_stdout);
  }
  FakeGmailProcess(const FakeGmailProcess&) = delete;
  FakeGmailProcess& operator=(const FakeGmailProcess&) = delete;

  const std::string& base_url() const { return m_base_url; }

 private:
  pid_t m_pid = 0;
  int m_stdout = -1;
  std::string m_base_url;
};

// Mail from customer<n>@example.test, Message-ID <order-<n>@example.test>.
std::string contract_mail(int n) {
  const std::string id = std::to_string(n);
  return "From: Customer " + id + " <customer" + id +
         "@example.test>\r\n"
         "To: support@example.com\r\n"
         "Subject: Order " +
         id + "\r\nMessage-ID: <order-" + id +
         "@example.test>\r\n"
         "Date: Mon, 30 Nov 2026 12:00:00 +0000\r\n"
         "MIME-Version: 1.0\r\n"
         "Content-Type: text/plain; charset=utf-8\r\n"
         "\r\n"
         "Where is my order " +
         id + "?\r\n";
}

class GmailContractHarness final : public test::contract::Harness {
 public:
  GmailContractHarness() {
    gmail::ChannelSettings settings;
    settings.api_base_url = m_fake.base_url();
    settings.credentials = credentials();
    settings.poll_interval = std::chrono::seconds(1);  // cut to the tick by after()
    settings.unknown_recheck = k_gmail_contract_tick;
    settings.reread_credentials = [this]() -> std::expected<gmail::OAuthCredentials, std::string> {
      return credentials();
    };
    m_channel.emplace(test::contract::polling_deps(m_io, m_db, m_transport, m_pokes, k_gmail_contract_tick),
                      std::move(settings));
    // The first poll takes the mailbox's position: mail from then on is the channel's.
    run_until([this] { return m_channel->poll_counters()->polls >= 1; });
  }

  connectors::Channel* channel() override { return m_channel ? &*m_channel : nullptr; }
  void destroy_channel() override { m_channel.reset(); }
  boost::asio::io_context& io() override { return m_io; }

  // The mail arrives in the fake mailbox; a poll stores it.
  void deliver(int n) override {
    const auto answer = test::parse_json(
        control("POST", "/_fake/deliver", JsonOut().begin_object().field("raw", contract_mail(n)).end_object().str()));
    const auto id = json::string_member(answer, "id");
    const auto thread = json::string_member(answer, "threadId");
    REQUIRE(id);
    REQUIRE(thread);
    m_delivered[n] = {*id, *thread};
    run_until([&] {
      return test::query_int(m_db, "SELECT count(*) FROM inbox WHERE provider_message_id = '" + *id + "'").value() == 1;
    });
  }
  // Gmail no longer has the history the cursor points into (404): the next poll lists the
  // mailbox instead (a full sync) and sees the stored message once more.
  void redeliver(int n) override {
    REQUIRE(m_delivered.contains(n));
    control("POST", "/_fake/script", R"({"path":"/users/me/history","status":404})");
    const auto& counters = *m_channel->poll_counters();
    const auto full_syncs = counters.full_syncs;
    run_until([&] { return counters.full_syncs > full_syncs; });
    const auto polls = counters.polls;
    run_until([&] { return counters.polls > polls; });  // the full sync's poll, completed
  }
  std::int64_t inbox_rows() override { return test::query_int(m_db, "SELECT count(*) FROM inbox").value(); }
  int inbound_pokes() const override { return m_pokes; }

  store::OutboxItem reply_to(int n, const std::string& idempotency_key) override {
    REQUIRE(m_delivered.contains(n));
    const auto& [gmail_id, thread] = m_delivered.at(n);
    const auto row = test::query_int(m_db, "SELECT id FROM inbox WHERE provider_message_id = '" + gmail_id + "'");
    REQUIRE(row);
    return {.id = n,
            .message_id = *row,
            .channel = "gmail",
            .conversation_id = thread,
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
      case Answer::refuse:
        control("POST", "/_fake/script", R"({"path":"/messages/send","status":400,"reason":"invalidArgument"})");
        return;
      case Answer::rate_limit:
        control("POST", "/_fake/script", R"({"path":"/messages/send","status":429,"retry_after":7})");
        return;
      case Answer::refuse_credential:
        // The refresh token is revoked and the access tokens with it: the send is refused
        // (401), and so is the refresh the channel then asks for (invalid_grant).
        control("POST", "/_fake/revoke", "{}");
        return;
      case Answer::refuse_connection: return m_transport.fault_next_send(test::NetworkFault::refuse_connection);
      case Answer::drop_after_request: return m_transport.fault_next_send(test::NetworkFault::drop_answer);
      case Answer::hold: return m_transport.fault_next_send(test::NetworkFault::hold_answer);
    }
  }
  std::size_t sends_received() override { return m_transport.sends_forwarded(); }
  std::size_t messages_delivered() override {
    const auto state = test::parse_json(control("GET", "/_fake/state"));
    const auto* sent = json::array_member(state, "sent");
    REQUIRE(sent != nullptr);
    return sent->Size();
  }
  std::size_t sends_held() override { return m_transport.held(); }
  void release_held() override { m_transport.release_held(); }
  // A new refresh token, at the fake and in what reload() reads.
  void restore_credential() override {
    m_refresh_token = "1//contract-fresh-refresh-token";
    control("POST", "/_fake/refresh_token",
            JsonOut().begin_object().field("value", m_refresh_token).end_object().str());
    m_channel->reload();
  }

 private:
  gmail::OAuthCredentials credentials() const {
    return {m_fake.base_url() + "/token", k_gmail_contract_client_id, k_gmail_contract_client_secret, m_refresh_token};
  }

  // A call of the fake's control endpoints (past the FaultTransport); its 200 body.
  std::string control(const std::string& method, const std::string& path, std::string body = "") {
    net::HttpRequest request;
    request.method = method;
    request.url = m_fake.base_url() + path;
    request.body = std::move(body);
    // Last: destroyed first, before the transports that may still hold its calls.
    std::optional<net::HttpResult> result;
    m_curl.send(std::move(request), [&result](net::HttpResult r) { result = std::move(r); });
    run_until([&result] { return result.has_value(); });
    REQUIRE(*result);
    INFO((*result)->body);
    REQUIRE((*result)->status == 200);
    return (*result)->body;
  }

  FakeGmailProcess m_fake;
  std::string m_refresh_token = k_gmail_contract_refresh_token;
  test::TempDir m_dir;
  store::Database m_db = test::migrated_db(m_dir);
  boost::asio::io_context m_io;
  net::CurlTransport m_curl{m_io};
  test::FaultTransport m_transport{m_io, m_curl, [](const net::HttpRequest& request) {
                                     return request.method == "POST" && request.url.ends_with("/messages/send");
                                   }};
  int m_pokes = 0;
  std::map<int, std::pair<std::string, std::string>> m_delivered;  // n -> Gmail id, thread id
  std::optional<gmail::GmailChannel> m_channel;
};

}  // namespace

TEST_CASE("gmail channel: the channel contract", "[gmail][contract]") {
  test::contract::check_channel_contract([] { return std::make_unique<GmailContractHarness>(); });
}
