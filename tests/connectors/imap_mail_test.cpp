// The IMAP and SMTP clients (connectors/imap/) against real servers: the Dovecot and Postfix
// pair of tests/mail/servers.sh, and tests/fakes/fake_smtp.py and fake_imap_goodbye.py for the
// failures Postfix and Dovecot cannot be made to show. Run by tests/mail/imap_clients_test.py, which starts them and
// passes:
//   DISPATCHD_MAIL_DIR        the pair's folder (its `env` file)
//   DISPATCHD_WRONG_CA_FILE   a CA that did not sign the servers' certificate
//   DISPATCHD_FAKE_SMTP_PORT  fake_smtp.py's port (implicit TLS, the pair's certificate)
// The driver runs the cases tagged [auth] after the others, then restarts Dovecot and runs
// [outage], which stops it.

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <iterator>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "connectors/imap/client.h"
#include "connectors/imap/smtp.h"

using namespace dispatchd::imap;
using namespace std::chrono_literals;
using MailClock = std::chrono::steady_clock;

namespace {

std::string mail_env_var(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') throw std::runtime_error(std::string(name) + " is not set");
  return value;
}

const std::map<std::string, std::string>& mail_pair() {
  static const std::map<std::string, std::string> env = [] {
    std::map<std::string, std::string> out;
    std::ifstream in(mail_env_var("DISPATCHD_MAIL_DIR") + "/env");
    if (!in) throw std::runtime_error("no env file in DISPATCHD_MAIL_DIR");
    std::string line;
    while (std::getline(in, line)) {
      auto eq = line.find('=');
      if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return out;
  }();
  return env;
}

std::string mail_get(const std::string& key) {
  auto found = mail_pair().find(key);
  if (found == mail_pair().end()) throw std::runtime_error("no " + key + " in the pair's env");
  return found->second;
}

std::uint16_t mail_port(const std::string& key) { return static_cast<std::uint16_t>(std::stoi(mail_get(key))); }

ServerSettings imaps_settings() {
  ServerSettings s;
  s.host = "127.0.0.1";
  s.port = mail_port("IMAPS_PORT");
  s.tls = TlsMode::implicit;
  s.user = mail_get("SUPPORT_USER");
  s.password = mail_get("SUPPORT_PASSWORD");
  s.ca_file = mail_get("CA_FILE");
  s.connect_timeout = 5s;
  s.io_timeout = 5s;
  s.operation_timeout = 20s;
  return s;
}

ServerSettings imap_starttls_settings() {
  ServerSettings s = imaps_settings();
  s.port = mail_port("IMAP_PORT");
  s.tls = TlsMode::starttls;
  return s;
}

ServerSettings submission_settings() {
  ServerSettings s = imaps_settings();
  s.port = mail_port("SUBMISSION_PORT");
  s.tls = TlsMode::starttls;
  s.user = mail_get("CUSTOMER_USER");
  s.password = mail_get("CUSTOMER_PASSWORD");
  return s;
}

std::string mail_unique() {
  static std::mt19937_64 random{std::random_device{}()};
  return std::to_string(random());
}

// A message from ana to soporte; its body has a line starting with '.', which SMTP's
// dot-stuffing must carry through.
std::string mail_message(const std::string& message_id, const std::string& subject) {
  return "From: Ana <ana@example.test>\r\n"
         "To: Soporte <soporte@example.test>\r\n"
         "Subject: " +
         subject +
         "\r\n"
         "Message-ID: <" +
         message_id +
         ">\r\n"
         "Date: Mon, 07 Dec 2026 10:00:00 +0000\r\n"
         "MIME-Version: 1.0\r\n"
         "Content-Type: text/plain; charset=utf-8\r\n"
         "\r\n"
         "Hola,\n"
         ".una linea con punto\n"
         "..y otra\n"
         "Gracias\n";
}

void mail_submit(const std::string& message_id, const std::string& subject) {
  SmtpClient smtp(submission_settings(), "client.example.test");
  std::vector<std::string> to = {mail_get("SUPPORT_USER")};
  auto sent = smtp.send(mail_get("CUSTOMER_USER"), to, mail_message(message_id, subject));
  INFO((sent ? std::string() : sent.error().message));
  REQUIRE(sent.has_value());
  CHECK(sent->reply_code == 250);
  CHECK(sent->reply.find("queued as") != std::string::npos);
}

// The UID of the message with that Message-ID in INBOX, waiting for its delivery.
std::uint32_t mail_wait_for(Client& client, const std::string& message_id) {
  auto deadline = MailClock::now() + 15s;
  while (true) {
    auto found = client.search_message_id("INBOX", message_id);
    INFO((found ? std::string() : found.error().message));
    REQUIRE(found.has_value());
    if (!found->empty()) {
      REQUIRE(found->size() == 1);
      return found->front();
    }
    REQUIRE(MailClock::now() < deadline);
    std::this_thread::sleep_for(100ms);
  }
}

// INBOX's status and the UID of the message with that Message-ID, once delivered.
std::pair<MailboxStatus, std::uint32_t> mail_delivered(Client& client, const std::string& message_id) {
  auto status = client.examine("INBOX");
  INFO((status ? std::string() : status.error().message));
  REQUIRE(status.has_value());
  return {*status, mail_wait_for(client, message_id)};
}

void mail_read_back(Client& client, const std::string& message_id, const std::string& subject) {
  auto status = client.examine("INBOX");
  INFO((status ? std::string() : status.error().message));
  REQUIRE(status.has_value());
  CHECK(status->uidvalidity != 0);
  std::uint32_t uid = mail_wait_for(client, message_id);
  auto uids = client.search_uids_from("INBOX", status->uidvalidity, 1);
  REQUIRE(uids.has_value());
  CHECK(std::find(uids->begin(), uids->end(), uid) != uids->end());
  auto later = client.search_uids_from("INBOX", status->uidvalidity, uid + 1000);
  REQUIRE(later.has_value());
  CHECK(later->empty());  // "n:*" would have matched the highest UID
  auto raw = client.fetch_raw("INBOX", status->uidvalidity, uid);
  INFO((raw ? std::string() : raw.error().message));
  REQUIRE(raw.has_value());
  CHECK(raw->find("Subject: " + subject + "\r\n") != std::string::npos);
  CHECK(raw->find("\r\n.una linea con punto\r\n..y otra\r\n") != std::string::npos);
}

std::string mail_kind(const Result<MailboxStatus>& r) {
  return r ? "(a value)" : std::string(to_string(r.error().kind));
}

}  // namespace

TEST_CASE("imap mail: a submitted mail is read back over IMAPS and STARTTLS", "[mail]") {
  std::string id = "t" + mail_unique() + "@example.test";
  std::string subject = "pedido " + mail_unique();
  mail_submit(id, subject);
  SECTION("IMAPS") {
    Client client(imaps_settings());
    mail_read_back(client, id, subject);
  }
  SECTION("STARTTLS, LOGIN forced") {
    ServerSettings settings = imap_starttls_settings();
    settings.sasl_mechanism = "LOGIN";
    Client client(settings);
    mail_read_back(client, id, subject);
  }
}

TEST_CASE("imap mail: SMTP submission with AUTH LOGIN and implicit recipients", "[mail]") {
  ServerSettings settings = submission_settings();
  settings.sasl_mechanism = "LOGIN";
  SmtpClient smtp(settings);
  std::string id = "l" + mail_unique() + "@example.test";
  std::vector<std::string> to = {mail_get("SUPPORT_USER")};
  auto sent = smtp.send(mail_get("CUSTOMER_USER"), to, mail_message(id, "login"));
  INFO((sent ? std::string() : sent.error().message));
  REQUIRE(sent.has_value());
  // The same client again: the kept connection is reused.
  auto again = smtp.send(mail_get("CUSTOMER_USER"), to, mail_message("again-" + id, "login again"));
  REQUIRE(again.has_value());
  Client client(imaps_settings());
  mail_wait_for(client, id);
  mail_wait_for(client, "again-" + id);
}

TEST_CASE("imap mail: a certificate from another CA is refused", "[mail]") {
  std::string wrong = mail_env_var("DISPATCHD_WRONG_CA_FILE");
  for (ServerSettings settings : {imaps_settings(), imap_starttls_settings()}) {
    settings.ca_file = wrong;
    Client client(settings);
    auto status = client.examine("INBOX");
    REQUIRE_FALSE(status.has_value());
    CHECK(status.error().kind == ErrorKind::tls_refused);
    auto found = client.search_message_id("INBOX", "x@example.test");
    REQUIRE_FALSE(found.has_value());
    CHECK(found.error().kind == ErrorKind::tls_refused);
  }
  ServerSettings settings = submission_settings();
  settings.ca_file = wrong;
  SmtpClient smtp(settings);
  std::vector<std::string> to = {mail_get("SUPPORT_USER")};
  auto sent = smtp.send(mail_get("CUSTOMER_USER"), to, mail_message("ca@example.test", "ca"));
  REQUIRE_FALSE(sent.has_value());
  CHECK(sent.error().kind == SmtpErrorKind::tls_refused);
  CHECK(certainly_not_sent(sent.error()));
}

TEST_CASE("imap mail: UIDVALIDITY, missing messages and missing mailboxes", "[mail]") {
  std::string id = "u" + mail_unique() + "@example.test";
  mail_submit(id, "uidvalidity");
  Client client(imaps_settings());
  auto [status, uid] = mail_delivered(client, id);
  REQUIRE(client.fetch_raw("INBOX", status.uidvalidity, uid).has_value());
  // The same connection, INBOX still selected: curl selects it again and compares.
  auto changed = client.fetch_raw("INBOX", status.uidvalidity + 1, uid);
  REQUIRE_FALSE(changed.has_value());
  CHECK(changed.error().kind == ErrorKind::uidvalidity_changed);
  auto search_changed = client.search_uids_from("INBOX", status.uidvalidity + 1, 1);
  REQUIRE_FALSE(search_changed.has_value());
  CHECK(search_changed.error().kind == ErrorKind::uidvalidity_changed);
  std::vector<std::string> flagged = {"\\Flagged"};
  auto store_changed = client.add_flags("INBOX", status.uidvalidity + 1, uid, flagged);
  REQUIRE_FALSE(store_changed.has_value());
  CHECK(store_changed.error().kind == ErrorKind::uidvalidity_changed);
  // A fresh client: the first SELECT already compares.
  Client fresh(imaps_settings());
  CHECK(fresh.fetch_raw("INBOX", status.uidvalidity + 1, uid).error().kind == ErrorKind::uidvalidity_changed);

  auto missing = client.fetch_raw("INBOX", status.uidvalidity, status.uidnext + 500);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().kind == ErrorKind::message_missing);
  CHECK(client.fetch_flags("INBOX", status.uidvalidity, status.uidnext + 500).error().kind ==
        ErrorKind::message_missing);

