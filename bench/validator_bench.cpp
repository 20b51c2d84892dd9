// validator_bench: single-threaded throughput of dispatchd::validator::validate.
//
// A deterministic generator (fixed seed, own PRNG, so every platform and standard library
// gets the same bytes) builds replies for the support.en catalog:
//   60% clean JSON, 20% fenced (```json ... ```), 10% prose before/after,
//   10% invalid (wrong enum, missing field, extra field, truncated, wrong type).
// Every reply carries its sender (the recipient of a valid reply) and whether the
// generator meant it to be accepted.
//
//   validator_bench --write-corpus FILE   write the corpus as JSON lines and exit
//   validator_bench --corpus FILE         benchmark the replies in FILE
//   validator_bench                       benchmark a freshly generated corpus
// Options: --catalog FILE, --count N (10000), --runs N (7), --seed N.
//
// Before timing, every verdict is compared with the generator's intent; a mismatch ends
// the program with exit 1, so a broken validator cannot look fast. This is a benchmark,
// not a test: nothing depends on the timings.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "catalog/catalog.h"
#include "validator/validator.h"

namespace {

namespace validator = dispatchd::validator;
namespace catalog = dispatchd::catalog;

// ---------------------------------------------------------------------------------------
// Deterministic randomness: splitmix64, and bounded draws by rejection (no std
// distributions, whose output differs between standard libraries).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : m_state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (m_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n).
  std::size_t below(std::size_t n) {
    const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    std::uint64_t x;
    do x = next();
    while (x >= limit);
    return static_cast<std::size_t>(x % n);
  }
  std::size_t between(std::size_t lo, std::size_t hi) { return lo + below(hi - lo + 1); }  // inclusive
  bool chance(unsigned percent) { return below(100) < percent; }
  template <class C>
  const auto& pick(const C& items) {
    return items[below(std::size(items))];
  }

 private:
  std::uint64_t m_state;
};

struct Reply {
  std::string sender;
  std::string text;
  bool valid = true;
  std::string kind;  // clean, fenced, prose, invalid:<what>
};

