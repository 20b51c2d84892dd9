// webhook_load: a closed-loop HTTP load generator for the daemon benchmark. Keeps
// `--concurrency` requests in flight (curl multi, keep-alive connections) until `--count`
// have been answered, and prints one JSON line: answered, statuses, seconds, requests/s,
// latency percentiles and its own CPU time.
//
//   webhook_load --mode webhook --url http://127.0.0.1:P/webhooks/whatsapp --secret-env NAME
//   webhook_load --mode openai  --url http://127.0.0.1:P/v1/chat/completions
//   webhook_load --mode graph   --url http://127.0.0.1:P/v21.0/ID/messages --token T
//   common: [--count N] [--concurrency C] [--first-sender NUMBER] [--rate R] [--timeline FILE]
//   webhook: [--senders N] [--ids sequential|random]
//   webhook_load --mode status --url ... --secret-env NAME --status-ids FILE
//
// With --rate the load is open-loop: request i leaves at start + i/R seconds (at most C in
// flight; a request held back by that leaves as soon as one returns), as traffic arrives in
// production whatever the server's speed; without it, each answer sends the next.
//
// `webhook` posts Cloud API text-message webhooks signed as Meta signs them (one new
// sender and wamid per request, non-ASCII escaped); `openai` and `graph` post what
// dispatchd itself sends to the model and to the Graph API, to measure the fakes alone.
// `status` posts signed delivery-report webhooks ("delivered", then "read") about the
// messages FILE names, one wamid per line, drawn at random: a reply's statuses, as Meta
// sends two or three for every message a business sends.
// A benchmark tool: it never judges the numbers.
//
// By default each request has a sender of its own (first-sender + i) and a wamid that sorts
// after every earlier one, so the daemon's inserts land at the right edge of its indexes.
// Real traffic does not: `--senders N` draws each sender from N existing numbers
// (first-sender .. first-sender + N - 1, as bench/large_db writes its customers), and
// `--ids random` makes wamids that sort at random, as Meta's do, so each insert lands on a
// random page of the indexes, as production's do on a long history. Not with --timeline:
// the overhead join keys on the sender, unique only without --senders.
//
// --timeline writes FILE at the end (tests/fakes/timeline.h): per request a line "<ns>
// webhook <sender>" stamped as it is handed to curl (curl writes it within the next turns
// of this single-threaded loop, so the stamp is early, never late) and "<ns> webhook_acked
// <sender>" when its answer came back, for the benchmark's overhead join
// (bench/daemon_bench.py --overhead). The sender is unique per request and is what the
// model's prompt and the Graph send carry on.

#include <utility>

#include <sys/resource.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "connectors/whatsapp/signature.h"
#include "net/curl_transport.h"
#include "tests/fakes/timeline.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string mode = "webhook";
  std::string url;
  std::string secret;
  std::string token;
  long count = 10'000;
  long concurrency = 64;
  std::uint64_t first_sender = 5215500000000;
  double rate = 0;  // requests per second; 0: closed loop
  std::string timeline;
  std::uint64_t senders = 0;  // 0: a new sender per request
  bool random_ids = false;
  std::vector<std::string> status_ids;  // --mode status: the messages the reports are about
};

// A bijective 64-bit mix (splitmix64's finalizer): a stable, random-looking value per i.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::string wamid(long i, long now, bool random) {
  if (!random) return "wamid.BENCH" + std::to_string(now) + "." + std::to_string(i);
  char hex[33];
  std::snprintf(
      hex, sizeof hex, "%016llx%016llx",
      static_cast<unsigned long long>(mix(static_cast<std::uint64_t>(i) ^ static_cast<std::uint64_t>(now) << 20)),
      static_cast<unsigned long long>(mix(static_cast<std::uint64_t>(i) + 1)));
  return std::string("wamid.HBgL") + hex;
}

std::string webhook_body(long i, std::uint64_t sender, long now, const std::string& id) {
  const std::string from = std::to_string(sender);
  // As Meta serializes it: compact, non-ASCII escaped as \uXXXX.
  return R"({"object":"whatsapp_business_account","entry":[{"id":"1023456789012345","changes":[{"field":"messages",)"
         R"("value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550001234",)"
         R"("phone_number_id":"109876543210001"},"contacts":[{"profile":{"name":"Cliente"},"wa_id":")" +
         from + R"("}],"messages":[{"from":")" + from + R"(","id":")" + id + R"(","timestamp":")" +
         std::to_string(now) +
         R"(","type":"text","text":{"body":"Hola, \u00bfhacen env\u00edos a todo M\u00e9xico? Pedido )" +
         std::to_string(1000 + i) + R"("}}]}}]}]})";
}