  CHECK(mail_kind(client.examine("Nope")) == "mailbox_missing");
  auto nope = client.fetch_raw("Nope", status.uidvalidity, 1);
  REQUIRE_FALSE(nope.has_value());
  CHECK(nope.error().kind == ErrorKind::mailbox_missing);
  CHECK(client.search_message_id("Nope", id).error().kind == ErrorKind::mailbox_missing);
  // And the client still works after the refusals.
  CHECK(client.fetch_raw("INBOX", status.uidvalidity, uid).has_value());
  CHECK(client.examine("INBOX").has_value());
}

TEST_CASE("imap mail: flags are added", "[mail]") {
  std::string id = "f" + mail_unique() + "@example.test";
  mail_submit(id, "flags");
  Client client(imaps_settings());
  auto [status, uid] = mail_delivered(client, id);
  std::vector<std::string> flags = {"\\Seen", "$Dispatchd"};
  auto added = client.add_flags("INBOX", status.uidvalidity, uid, flags);
  INFO((added ? std::string() : added.error().message));
  REQUIRE(added.has_value());
  auto now = client.fetch_flags("INBOX", status.uidvalidity, uid);
  REQUIRE(now.has_value());
  CHECK(std::find(now->begin(), now->end(), "\\Seen") != now->end());
  CHECK(std::find(now->begin(), now->end(), "$Dispatchd") != now->end());
  std::vector<std::string> recent = {"\\Recent"};
  CHECK(client.add_flags("INBOX", status.uidvalidity, uid, recent).error().kind == ErrorKind::invalid_argument);
}