// JSON string literal of `s` (valid UTF-8 passes through unescaped).
void append_quoted(std::string& out, std::string_view s) {
  out += '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

std::string quoted(std::string_view s) {
  std::string out;
  append_quoted(out, s);
  return out;
}

// ---------------------------------------------------------------------------------------
// The generator.

constexpr std::string_view k_actions[] = {"send_message", "query_status", "escalate_to_human"};
constexpr std::string_view k_priorities[] = {"high", "medium", "low"};

constexpr std::string_view k_words[] = {
    "order",   "your",   "the",      "shipment", "arrives",  "tomorrow", "we",         "are",      "sorry",
    "for",     "delay",  "refund",   "invoice",  "tracking", "number",   "is",         "please",   "confirm",
    "address", "thanks", "customer", "asks",     "about",    "a",        "partial",    "warranty", "replacement",
    "payment", "card",   "declined", "account",  "password", "reset",    "store",      "hours",    "Monday",
    "to",      "Friday", "package",  "damaged",  "photo",    "received", "today",      "can",      "you",
    "check",   "status", "of",       "case",     "4471",     "#8812",    "2024-05-17", "10:30",    "€49.90",
    "$120",    "café",   "naïve",    "Zürich",   "São",      "Paulo",    "Málaga",     "crème",    "brûlée",
    "façade",  "Ελλάδα", "Москва",   "日本",     "東京",     "配送",     "ありがとう", "😀",        "🙏",
    "📦",       "—",      "…",        "«merci»",  "ñandú",    "Ørsted",   "İstanbul",
};
constexpr std::string_view k_punct[] = {".", ",", "!", "?", ":", ";", " -", " \"quoted\"", "\n", "\t", " \\ "};

constexpr std::string_view k_first[] = {"ana", "luis",  "maria", "john", "wei",    "fatima", "olga", "pedro",
                                        "Sam", "Kenji", "chloe", "Noah", "amelie", "raj",    "zoe",  "Tom"};
constexpr std::string_view k_last[] = {"garcia", "smith",    "lopez", "chen",  "Nguyen", "mueller",
                                       "rossi",  "kowalski", "silva", "brown", "tanaka", "dubois"};
constexpr std::string_view k_domains[] = {"example.com", "mail.example.org", "shop.example.net", "example.co.uk"};

std::string digits(Rng& rng, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += static_cast<char>('0' + rng.below(10));
  return s;
}

std::string make_sender(Rng& rng) {
  switch (rng.below(4)) {
    case 0: return "1555" + digits(rng, 7);
    case 1: return "34" + std::to_string(6 + rng.below(2)) + digits(rng, 8);
    case 2: return "521" + digits(rng, 10);
    default: {
      std::string s(rng.pick(k_first));
      s += rng.chance(50) ? "." : "_";
      s += rng.pick(k_last);
      if (rng.chance(30)) s += std::to_string(rng.below(100));
      return s + "@" + std::string(rng.pick(k_domains));
    }
  }
}

// Text of roughly `points` code points: words, some non-ASCII, some characters that
// need JSON escapes (quotes, newlines, tabs, backslashes).
std::string make_content(Rng& rng) {
  const unsigned r = static_cast<unsigned>(rng.below(100));
  const std::size_t target = r < 50   ? rng.between(8, 80)        // short replies
                             : r < 80 ? rng.between(80, 300)      // a paragraph
                             : r < 95 ? rng.between(300, 1000)    // a long answer
                                      : rng.between(1000, 3000);  // rare, very long
  std::string s;
  std::size_t points = 0;
  while (points < target) {
    if (!s.empty()) {
      const std::string_view sep = rng.chance(12) ? rng.pick(k_punct) : std::string_view(" ");
      s += sep;
      points += sep.size();  // all separators are ASCII
      if (sep != " ") {
        s += ' ';
        ++points;
      }
    }
    const std::string_view w = rng.pick(k_words);
    s += w;
    for (const char c : w) points += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  }
  if (rng.chance(70)) s += '.';
  return s;
}

enum class Layout { compact, spaced, pretty };

struct Member {
  std::string key;
  std::string value;  // JSON text
};

std::string object_text(const std::vector<Member>& members, Layout layout) {
  std::string out = "{";
  if (layout == Layout::pretty) out += '\n';
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (layout == Layout::pretty) out += "  ";
    append_quoted(out, members[i].key);
    out += layout == Layout::compact ? ":" : ": ";
    out += members[i].value;
    if (i + 1 < members.size()) out += layout == Layout::spaced ? ", " : ",";
    if (layout == Layout::pretty) out += '\n';
  }
  return out + "}";
}

std::string fenced(Rng& rng, const std::string& json) {
  constexpr std::string_view k_open[] = {"```json\n", "```json\n", "```json\n", "```JSON\n", "```\n"};
  std::string out = rng.chance(15) ? "\n" : "";
  out += rng.pick(k_open);
  out += json;
  out += "\n```";
  if (rng.chance(30)) out += '\n';
  return out;
}

std::string with_prose(Rng& rng, const std::string& json) {
  constexpr std::string_view k_before[] = {
      "Sure! Here is the action:\n\n",
      "Here's my answer:\n",
      "Based on the customer's message, I will reply.\n\n",
      "Claro, aquí está la acción — the JSON follows:\n",
      "Action chosen: ",
  };
  constexpr std::string_view k_after[] = {
      "\n\nLet me know if you need anything else.",
      "\nThis follows the catalog.",
      "\n\nNote: the customer seems upset, so I kept it short.",
      " Hope this helps! 🙂",
  };
  switch (rng.below(3)) {
    case 0: return std::string(rng.pick(k_before)) + json;
    case 1: return json + std::string(rng.pick(k_after));
    default: return std::string(rng.pick(k_before)) + json + std::string(rng.pick(k_after));
  }
}

enum class Kind { clean, fenced, prose, wrong_enum, missing_field, extra_field, truncated, wrong_type };