std::string status_body(const std::string& id, const char* status, long now) {
  return R"({"object":"whatsapp_business_account","entry":[{"id":"1023456789012345","changes":[{"field":"messages",)"
         R"("value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550001234",)"
         R"("phone_number_id":"109876543210001"},"statuses":[{"id":")" +
         id + R"(","status":")" + status + R"(","timestamp":")" + std::to_string(now) +
         R"(","recipient_id":"34600000000"}]}}]}]})";
}

std::string openai_body(std::uint64_t sender) {
  return R"({"model":"fake-model","temperature":0,"messages":[{"role":"system","content":"Eres el agente de atenci\u00f3n al cliente."},)"
         R"({"role":"user","content":"message from )" +
         std::to_string(sender) + R"(: Hola, \u00bfhacen env\u00edos a todo M\u00e9xico?"}]})";
}

std::string graph_body(std::uint64_t sender) {
  return R"({"messaging_product":"whatsapp","recipient_type":"individual","to":")" + std::to_string(sender) +
         R"(","type":"text","text":{"preview_url":false,"body":"Hola, s\u00ed enviamos a todo M\u00e9xico."}})";
}

class Load {
 public:
  Load(boost::asio::io_context& io, Options options) : m_transport(io), m_timer(io), m_options(std::move(options)) {
    m_latencies.reserve(static_cast<std::size_t>(m_options.count));
    m_now =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  }

  void start() {
    m_start = Clock::now();
    if (m_options.rate > 0) return pace();
    for (long i = 0; i < m_options.concurrency && m_next < m_options.count; ++i) send_next();
  }

  void report() const {
    const double seconds = std::chrono::duration<double>(m_end - m_start).count();
    std::vector<double> sorted = m_latencies;
    std::sort(sorted.begin(), sorted.end());
    const auto pct = [&](double p) {
      return sorted.empty() ? 0.0 : sorted[std::min(sorted.size() - 1, static_cast<std::size_t>(p * sorted.size()))];
    };
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const double cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                       static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
    std::string statuses;
    for (const auto& [status, n] : m_statuses)
      statuses += (statuses.empty() ? "" : ",") + ("\"" + std::to_string(status) + "\":" + std::to_string(n));
    std::printf(
        "{\"mode\":\"%s\",\"count\":%ld,\"concurrency\":%ld,\"answered\":%ld,\"transport_errors\":%ld,"
        "\"statuses\":{%s},\"seconds\":%.3f,\"per_second\":%.0f,\"latency_ms\":{\"p50\":%.2f,\"p90\":%.2f,"
        "\"p99\":%.2f,\"max\":%.2f},\"load_cpu_seconds\":%.3f}\n",
        m_options.mode.c_str(), m_options.count, m_options.concurrency, m_answered, m_errors, statuses.c_str(), seconds,
        seconds > 0 ? static_cast<double>(m_answered) / seconds : 0.0, pct(0.50), pct(0.90), pct(0.99),
        sorted.empty() ? 0.0 : sorted.back(), cpu);
  }

  bool ok() const { return m_errors == 0 && m_answered == m_options.count; }

  bool write_timeline() const { return m_options.timeline.empty() || m_timeline.write(m_options.timeline); }