TEST_CASE("imap mail: APPEND to Sent, then found by its Message-ID", "[mail]") {
  Client client(imaps_settings());
  std::string id = "s" + mail_unique() + "@example.test";
  std::string raw = mail_message(id, "sent copy");
  std::vector<std::string> seen = {"\\Seen"};
  auto nowhere = client.append("Nope", raw, seen);
  REQUIRE_FALSE(nowhere.has_value());
  CHECK(nowhere.error().kind == ErrorKind::mailbox_missing);  // [TRYCREATE]

  auto appended = client.append("Sent", raw, seen);
  INFO((appended ? std::string() : appended.error().message));
  REQUIRE(appended.has_value());
  REQUIRE(appended->has_value());  // Dovecot has UIDPLUS
  auto found = client.search_message_id("Sent", id);
  REQUIRE(found.has_value());
  CHECK(*found == std::vector<std::uint32_t>{(*appended)->uid});
  CHECK(client.search_message_id("Sent", "<not-" + id + ">")->empty());
  auto back = client.fetch_raw("Sent", (*appended)->uidvalidity, (*appended)->uid);
  REQUIRE(back.has_value());
  CHECK(*back == to_crlf(raw));
  auto flags = client.fetch_flags("Sent", (*appended)->uidvalidity, (*appended)->uid);
  REQUIRE(flags.has_value());
  CHECK(std::find(flags->begin(), flags->end(), "\\Seen") != flags->end());
  CHECK(std::find(flags->begin(), flags->end(), "\\Flagged") == flags->end());
  CHECK(client.append("Sent", std::string("a\0b", 3), seen).error().kind == ErrorKind::invalid_argument);
}