Reply make_reply(Rng& rng, Kind kind, const std::vector<std::string>& senders) {
  Reply reply;
  reply.sender = senders[rng.below(senders.size())];
  std::vector<Member> m = {
      {"action", quoted(rng.pick(k_actions))},
      {"recipient", quoted(reply.sender)},
      {"content", quoted(make_content(rng))},
      {"priority", quoted(rng.pick(k_priorities))},
  };
  if (rng.chance(10)) std::swap(m[rng.below(4)], m[rng.below(4)]);  // models reorder keys now and then
  const unsigned layout_roll = static_cast<unsigned>(rng.below(100));
  const Layout layout = layout_roll < 50 ? Layout::compact : layout_roll < 75 ? Layout::spaced : Layout::pretty;
  const auto find = [&](std::string_view key) -> Member& {
    return *std::find_if(m.begin(), m.end(), [&](const Member& x) { return x.key == key; });
  };
  const auto wrap = [&](const std::string& json) {
    const unsigned w = static_cast<unsigned>(rng.below(100));
    return w < 60 ? json : w < 80 ? fenced(rng, json) : with_prose(rng, json);
  };

  reply.valid = kind == Kind::clean || kind == Kind::fenced || kind == Kind::prose;
  switch (kind) {
    case Kind::clean:
      reply.kind = "clean";
      reply.text = object_text(m, layout);
      break;
    case Kind::fenced:
      reply.kind = "fenced";
      reply.text = fenced(rng, object_text(m, layout));
      break;
    case Kind::prose:
      reply.kind = "prose";
      reply.text = with_prose(rng, object_text(m, layout));
      break;
    case Kind::wrong_enum: {
      reply.kind = "invalid:enum";
      constexpr std::string_view k_bad_actions[] = {"reply", "send", "Send_Message", "escalate"};
      constexpr std::string_view k_bad_priorities[] = {"urgent", "High", "normal", "critical"};
      if (rng.chance(50))
        find("action").value = quoted(rng.pick(k_bad_actions));
      else
        find("priority").value = quoted(rng.pick(k_bad_priorities));
      reply.text = wrap(object_text(m, layout));
      break;
    }
    case Kind::missing_field:
      reply.kind = "invalid:missing";
      m.erase(m.begin() + static_cast<std::ptrdiff_t>(rng.below(m.size())));
      reply.text = wrap(object_text(m, layout));
      break;
    case Kind::extra_field: {
      reply.kind = "invalid:extra";
      constexpr std::string_view k_keys[] = {"language", "confidence", "reason", "customer_name"};
      const std::string_view key = rng.pick(k_keys);
      const std::string value =
          key == "confidence" ? std::string("0.92") : quoted(key == "language" ? "en" : "the customer asked");
      m.insert(m.begin() + static_cast<std::ptrdiff_t>(rng.below(m.size() + 1)), Member{std::string(key), value});
      reply.text = wrap(object_text(m, layout));
      break;
    }
    case Kind::truncated: {
      reply.kind = "invalid:truncated";
      // A reply cut off mid-stream (token limit): at an ASCII byte so it stays UTF-8.
      std::string json = object_text(m, layout);
      std::size_t cut = rng.between(json.size() / 4, json.size() - 2);
      while (static_cast<unsigned char>(json[cut]) >= 0x80) --cut;
      json.resize(cut);
      reply.text = rng.chance(70) ? json : "```json\n" + json;
      break;
    }
    case Kind::wrong_type: {
      reply.kind = "invalid:type";
      switch (rng.below(5)) {
        case 0: find("priority").value = std::to_string(1 + rng.below(3)); break;
        case 1: find("content").value = std::to_string(rng.below(100000)); break;
        case 2: find("recipient").value = digits(rng, 11); break;
        case 3: find("content").value = "[" + find("content").value + "]"; break;
        default: find("content").value = "null"; break;
      }
      reply.text = wrap(object_text(m, layout));
      break;
    }
  }
  return reply;
}

