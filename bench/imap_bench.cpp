// imap_bench: the IMAP client of connectors/imap/ (libcurl) against the mail-server pair of
// tests/mail/servers.sh, for bench/imap_fetch_bench.py.
//
//   imap_bench fetch ENV_FILE UIDVALIDITY   every message of soporte's INBOX, one UID FETCH
//                                           each, on one connection (UID SEARCH first)
//   imap_bench idle ENV_FILE ROUNDS         IDLE's latency: a mail submitted (SMTP client,
//                                           STARTTLS, AUTH) while the IMAP client idles
//
// ENV_FILE is the pair's DIR/env. Prints one JSON line; exits 1 on any error.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "bench/mail_env.h"
#include "connectors/imap/client.h"
#include "connectors/imap/smtp.h"

namespace {

using BenchClock = std::chrono::steady_clock;
using namespace dispatchd::imap;

ServerSettings settings_for(std::map<std::string, std::string>& env, const std::string& port, TlsMode tls,
                            const std::string& who) {
  ServerSettings s;
  s.host = "127.0.0.1";
  s.port = static_cast<std::uint16_t>(std::stoi(env[port]));
  s.tls = tls;
  s.user = env[who + "_USER"];
  s.password = env[who + "_PASSWORD"];
  s.ca_file = env["CA_FILE"];
  return s;
}

double seconds_since(BenchClock::time_point start) {
  return std::chrono::duration<double>(BenchClock::now() - start).count();
}

int fail(const std::string& what) {
  std::fprintf(stderr, "imap_bench: %s\n", what.c_str());
  return 1;
}

int fetch(std::map<std::string, std::string>& env, std::uint32_t uidvalidity) {
  auto start = BenchClock::now();
  Client client(settings_for(env, "IMAPS_PORT", TlsMode::implicit, "SUPPORT"));
  auto uids = client.search_uids_from("INBOX", uidvalidity, 1);
  if (!uids) return fail("search: " + uids.error().message);
  std::size_t bytes = 0;
  for (std::uint32_t uid : *uids) {
    auto raw = client.fetch_raw("INBOX", uidvalidity, uid);
    if (!raw) return fail("fetch: " + raw.error().message);
    bytes += raw->size();
  }
  std::printf("{\"client\":\"libcurl\",\"messages\":%zu,\"bytes\":%zu,\"seconds\":%.6f}\n", uids->size(), bytes,
              seconds_since(start));
  return 0;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

int idle(std::map<std::string, std::string>& env, int rounds) {
  Client client(settings_for(env, "IMAPS_PORT", TlsMode::implicit, "SUPPORT"));
  SmtpClient smtp(settings_for(env, "SUBMISSION_PORT", TlsMode::starttls, "CUSTOMER"), "bench.example.test");
  std::vector<std::string> to = {env["SUPPORT_USER"]};
  std::vector<double> from_submit, from_accept;
  for (int round = 0; round < rounds; ++round) {
    auto status = client.examine("INBOX");
    if (!status) return fail("examine: " + status.error().message);
    auto woke = std::async(std::launch::async, [&] {
      auto result = client.idle("INBOX", std::chrono::seconds(30));
      return std::make_pair(result, BenchClock::now());
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // well into IDLE
    std::string raw = "From: ana@example.test\r\nTo: soporte@example.test\r\nSubject: idle " + std::to_string(round) +
                      "\r\nMessage-ID: <idle-" + std::to_string(round) + "-" +
                      std::to_string(BenchClock::now().time_since_epoch().count()) + "@example.test>\r\n\r\nhola\r\n";
    auto submitted = BenchClock::now();
    auto sent = smtp.send(env["CUSTOMER_USER"], to, raw);
    auto accepted = BenchClock::now();
    if (!sent) return fail("send: " + sent.error().message);
    auto [result, at] = woke.get();
    if (!result) return fail("idle: " + result.error().message);
    if (!*result) return fail("idle: no EXISTS within 30 s");
    from_submit.push_back(std::chrono::duration<double, std::milli>(at - submitted).count());
    from_accept.push_back(std::chrono::duration<double, std::milli>(at - accepted).count());
  }
  auto list = [](const std::vector<double>& values) {
    std::string out = "[";
    for (double v : values) out += (out.size() > 1 ? "," : "") + std::to_string(v);
    return out + "]";
  };
  std::printf(
      "{\"client\":\"libcurl\",\"rounds\":%d,\"submit_to_exists_ms_median\":%.1f,\"accepted_to_exists_ms_median\":%.1f,"
      "\"accepted_to_exists_ms_max\":%.1f,\"submit_to_exists_ms\":%s,\"accepted_to_exists_ms\":%s}\n",
      rounds, median(from_submit), median(from_accept), *std::max_element(from_accept.begin(), from_accept.end()),
      list(from_submit).c_str(), list(from_accept).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) return fail("usage: imap_bench fetch ENV_FILE UIDVALIDITY | idle ENV_FILE ROUNDS");
  std::string mode = argv[1];
  auto env = read_mail_env(argv[2]);
  if (env.empty()) return fail(std::string("cannot read ") + argv[2]);
  if (mode == "fetch") return fetch(env, static_cast<std::uint32_t>(std::stoul(argv[3])));
  if (mode == "idle") return idle(env, std::max(1, std::atoi(argv[3])));
  return fail("unknown mode " + mode);
}