TEST_CASE("imap mail: IDLE wakes on a delivery within 2 s", "[mail]") {
  Client client(imaps_settings());
  auto status = client.examine("INBOX");
  REQUIRE(status.has_value());

  SECTION("quiet: false after the timeout") {
    auto started = MailClock::now();
    auto quiet = client.idle("INBOX", 800ms);
    INFO((quiet ? std::string() : quiet.error().message));
    REQUIRE(quiet.has_value());
    CHECK_FALSE(*quiet);
    CHECK(MailClock::now() - started >= 800ms);
  }
  SECTION("a delivery while idling") {
    std::string id = "i" + mail_unique() + "@example.test";
    auto idling = std::async(std::launch::async, [&] {
      auto woke = client.idle("INBOX", 10s);
      return std::make_pair(woke, MailClock::now());
    });
    std::this_thread::sleep_for(300ms);  // into IDLE (a delivery before it counts too)
    mail_submit(id, "idle");
    auto accepted = MailClock::now();
    auto [woke, at] = idling.get();
    INFO((woke ? std::string() : woke.error().message));
    REQUIRE(woke.has_value());
    CHECK(*woke);
    auto latency = std::chrono::duration_cast<std::chrono::milliseconds>(at - accepted);
    INFO("EXISTS " << latency.count() << " ms after the submission was accepted");
    CHECK(latency < 2s);
  }
  SECTION("a delivery between examine and idle is reported at once") {
    std::string id = "b" + mail_unique() + "@example.test";
    mail_submit(id, "before idle");
    Client other(imaps_settings());
    mail_wait_for(other, id);
    auto started = MailClock::now();
    auto woke = client.idle("INBOX", 10s);
    REQUIRE(woke.has_value());
    CHECK(*woke);
    CHECK(MailClock::now() - started < 2s);
  }
  SECTION("the interrupter ends the wait from another thread, and every wait after it") {
    auto stop = client.interrupter();
    auto started = MailClock::now();
    auto idling = std::async(std::launch::async, [&] { return client.idle("INBOX", 20s); });
    std::this_thread::sleep_for(300ms);  // into IDLE
    stop();
    auto woke = idling.get();
    INFO((woke ? std::string() : woke.error().message));
    REQUIRE(woke.has_value());
    CHECK_FALSE(*woke);
    CHECK(MailClock::now() - started < 5s);
    auto again = client.idle("INBOX", 20s);
    REQUIRE(again.has_value());
    CHECK_FALSE(*again);
    CHECK(MailClock::now() - started < 5s);
    CHECK(client.examine("INBOX").has_value());  // the connection still answers
  }
  SECTION("after a reconnection, UIDNEXT tells") {
    std::string id = "r" + mail_unique() + "@example.test";
    client.disconnect();
    mail_submit(id, "reconnect");
    Client other(imaps_settings());
    mail_wait_for(other, id);
    auto woke = client.idle("INBOX", 10s);
    REQUIRE(woke.has_value());
    CHECK(*woke);
  }
}