 private:
  // Open loop: sends every request that is due (as far as the concurrency allows), then
  // sleeps until the next one is.
  void pace() {
    const auto due = [this](long i) {
      return m_start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(i / m_options.rate));
    };
    while (m_next < m_options.count && m_in_flight < m_options.concurrency && due(m_next) <= Clock::now()) send_next();
    if (m_next >= m_options.count || m_in_flight >= m_options.concurrency) return;
    m_timer.expires_at(due(m_next));
    m_timer.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) pace();
    });
  }

  void send_next() {
    const long i = m_next++;
    ++m_in_flight;
    const std::uint64_t sender =
        m_options.first_sender +
        (m_options.senders ? mix(static_cast<std::uint64_t>(i)) % m_options.senders : static_cast<std::uint64_t>(i));
    dispatchd::net::HttpRequest request;
    request.method = "POST";
    request.url = m_options.url;
    request.timeout = std::chrono::milliseconds(60'000);
    request.headers.add("Content-Type", "application/json");
    if (m_options.mode == "webhook") {
      request.body = webhook_body(i, sender, m_now, wamid(i, m_now, m_options.random_ids));
      request.headers.add("X-Hub-Signature-256", dispatchd::whatsapp::sign_body(request.body, m_options.secret));
    } else if (m_options.mode == "status") {
      const auto& id = m_options.status_ids[mix(static_cast<std::uint64_t>(i)) % m_options.status_ids.size()];
      request.body = status_body(id, i % 2 ? "read" : "delivered", m_now);
      request.headers.add("X-Hub-Signature-256", dispatchd::whatsapp::sign_body(request.body, m_options.secret));
    } else if (m_options.mode == "openai") {
      request.body = openai_body(sender);
      request.headers.add("Authorization", "Bearer sk-fake");
    } else {
      request.body = graph_body(sender);
      request.headers.add("Authorization", "Bearer " + m_options.token);
    }
    const auto sent = Clock::now();
    if (!m_options.timeline.empty()) m_timeline.add(sent, "webhook", std::to_string(sender));
    m_transport.send(std::move(request), [this, sent, sender](dispatchd::net::HttpResult result) {
      const auto now = Clock::now();
      if (!m_options.timeline.empty()) m_timeline.add(now, "webhook_acked", std::to_string(sender));
      m_latencies.push_back(std::chrono::duration<double, std::milli>(now - sent).count());
      if (result) {
        ++m_answered;
        ++m_statuses[result->status];
      } else {
        ++m_errors;
        if (m_errors <= 3) std::fprintf(stderr, "webhook_load: %s\n", result.error().message.c_str());
      }
      m_end = now;
      --m_in_flight;
      if (m_options.rate > 0)
        pace();
      else if (m_next < m_options.count)
        send_next();
    });
  }

  dispatchd::net::CurlTransport m_transport;
  boost::asio::steady_timer m_timer;
  Options m_options;
  long m_in_flight = 0;
  long m_now = 0;
  long m_next = 0;
  long m_answered = 0;
  long m_errors = 0;
  std::map<int, long> m_statuses;
  std::vector<double> m_latencies;
  dispatchd::fakes::Timeline m_timeline;
  Clock::time_point m_start{};
  Clock::time_point m_end{};
};

int usage(const char* problem) {
  std::fprintf(stderr,
               "webhook_load: %s\nusage: webhook_load --mode webhook|status|openai|graph --url URL [--secret-env NAME] "
               "[--token T] [--count N] [--concurrency C] [--first-sender NUMBER] [--rate R] [--timeline FILE] "
               "[--senders N] [--ids sequential|random] [--status-ids FILE]\n",
               problem);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) return usage("every flag takes a value");
    const char* value = argv[++i];
    if (flag == "--mode") {
      options.mode = value;
    } else if (flag == "--url") {
      options.url = value;
    } else if (flag == "--secret-env") {
      const char* secret = std::getenv(value);
      if (secret == nullptr || *secret == '\0') return usage("the --secret-env variable is not set");
      options.secret = secret;
    } else if (flag == "--token") {
      options.token = value;
    } else if (flag == "--count") {
      options.count = std::atol(value);
    } else if (flag == "--concurrency") {
      options.concurrency = std::atol(value);
    } else if (flag == "--rate") {
      options.rate = std::atof(value);
    } else if (flag == "--timeline") {
      options.timeline = value;
    } else if (flag == "--first-sender") {
      options.first_sender = std::strtoull(value, nullptr, 10);
    } else if (flag == "--senders") {
      options.senders = std::strtoull(value, nullptr, 10);
    } else if (flag == "--ids") {
      if (std::string_view(value) != "sequential" && std::string_view(value) != "random")
        return usage("--ids is sequential or random");
      options.random_ids = std::string_view(value) == "random";
    } else if (flag == "--status-ids") {
      std::ifstream in(value);
      if (!in) return usage("cannot read the --status-ids file");
      for (std::string line; std::getline(in, line);)
        if (!line.empty()) options.status_ids.push_back(line);
    } else {
      return usage("unknown flag");
    }
  }
  if (options.url.empty()) return usage("--url is required");
  if (options.mode != "webhook" && options.mode != "status" && options.mode != "openai" && options.mode != "graph")
    return usage("bad --mode");
  const bool signed_mode = options.mode == "webhook" || options.mode == "status";
  if (signed_mode && options.secret.empty()) return usage("--mode webhook and status need --secret-env");
  if (options.mode == "status" && options.status_ids.empty())
    return usage("--mode status needs a --status-ids file naming at least one wamid");
  if (options.count <= 0 || options.concurrency <= 0) return usage("--count and --concurrency must be positive");
  boost::asio::io_context io{1};
  Load load(io, options);
  load.start();
  io.run();
  load.report();
  if (!load.write_timeline()) {
    std::fprintf(stderr, "webhook_load: cannot write the timeline %s\n", options.timeline.c_str());
    return 1;
  }
  return load.ok() ? 0 : 1;
}