std::vector<Reply> generate(std::size_t count, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<std::string> senders(500);
  for (auto& s : senders) s = make_sender(rng);

  // Exact shares, then a deterministic shuffle, so the intended verdicts are known.
  const std::size_t n_fenced = count * 20 / 100, n_prose = count * 10 / 100, n_invalid = count * 10 / 100;
  const std::size_t n_clean = count - n_fenced - n_prose - n_invalid;
  std::vector<Kind> kinds;
  kinds.insert(kinds.end(), n_clean, Kind::clean);
  kinds.insert(kinds.end(), n_fenced, Kind::fenced);
  kinds.insert(kinds.end(), n_prose, Kind::prose);
  constexpr Kind k_invalid[] = {Kind::wrong_enum, Kind::missing_field, Kind::extra_field, Kind::truncated,
                                Kind::wrong_type};
  for (std::size_t i = 0; i < n_invalid; ++i) kinds.push_back(k_invalid[i % std::size(k_invalid)]);
  for (std::size_t i = kinds.size(); i > 1; --i) std::swap(kinds[i - 1], kinds[rng.below(i)]);

  std::vector<Reply> replies;
  replies.reserve(count);
  for (const Kind k : kinds) replies.push_back(make_reply(rng, k, senders));
  return replies;
}

// ---------------------------------------------------------------------------------------
// Corpus file: one JSON object per line, {"sender","reply","valid","kind"}.

bool write_corpus(const std::string& path, const std::vector<Reply>& replies) {
  std::ofstream out(path, std::ios::binary);
  std::string line;
  for (const auto& r : replies) {
    line = "{\"sender\":";
    append_quoted(line, r.sender);
    line += ",\"reply\":";
    append_quoted(line, r.text);
    line += r.valid ? ",\"valid\":true,\"kind\":" : ",\"valid\":false,\"kind\":";
    append_quoted(line, r.kind);
    line += "}\n";
    out << line;
  }
  return static_cast<bool>(out.flush());
}

std::optional<std::vector<Reply>> read_corpus(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::vector<Reply> replies;
  std::string line;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    rapidjson::Document d;
    d.Parse(line.data(), line.size());
    if (d.HasParseError() || !d.IsObject() || !d.HasMember("sender") || !d.HasMember("reply") ||
        !d.HasMember("valid")) {
      std::fprintf(stderr, "validator_bench: %s:%zu: not a corpus line\n", path.c_str(), n);
      return std::nullopt;
    }
    Reply r;
    r.sender.assign(d["sender"].GetString(), d["sender"].GetStringLength());
    r.text.assign(d["reply"].GetString(), d["reply"].GetStringLength());
    r.valid = d["valid"].GetBool();
    if (d.HasMember("kind")) r.kind = d["kind"].GetString();
    replies.push_back(std::move(r));
  }
  return replies;
}

// ---------------------------------------------------------------------------------------