TEST_CASE("imap mail: Postfix refuses a recipient outside example.test", "[mail]") {
  SmtpClient smtp(submission_settings());
  std::vector<std::string> to = {"someone@elsewhere.test"};
  auto sent = smtp.send(mail_get("CUSTOMER_USER"), to, mail_message("out@example.test", "out"));
  REQUIRE_FALSE(sent.has_value());
  INFO(sent.error().message);
  CHECK(sent.error().kind == SmtpErrorKind::rejected);
  CHECK(sent.error().reply_code == 550);
  CHECK(certainly_not_sent(sent.error()));
  std::vector<std::string> bad = {"a b@example.test"};
  CHECK(smtp.send(mail_get("CUSTOMER_USER"), bad, "x").error().kind == SmtpErrorKind::invalid_argument);
}

TEST_CASE("imap mail: SMTP outcomes from a scripted server", "[mail]") {
  ServerSettings settings;
  settings.host = "127.0.0.1";
  settings.port = static_cast<std::uint16_t>(std::stoi(mail_env_var("DISPATCHD_FAKE_SMTP_PORT")));
  settings.tls = TlsMode::implicit;
  settings.user = "agent@example.test";
  settings.password = "x";
  settings.ca_file = mail_get("CA_FILE");
  settings.connect_timeout = 5s;
  settings.io_timeout = 2s;
  settings.operation_timeout = 10s;
  struct Row {
    std::string user;  // "token:T": XOAUTH2 with the bearer token T
    std::string mode;
    bool ok;
    SmtpErrorKind kind;
    int code;
  };
  const std::vector<Row> table = {
      {"agent", "ok", true, SmtpErrorKind::unknown, 250},
      {"token:good-token", "ok", true, SmtpErrorKind::unknown, 250},
      {"token:expired-token", "ok", false, SmtpErrorKind::auth_refused, 0},  // curl stops at the 334
      {"refused", "ok", false, SmtpErrorKind::auth_refused, 535},
      {"later", "ok", false, SmtpErrorKind::temporary, 454},
      {"agent", "refuse-rcpt", false, SmtpErrorKind::rejected, 550},
      {"agent", "later-rcpt", false, SmtpErrorKind::temporary, 450},
      {"agent", "refuse-data", false, SmtpErrorKind::rejected, 554},
      {"agent", "drop-in-data", false, SmtpErrorKind::temporary, 0},
      {"agent", "drop-after-data", false, SmtpErrorKind::unknown, 0},
      {"agent", "silent-after-data", false, SmtpErrorKind::unknown, 0},
      {"agent", "later-after-data", false, SmtpErrorKind::temporary, 451},
      {"agent", "reject-after-data", false, SmtpErrorKind::rejected, 554},
  };
  // Large enough that "drop-in-data" resets the connection with most of it unsent.
  std::string body(4 * 1024 * 1024, 'x');
  for (std::size_t i = 76; i < body.size(); i += 78) body[i] = '\n';
  for (const Row& row : table) {
    ServerSettings s = settings;
    s.user = row.user + "@example.test";
    if (row.user.starts_with("token:")) {
      s.user = "agent@example.test";
      s.password.clear();
      s.oauth_token = row.user.substr(6);
      s.sasl_mechanism = "XOAUTH2";
    }
    SmtpClient smtp(s);
    std::vector<std::string> to = {"nobody@example.test"};
    auto sent = smtp.send(row.mode + "@example.test", to, "Subject: scripted\r\n\r\n" + body);
    INFO(row.user << " " << row.mode << ": " << (sent ? sent->reply : sent.error().message));
    REQUIRE(sent.has_value() == row.ok);
    if (row.ok) {
      CHECK(sent->reply_code == row.code);
      continue;
    }
    CHECK(to_string(sent.error().kind) == to_string(row.kind));
    CHECK(sent.error().reply_code == row.code);
    CHECK(certainly_not_sent(sent.error()) == (row.kind != SmtpErrorKind::unknown));
  }
}