std::string thousands(double v) {
  std::string s = std::to_string(static_cast<std::uint64_t>(v + 0.5));
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

[[noreturn]] void usage(const char* message) {
  std::fprintf(stderr,
               "validator_bench: %s\n"
               "usage: validator_bench [--catalog FILE] [--corpus FILE | --write-corpus FILE]\n"
               "                       [--count N] [--runs N] [--seed N]\n",
               message);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string catalog_path = DISPATCHD_DEFAULT_CATALOG;
  std::string corpus_path, write_path;
  std::size_t count = 10000, runs = 7;
  std::uint64_t seed = 0x5EEDD15C0DEull;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value for " + std::string(arg)).c_str());
      return argv[++i];
    };
    const auto number = [&]() -> std::uint64_t {
      const std::string v = value();
      char* end = nullptr;
      const auto n = std::strtoull(v.c_str(), &end, 0);
      if (v.empty() || *end != '\0') usage(("not a number: " + v).c_str());
      return n;
    };
    if (arg == "--catalog")
      catalog_path = value();
    else if (arg == "--corpus")
      corpus_path = value();
    else if (arg == "--write-corpus")
      write_path = value();
    else if (arg == "--count")
      count = number();
    else if (arg == "--runs")
      runs = number();
    else if (arg == "--seed")
      seed = number();
    else
      usage(("unknown option " + std::string(arg)).c_str());
  }
  if (count == 0 || runs == 0) usage("--count and --runs must be positive");

  if (!write_path.empty()) {
    const auto replies = generate(count, seed);
    if (!write_corpus(write_path, replies)) {
      std::fprintf(stderr, "validator_bench: cannot write %s\n", write_path.c_str());
      return 1;
    }
    std::printf("wrote %zu replies to %s\n", replies.size(), write_path.c_str());
    return 0;
  }

  auto loaded = catalog::Catalog::load_file(catalog_path);
  if (!loaded) {
    std::fprintf(stderr, "validator_bench: %s\n", loaded.error().front().to_string().c_str());
    return 1;
  }
  const catalog::Catalog& cat = *loaded;

  std::vector<Reply> replies;
  if (!corpus_path.empty()) {
    auto read = read_corpus(corpus_path);
    if (!read) {
      std::fprintf(stderr, "validator_bench: cannot read corpus %s\n", corpus_path.c_str());
      return 1;
    }
    replies = std::move(*read);
  } else {
    replies = generate(count, seed);
  }
  const std::size_t n = replies.size();
  if (n == 0) usage("empty corpus");

  std::size_t bytes = 0, intended = 0;
  std::vector<std::string_view> texts;
  std::vector<validator::Context> contexts(n);
  texts.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    texts.push_back(replies[i].text);
    contexts[i].sender = replies[i].sender;
    bytes += replies[i].text.size();
    intended += replies[i].valid ? 1 : 0;
  }

  // Sanity pass (also the warm-up): every verdict must be the one the generator intended.
  std::size_t accepted = 0, mismatches = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const validator::Verdict v = validator::validate(cat, texts[i], contexts[i]);
    accepted += v.ok ? 1 : 0;
    if (v.ok != replies[i].valid && ++mismatches <= 5) {
      std::fprintf(stderr, "MISMATCH reply %zu (%s): intended %s, got %s\n  reply: %.200s\n  verdict: %.400s\n", i,
                   replies[i].kind.c_str(), replies[i].valid ? "accept" : "reject", v.ok ? "accept" : "reject",
                   replies[i].text.c_str(), validator::to_json(v).c_str());
    }
  }

  std::printf("impl:     C++ dispatchd::validator::validate (single thread)\n");
  std::printf("corpus:   %zu replies, %.2f MB, avg %.0f bytes/reply\n", n, static_cast<double>(bytes) / 1e6,
              static_cast<double>(bytes) / static_cast<double>(n));
  std::printf("verdicts: accepted %zu, rejected %zu (generator intended %zu accepted, %zu rejected)%s\n", accepted,
              n - accepted, intended, n - intended, mismatches ? "" : " ok");
  if (mismatches) {
    std::printf("FAIL: %zu verdicts differ from the generator's intent; no timing reported\n", mismatches);
    return 1;
  }

  std::vector<double> ns(runs);
  for (std::size_t r = 0; r < runs; ++r) {
    std::size_t ok = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < n; ++i) ok += validator::validate(cat, texts[i], contexts[i]).ok ? 1 : 0;
    const auto t1 = std::chrono::steady_clock::now();
    ns[r] = static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
    if (ok != intended) {
      std::printf("FAIL: run %zu accepted %zu, intended %zu\n", r + 1, ok, intended);
      return 1;
    }
  }
  std::vector<double> sorted = ns;
  std::sort(sorted.begin(), sorted.end());
  const double median = runs % 2 ? sorted[runs / 2] : (sorted[runs / 2 - 1] + sorted[runs / 2]) / 2;
  const double per = median / static_cast<double>(n);
  const double rate = 1e9 / per;
  std::printf("runs:     %zu x %zu replies; ns/reply per run:", runs, n);
  for (const double t : ns) std::printf(" %.0f", t / static_cast<double>(n));
  std::printf("\n");
  std::printf("median:   %s replies/s  %.1f ns/reply\n", thousands(rate).c_str(), per);
  std::printf("result replies_per_s=%.0f ns_per_reply=%.1f accepted=%zu rejected=%zu\n", rate, per, intended,
              n - intended);
  return 0;
}