// Dovecot delays the logins from an address that failed one (its auth penalty: 2 s, then
// more, until a login succeeds), Postfix's AUTH included: these run after the others, with
// long timeouts, and the driver restarts Dovecot after them.
TEST_CASE("imap mail: a wrong password is auth_refused", "[auth]") {
  auto patient = [](ServerSettings s) {
    s.password = "wrong";
    s.connect_timeout = 30s;
    s.io_timeout = 30s;
    s.operation_timeout = 30s;
    return s;
  };
  SmtpClient sender(patient(submission_settings()));
  std::vector<std::string> to = {mail_get("SUPPORT_USER")};
  auto sent = sender.send(mail_get("CUSTOMER_USER"), to, mail_message("pw@example.test", "pw"));
  REQUIRE_FALSE(sent.has_value());
  INFO(sent.error().message);
  CHECK(sent.error().kind == SmtpErrorKind::auth_refused);
  CHECK(sent.error().reply_code == 535);

  Client client(patient(imaps_settings()));
  CHECK(mail_kind(client.examine("INBOX")) == "auth_refused");
  auto fetched = client.fetch_raw("INBOX", 1, 1);  // curl's own login (URL operations)
  REQUIRE_FALSE(fetched.has_value());
  INFO(fetched.error().message);
  CHECK(fetched.error().kind == ErrorKind::auth_refused);
  CHECK_FALSE(is_retryable(fetched.error().kind));
}

// Dovecot's sessions already open outlive its master: `servers.sh kick` closes them first
// (BYE, one of them in IDLE), then `stop-dovecot` refuses new connections.
TEST_CASE("imap mail: with Dovecot gone, errors are retryable", "[outage]") {
  auto servers = [](const std::string& command) {
    std::string line = "bash " DISPATCHD_SOURCE_DIR "/tests/mail/servers.sh " + command + " " +
                       mail_env_var("DISPATCHD_MAIL_DIR") + " " + mail_get("SUPPORT_USER") + " >/dev/null 2>&1";
    return std::system(line.c_str());
  };
  Client open_before(imaps_settings());
  auto status = open_before.examine("INBOX");
  REQUIRE(status.has_value());
  REQUIRE(open_before.search_uids_from("INBOX", status->uidvalidity, 1).has_value());
  Client idling(imap_starttls_settings());
  REQUIRE(idling.examine("INBOX").has_value());
  auto idled = std::async(std::launch::async, [&] { return idling.idle("INBOX", 10s); });
  std::this_thread::sleep_for(300ms);

  REQUIRE(servers("kick") == 0);
  auto cut = idled.get();
  REQUIRE_FALSE(cut.has_value());
  INFO(cut.error().message);
  CHECK(cut.error().kind == ErrorKind::unavailable);  // Dovecot's "* BYE Server shutting down."
  // Kicked while unused: found dead, opened again, and working.
  auto reopened = open_before.examine("INBOX");
  INFO((reopened ? std::string() : reopened.error().message));
  CHECK(reopened.has_value());

  REQUIRE(servers("kick") == 0);
  REQUIRE(servers("stop-dovecot") == 0);
  auto again = open_before.examine("INBOX");
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().kind == ErrorKind::connection);
  auto searched = open_before.search_uids_from("INBOX", status->uidvalidity, 1);
  REQUIRE_FALSE(searched.has_value());
  CHECK(searched.error().kind == ErrorKind::connection);
  auto idle_again = idling.idle("INBOX", 1s);
  REQUIRE_FALSE(idle_again.has_value());
  CHECK(idle_again.error().kind == ErrorKind::connection);

  Client fresh(imaps_settings());
  auto refused = fresh.examine("INBOX");
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().kind == ErrorKind::connection);
  CHECK(is_retryable(refused.error().kind));
  auto fetched = fresh.fetch_raw("INBOX", status->uidvalidity, 1);
  REQUIRE_FALSE(fetched.has_value());
  CHECK(fetched.error().kind == ErrorKind::connection);
}

// A shutdown racing a call: the server's BYE comes after the call was sent on a connection
// that sat unused, and nothing else with it. The server said it before it read the call, so
// the call was not carried out: the client opens a new connection and calls again, once.
// A BYE after the server began to answer is the call's outcome (unavailable), not retried.
// tests/fakes/fake_imap_goodbye.py plays the server (Dovecot cannot be made to race).
TEST_CASE("imap mail: a goodbye alone on an unused connection is a stale connection, opened again once") {
  std::string ca = mail_get("CA_FILE");
  std::string tls = ca.substr(0, ca.rfind('/'));
  std::string log = tls + "/../fake-imap-goodbye.log";
  std::string line = "python3 " DISPATCHD_SOURCE_DIR "/tests/fakes/fake_imap_goodbye.py " + tls + "/server.pem " + tls +
                     "/server.key " + log + " ok bye ok late-bye";
  FILE* fake = popen(line.c_str(), "r");
  REQUIRE(fake != nullptr);
  char port_line[32] = {};
  bool have_port = std::fgets(port_line, sizeof port_line, fake) != nullptr;
  if (!have_port) pclose(fake);
  REQUIRE(have_port);

  ServerSettings settings = imaps_settings();
  settings.port = static_cast<std::uint16_t>(std::stoi(port_line));
  {
    Client client(settings);
    auto first = client.examine("INBOX");
    INFO((first ? std::string() : first.error().message));
    CHECK(first.has_value());
    auto second = client.examine("INBOX");  // BYE alone: opened again, called again
    INFO((second ? std::string() : second.error().message));
    REQUIRE(second.has_value());
    CHECK(second->uidvalidity == 7);
    CHECK(second->exists == 3);
    auto third = client.examine("INBOX");  // "* 3 EXISTS", then BYE: the call's outcome
    REQUIRE_FALSE(third.has_value());
    INFO(third.error().message);
    CHECK(third.error().kind == ErrorKind::unavailable);
    CHECK(is_retryable(third.error().kind));
  }
  CHECK(pclose(fake) == 0);
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == "connection 1\nexamine 1 ok\nexamine 2 bye\nconnection 2\nexamine 3 ok\nexamine 4 late-bye\n");
}
