#include "config/config.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <sstream>
#include <string_view>

#include "common/database_kind.h"
#include "common/strict_json.h"
#include "common/text.h"
#include "common/utf8.h"
#include "config/database_password.h"
#include "store/send_pricing.h"
#include "store/states.h"

namespace dispatchd::config {
namespace {

namespace fs = std::filesystem;
using Value = rapidjson::Value;

constexpr std::size_t k_max_file_bytes = 1024 * 1024;

// One key of an object: its name and what reads its value at a JSON pointer.
struct Key {
  const char* name;
  std::function<void(const Value&, const std::string&)> read;
};

class Reader {
 public:
  explicit Reader(std::string file) : m_file(std::move(file)) {}

  void problem(const std::string& at, const std::string& message) {
    m_problems.push_back(m_file + ": " + at + ": " + message);
  }
  std::vector<std::string>& problems() { return m_problems; }

  // Reads the members of an object; unknown keys are problems.
  void object(const Value& value, const std::string& at, std::initializer_list<Key> keys) {
    if (!value.IsObject()) return problem(at.empty() ? "/" : at, "must be an object");
    for (const auto& member : value.GetObject()) {
      const std::string name(member.name.GetString(), member.name.GetStringLength());
      if (name == "$comment") continue;
      const Key* key = nullptr;
      for (const auto& k : keys) {
        if (name == k.name) key = &k;
      }
      if (!key) {
        std::string known;
        for (const auto& k : keys) known += std::string(known.empty() ? "" : ", ") + k.name;
        problem(at + "/" + name, "unknown key (known here: " + known + ")");
        continue;
      }
      key->read(member.value, at + "/" + name);
    }
  }

  Key string(const char* name, std::string& target) {
    return {name, [this, &target](const Value& v, const std::string& at) {
              if (!v.IsString()) return problem(at, "must be a string");
              target.assign(v.GetString(), v.GetStringLength());
            }};
  }
  Key optional_string(const char* name, std::optional<std::string>& target) {
    return {name, [this, &target](const Value& v, const std::string& at) {
              if (v.IsNull()) return target.reset();
              if (!v.IsString()) return problem(at, "must be a string or null");
              target.emplace(v.GetString(), v.GetStringLength());
            }};
  }
  Key boolean(const char* name, bool& target) {
    return {name, [this, &target](const Value& v, const std::string& at) {
              if (!v.IsBool()) return problem(at, "must be true or false");
              target = v.GetBool();
            }};
  }
  template <typename Int>
  Key integer(const char* name, Int& target, long long min, long long max) {
    return {name, [this, &target, min, max](const Value& v, const std::string& at) {
              if (!v.IsInt64() || v.GetInt64() < min || v.GetInt64() > max) {
                return problem(at, "must be an integer from " + std::to_string(min) + " to " + std::to_string(max));
              }
              target = static_cast<Int>(v.GetInt64());
            }};
  }
  // A price in USD per million tokens: a finite number from 0 to k_max_rate.
  Key rate(const char* name, std::optional<double>& target);
  // An amount in USD: a finite number from 0 to k_max_usd.
  Key usd(const char* name, std::optional<double>& target);
  // One of `names`, each the name of the enum value at its index.
  template <typename Enum, std::size_t N>
  Key one_of(const char* name, Enum& target, const std::array<const char*, N>& names) {
    return {name, [this, &target, names](const Value& v, const std::string& at) {
              for (std::size_t i = 0; i < N; ++i) {
                if (v.IsString() && v.GetString() == std::string_view(names[i])) {
                  target = static_cast<Enum>(i);
                  return;
                }
              }
              std::string known;
              for (const char* n : names) known += std::string(known.empty() ? "\"" : " or \"") + n + "\"";
              problem(at, "must be " + known);
            }};
  }
  Key nested(const char* name, std::function<void(const Value&, const std::string&)> read) { return {name, read}; }

 private:
  std::string m_file;
  std::vector<std::string> m_problems;
};

// No model costs more than this per million tokens: a larger rate is a typo (a price per
// token or per thousand written in the wrong place), not a price.
constexpr double k_max_rate = 100000;

Key Reader::rate(const char* name, std::optional<double>& target) {
  return {name, [this, &target](const Value& v, const std::string& at) {
            if (!v.IsNumber() || !std::isfinite(v.GetDouble()) || v.GetDouble() < 0 || v.GetDouble() > k_max_rate)
              return problem(at, "must be a number from 0 to 100000 (USD per million tokens)");
            target = v.GetDouble();
          }};
}

// No daily budget is this large: a larger amount is a typo (cents for dollars), not a budget.
constexpr double k_max_usd = 1'000'000;

Key Reader::usd(const char* name, std::optional<double>& target) {
  return {name, [this, &target](const Value& v, const std::string& at) {
            if (!v.IsNumber() || !std::isfinite(v.GetDouble()) || v.GetDouble() < 0 || v.GetDouble() > k_max_usd)
              return problem(at, "must be a number from 0 to 1000000 (USD)");
            target = v.GetDouble();
          }};
}

// llm.budget: {"daily_usd", "conversation_daily_usd", "when_spent", "unknown_cost"}; the
// names of when_spent and unknown_cost in the order of their enums.
void read_budget(Reader& r, const Value& v, const std::string& at, Budget& budget) {
  r.object(v, at,
           {r.usd("daily_usd", budget.daily_usd), r.usd("conversation_daily_usd", budget.conversation_daily_usd),
            r.one_of("when_spent", budget.when_spent, std::array{"wait", "escalate"}),
            r.one_of("unknown_cost", budget.unknown_cost, std::array{"stop", "allow"})});
}

// llm.prices: model name -> {"input", "output", "cached_input", "cache_write"}, USD per
// million tokens; input and output required.
void read_prices(Reader& r, const Value& v, const std::string& at, std::map<std::string, ModelPrice>& prices) {
  if (!v.IsObject())
    return r.problem(at, R"(must be an object: model name -> {"input": N, "output": N} in USD per million tokens)");
  for (const auto& member : v.GetObject()) {
    const std::string model(member.name.GetString(), member.name.GetStringLength());
    if (model == "$comment") continue;
    const std::string here = at + "/" + text::pointer_token(model);
    if (model.empty()) {
      r.problem(here, "a model name must not be empty");
      continue;
    }
    std::optional<double> input, output, cached_input, cache_write;
    const std::size_t before = r.problems().size();
    r.object(member.value, here,
             {r.rate("input", input), r.rate("output", output), r.rate("cached_input", cached_input),
              r.rate("cache_write", cache_write)});
    // Required: reported when absent (a bad value was reported as such).
    const bool object = member.value.IsObject();
    if (object && !member.value.HasMember("input"))
      r.problem(here + "/input", "is required (USD per million input tokens)");
    if (object && !member.value.HasMember("output"))
      r.problem(here + "/output", "is required (USD per million output tokens)");
    if (r.problems().size() == before) prices[model] = {*input, *output, cached_input, cache_write};
  }
}

// No WhatsApp message costs this much: a larger price is a typo (cents for dollars).
constexpr double k_max_message_price = 100;

// One category -> price object of connectors.whatsapp.prices (its "default" or a market).
void read_category_prices(Reader& r, const Value& v, const std::string& at,
                          std::map<store::PricingCategory, double>& out) {
  if (!v.IsObject()) return r.problem(at, "must be an object: category -> price of one message");
  for (const auto& member : v.GetObject()) {
    const std::string name(member.name.GetString(), member.name.GetStringLength());
    if (name == "$comment") continue;
    const std::string here = at + "/" + text::pointer_token(name);
    const auto category = store::from_sql<store::PricingCategory>(name);
    if (!category) {
      std::string names;
      for (const auto& [_, known] : store::SqlNames<store::PricingCategory>::table)
        names += (names.empty() ? "" : ", ") + std::string(known);
      r.problem(here, "unknown pricing category; known: " + names);
      continue;
    }
    const Value& price = member.value;
    if (!price.IsNumber() || !std::isfinite(price.GetDouble()) || price.GetDouble() < 0 ||
        price.GetDouble() > k_max_message_price) {
      r.problem(here, "must be a number from 0 to 100 (the price of one message)");
      continue;
    }
    out[*category] = price.GetDouble();
  }
}

// connectors.whatsapp.prices: {"currency": "USD", "default": {category: price},
// "markets": {"<calling code>": {category: price}}}.
void read_message_prices(Reader& r, const Value& v, const std::string& at, store::PriceTable& prices) {
  bool has_currency = false;
  r.object(v, at,
           {{"currency",
             [&](const Value& c, const std::string& cat) {
               has_currency = true;
               const std::string_view code = c.IsString() ? std::string_view(c.GetString(), c.GetStringLength()) : "";
               if (code.size() != 3 || !std::ranges::all_of(code, [](char ch) { return ch >= 'A' && ch <= 'Z'; }))
                 return r.problem(cat, "must be a currency code of three capital letters, e.g. \"USD\"");
               prices.currency = code;
             }},
            r.nested("default",
                     [&](const Value& d, const std::string& dat) { read_category_prices(r, d, dat, prices.base); }),
            r.nested("markets", [&](const Value& m, const std::string& mat) {
              if (!m.IsObject()) return r.problem(mat, "must be an object: country calling code -> prices");
              for (const auto& market : m.GetObject()) {
                const std::string code(market.name.GetString(), market.name.GetStringLength());
                if (code == "$comment") continue;
                const std::string here = mat + "/" + text::pointer_token(code);
                if (code.empty() || code.size() > 6 ||
                    !std::ranges::all_of(code, [](char ch) { return ch >= '0' && ch <= '9'; })) {
                  r.problem(here, "must be a country calling code: 1 to 6 digits, without \"+\"");
                  continue;
                }
                read_category_prices(r, market.value, here, prices.markets[code]);
              }
            })});
  if (v.IsObject() && !has_currency) r.problem(at + "/currency", "is required with prices (e.g. \"USD\")");
}

bool is_url(const std::string& url) { return url.starts_with("http://") || url.starts_with("https://"); }

// An http(s) URL with a host, and nothing a request line or a log line would mangle.
bool is_full_url(const std::string& url) {
  if (!is_url(url)) return false;
  const std::string_view rest = std::string_view(url).substr(url.find("://") + 3);
  if (rest.empty() || rest.front() == '/' || rest.front() == ':') return false;
  return std::ranges::none_of(url, [](char c) { return static_cast<unsigned char>(c) <= ' ' || c == 0x7f; });
}

// A JSON object of strings: name -> value.
void read_string_map(Reader& r, const Value& v, const std::string& at, std::map<std::string, std::string>& out) {
  if (!v.IsObject()) return r.problem(at, "must be an object of strings: NAME -> value");
  for (const auto& member : v.GetObject()) {
    const std::string name(member.name.GetString(), member.name.GetStringLength());
    if (name == "$comment") continue;
    const std::string here = at + "/" + text::pointer_token(name);
    if (name.empty() || name.find('=') != std::string::npos)
      r.problem(here, "an environment variable's name must not be empty or hold '='");
    else if (!member.value.IsString())
      r.problem(here, "must be a string");
    else
      out[name] = std::string(member.value.GetString(), member.value.GetStringLength());
  }
}

bool is_server_name(std::string_view name) {
  return !name.empty() && name.size() <= 64 && std::ranges::all_of(name, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

// llm.fallbacks: [{provider, base_url, model, api_key_env, timeout_ms?, max_concurrency?}, ...].
void read_fallbacks(Reader& r, const Value& v, const std::string& at, std::vector<Fallback>& fallbacks) {
  if (!v.IsArray()) return r.problem(at, R"(must be an array of {"provider", "base_url", "model", "api_key_env"})");
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    const std::string here = at + "/" + std::to_string(i);
    Fallback f;
    r.object(v[i], here,
             {r.string("provider", f.provider), r.string("base_url", f.base_url), r.string("model", f.model),
              r.string("api_key_env", f.api_key_env), r.integer("timeout_ms", f.timeout_ms, 100, 600000),
              r.integer("max_concurrency", f.max_concurrency, 1, 4096)});
    if (f.provider != "openai" && f.provider != "gemini" && f.provider != "anthropic")
      r.problem(here + "/provider", "must be \"openai\", \"gemini\" or \"anthropic\"");
    if (!is_url(f.base_url)) r.problem(here + "/base_url", "must be an http:// or https:// URL");
    if (f.model.empty()) r.problem(here + "/model", "is required");
    if (f.api_key_env.empty()) r.problem(here + "/api_key_env", "is required (the name of the key's variable)");
    fallbacks.push_back(std::move(f));
  }
}

// mcp.servers: name -> {command, env, env_from, cwd | url, token_env; the limits}.
void read_mcp_servers(Reader& r, const Value& v, const std::string& at, std::map<std::string, McpServer>& servers) {
  if (!v.IsObject()) return r.problem(at, "must be an object: server name -> {\"command\": [...]} or {\"url\": ...}");
  for (const auto& member : v.GetObject()) {
    const std::string name(member.name.GetString(), member.name.GetStringLength());
    if (name == "$comment") continue;
    const std::string here = at + "/" + text::pointer_token(name);
    if (!is_server_name(name)) {
      r.problem(here, "a server's name is letters, digits, '_' or '-' (at most 64)");
      continue;
    }
    McpServer server;
    const std::size_t before = r.problems().size();
    r.object(member.value, here,
             {r.nested("command",
                       [&](const Value& c, const std::string& cat) {
                         if (!c.IsArray() || c.Empty())
                           return r.problem(cat, "must be a non-empty array of strings (argv)");
                         for (const auto& arg : c.GetArray()) {
                           if (!arg.IsString()) return r.problem(cat, "must be a non-empty array of strings (argv)");
                           server.command.emplace_back(arg.GetString(), arg.GetStringLength());
                         }
                         if (server.command.front().empty()) r.problem(cat + "/0", "must name the program");
                       }),
              r.nested("env", [&](const Value& e, const std::string& eat) { read_string_map(r, e, eat, server.env); }),
              r.nested("env_from",
                       [&](const Value& e, const std::string& eat) { read_string_map(r, e, eat, server.env_from); }),
              r.string("cwd", server.cwd), r.string("url", server.url), r.string("token_env", server.token_env),
              r.integer("startup_timeout_s", server.startup_timeout_s, 1, 600),
              r.integer("call_timeout_s", server.call_timeout_s, 1, 600),
              r.integer("max_result_bytes", server.max_result_bytes, 256, 4 * 1024 * 1024),
              r.integer("max_in_flight", server.max_in_flight, 1, 256)});
    if (r.problems().size() != before) continue;
    const bool stdio = !server.command.empty();
    const bool http = !server.url.empty();
    if (stdio == http) {
      r.problem(here, "needs exactly one of \"command\" (a program over stdio) and \"url\" (Streamable HTTP)");
      continue;
    }
    if (http && !is_full_url(server.url))
      r.problem(here + "/url", "must be an http:// or https:// URL with a host, without spaces");
    if (http && (!server.env.empty() || !server.env_from.empty() || !server.cwd.empty()))
      r.problem(here, "env, env_from and cwd are for a \"command\"; a \"url\" server is not started by dispatchd");
    if (stdio && !server.token_env.empty())
      r.problem(here + "/token_env", "is for a \"url\" server; give a command's secrets with env_from");
    for (const auto& [variable, _] : server.env_from) {
      if (server.env.contains(variable))
        r.problem(here + "/env_from/" + text::pointer_token(variable), "is also in env: one value per variable");
    }
    servers[name] = std::move(server);
  }
}

constexpr std::size_t k_max_reply_points = 4096;  // WhatsApp's limit for a text body

// One value of connectors.whatsapp.message_types: "model", "escalate", "ignore" or
// {"reply": "text"}; nullopt after reporting what is wrong.
std::optional<TypeHandling> read_handling(Reader& r, const Value& v, const std::string& at) {
  static const std::string k_expected = R"(must be "model", "escalate", "ignore" or {"reply": "the text to send"})";
  if (v.IsString()) {
    const std::string_view name(v.GetString(), v.GetStringLength());
    if (name == "model") return TypeHandling{TypeAction::model, ""};
    if (name == "escalate") return TypeHandling{TypeAction::escalate, ""};
    if (name == "ignore") return TypeHandling{TypeAction::ignore, ""};
    r.problem(at, name == "reply" ? std::string(R"("reply" needs its text: {"reply": "the text to send"})")
                                  : k_expected + ", not " + text::quote(name));
    return std::nullopt;
  }
  if (!v.IsObject()) {
    r.problem(at, k_expected);
    return std::nullopt;
  }
  std::optional<std::string> reply;
  const std::size_t before = r.problems().size();
  r.object(v, at, {r.optional_string("reply", reply)});
  if (r.problems().size() != before) return std::nullopt;
  if (!reply) {
    r.problem(at, R"(needs "reply": the text to send)");
  } else if (!utf8::is_valid(*reply)) {
    r.problem(at + "/reply", "must be valid UTF-8");
  } else if (reply->find_first_not_of(" \t\r\n") == std::string::npos) {
    r.problem(at + "/reply", "must not be blank");
  } else if (utf8::code_points(*reply) > k_max_reply_points) {
    r.problem(at + "/reply", "must be at most 4096 characters (WhatsApp's limit for a text)");
  } else {
    return TypeHandling{TypeAction::reply, std::move(*reply)};
  }
  return std::nullopt;
}

// connectors.whatsapp.message_types: the types given replace their defaults; a type this
// version does not list is a problem (a typo never silently keeps a default).
// staff.response_target_minutes: {"default": minutes, "<reason>": minutes, ...}.
void read_response_targets(Reader& r, const Value& v, const std::string& at, Staff& staff) {
  if (!v.IsObject()) return r.problem(at, "must be an object: escalation reason (or \"default\") -> minutes");
  for (const auto& member : v.GetObject()) {
    const std::string name(member.name.GetString(), member.name.GetStringLength());
    if (name == "$comment") continue;
    const std::string here = at + "/" + text::pointer_token(name);
    if (name != "default" && !store::from_sql<store::EscalationReason>(name)) {
      std::string names;
      for (const auto& [_, known] : store::SqlNames<store::EscalationReason>::table)
        names += (names.empty() ? "" : ", ") + std::string(known);
      r.problem(here, "unknown escalation reason; known: default, " + names);
      continue;
    }
    int minutes = 0;
    r.integer(name.c_str(), minutes, 1, 7 * 24 * 60).read(member.value, here);
    if (minutes < 1) continue;
    if (name == "default")
      staff.response_target_default_minutes = minutes;
    else
      staff.response_target_minutes[name] = minutes;
  }
}

void read_message_types(Reader& r, const Value& v, const std::string& at, std::map<std::string, TypeHandling>& types) {
  if (!v.IsObject()) return r.problem(at, "must be an object: message type -> handling");
  for (const auto& member : v.GetObject()) {
    const std::string type(member.name.GetString(), member.name.GetStringLength());
    if (type == "$comment") continue;
    const std::string here = at + "/" + text::pointer_token(type);
    const auto known = types.find(type);
    if (known == types.end()) {
      std::string names, near;
      for (const auto& [name, _] : types) {
        names += (names.empty() ? "" : ", ") + name;
        if (near.empty() && text::edit_distance(type, name, 2) <= 2) near = name;
      }
      r.problem(here, "unknown message type" + (near.empty() ? "" : " (did you mean \"" + near + "\"?)") +
                          "; known: " + names);
      continue;
    }
    if (auto handling = read_handling(r, member.value, here)) known->second = std::move(*handling);
  }
}

std::string resolve(const std::string& base_dir, const std::string& path) {
  if (path.empty() || fs::path(path).is_absolute()) return path;
  return (fs::path(base_dir) / path).lexically_normal().string();
}

void check(Config& c, Reader& r) {
  if (c.catalog.empty()) r.problem("/catalog", "is required (the catalog file)");
  if (c.agent.burst_quiet_ms > 0 && c.agent.burst_max_ms < c.agent.burst_quiet_ms)
    r.problem("/agent/burst_max_ms", "must be at least agent.burst_quiet_ms (" +
                                         std::to_string(c.agent.burst_quiet_ms) + ") when bursts are on");
  if (c.database.empty()) r.problem("/database", "must not be empty");
  const bool postgresql = database_kind(c.database) == DatabaseKind::postgresql;
  // The message never repeats the URI: it holds the secret.
  if (postgresql && uri_has_password(c.database))
    r.problem("/database",
              "holds a password: the configuration file may be logged or shown, so the password goes in the "
              "systemd credential database_password or the variable named by database_password_env");
  if (!postgresql && !c.database_password_env.empty())
    r.problem("/database_password_env", "is for a postgresql:// database; a SQLite file needs no password");
  // listen: host:port
  const auto colon = c.http.listen.rfind(':');
  unsigned port = 0;
  const char* const end = c.http.listen.data() + c.http.listen.size();
  // The whole rest is the port: "127.0.0.1:8,80" is not port 8 (found by fuzz/config.cpp).
  const auto [digits_end, ec] = colon == std::string::npos
                                    ? std::from_chars_result{end, std::errc::invalid_argument}
                                    : std::from_chars(c.http.listen.data() + colon + 1, end, port);
  if (colon == std::string::npos || colon == 0 || ec != std::errc() || digits_end != end || port > 65535) {
    r.problem("/http/listen", "must be HOST:PORT, e.g. \"127.0.0.1:8080\"");
  } else {
    c.http.host = c.http.listen.substr(0, colon);
    c.http.port = static_cast<std::uint16_t>(port);
  }
  if (c.llm.provider != "openai" && c.llm.provider != "gemini" && c.llm.provider != "anthropic") {
    r.problem("/llm/provider", "must be \"openai\", \"gemini\" or \"anthropic\"");
  }
  if (!is_url(c.llm.base_url)) r.problem("/llm/base_url", "must be an http:// or https:// URL");
  if (c.llm.model.empty()) r.problem("/llm/model", "is required");
  if (c.llm.api_key_env.empty()) r.problem("/llm/api_key_env", "is required (the name of the key's variable)");
  if (c.llm.breaker.probe_max_ms < c.llm.breaker.probe_min_ms)
    r.problem("/llm/breaker/probe_max_ms",
              "must be at least probe_min_ms (" + std::to_string(c.llm.breaker.probe_min_ms) + ")");
  if (c.llm.prompt_cache_key && c.llm.provider != "openai")
    r.problem("/llm/prompt_cache_key", "is for provider openai (gemini and anthropic have no such field)");
  if (!c.llm.prices.empty() && !c.llm.model.empty() && !c.llm.prices.contains(c.llm.model))
    r.problem("/llm/prices",
              "has no price for llm.model " + text::quote(c.llm.model) + " (its attempts would have no known cost)");
  if (c.llm.budget.any() && !c.llm.model.empty() && !c.llm.prices.contains(c.llm.model))
    r.problem("/llm/budget", "needs a price for llm.model " + text::quote(c.llm.model) +
                                 " in llm.prices (a budget counts the attempts' costs)");
  if (c.whatsapp.enabled) {
    if (!is_url(c.whatsapp.graph_base_url)) r.problem("/connectors/whatsapp/graph_base_url", "must be an http(s) URL");
    const std::pair<const char*, const std::string*> required[] = {{"phone_number_id", &c.whatsapp.phone_number_id},
                                                                   {"access_token_env", &c.whatsapp.access_token_env},
                                                                   {"app_secret_env", &c.whatsapp.app_secret_env},
                                                                   {"verify_token_env", &c.whatsapp.verify_token_env}};
    for (const auto& [name, value] : required) {
      if (value->empty())
        r.problem(std::string("/connectors/whatsapp/") + name, "is required when whatsapp is enabled");
    }
    if (!std::ranges::all_of(c.whatsapp.waba_id, [](char ch) { return ch >= '0' && ch <= '9'; }) ||
        c.whatsapp.waba_id.size() > 32)
      r.problem("/connectors/whatsapp/waba_id", "must be the business account's id: digits");
  }
  if (c.gmail.enabled) {
    if (!is_url(c.gmail.api_base_url)) r.problem("/connectors/gmail/api_base_url", "must be an http(s) URL");
    if (!is_url(c.gmail.token_url)) r.problem("/connectors/gmail/token_url", "must be an http(s) URL");
    const std::pair<const char*, const std::string*> required[] = {{"client_id_env", &c.gmail.client_id_env},
                                                                   {"client_secret_env", &c.gmail.client_secret_env},
                                                                   {"refresh_token_env", &c.gmail.refresh_token_env}};
    for (const auto& [name, value] : required) {
      if (value->empty()) r.problem(std::string("/connectors/gmail/") + name, "is required when gmail is enabled");
    }
  }
  if (c.holding_reply && c.holding_reply->empty()) r.problem("/escalation/holding_reply", "must not be empty");
  if (c.notify_url && !is_full_url(*c.notify_url))
    r.problem("/escalation/notify_url", "must be an http:// or https:// URL with a host, without spaces");
  if (!c.staff_public_url.empty() && !is_full_url(c.staff_public_url))
    r.problem("/staff/public_url", "must be an http:// or https:// URL with a host, without spaces");
}

}  // namespace

const std::map<std::string, TypeHandling>& default_whatsapp_types() {
  // The names of whatsapp::MessageKind (connectors/whatsapp/webhook.h); a daemon test keeps
  // the two lists equal.
  static const std::map<std::string, TypeHandling> types = [] {
    std::map<std::string, TypeHandling> out;
    for (const char* type : {"text", "interactive", "button", "location"}) out[type] = {TypeAction::model, ""};
    for (const char* type : {"image", "video", "audio", "document", "contacts", "order", "unsupported", "unknown"})
      out[type] = {TypeAction::escalate, ""};
    for (const char* type : {"sticker", "reaction", "system"}) out[type] = {TypeAction::ignore, ""};
    return out;
  }();
  return types;
}

const std::map<std::string, TypeHandling>& default_gmail_types() {
  // The types the Gmail channel gives (connectors/gmail/channel.h): mail for a person goes
  // to the model; what loop prevention recognises is recorded and ignored; what cannot be
  // decoded is escalated with its raw bytes stored.
  static const std::map<std::string, TypeHandling> types = [] {
    std::map<std::string, TypeHandling> out;
    out["email"] = {TypeAction::model, ""};
    for (const char* type : {"own", "auto_reply", "list", "bounce", "no_reply"}) out[type] = {TypeAction::ignore, ""};
    out["undecodable"] = {TypeAction::escalate, ""};
    return out;
  }();
  return types;
}

std::string default_migrations_dir() {
  if (fs::is_directory(DISPATCHD_INSTALLED_MIGRATIONS)) return DISPATCHD_INSTALLED_MIGRATIONS;
  return DISPATCHD_SOURCE_MIGRATIONS;
}

std::expected<Config, std::vector<std::string>> parse(const std::string& text, const std::string& path) {
  Reader r(path);
  // Written by the operator, but read as strictly as anything else (a duplicate key is a
  // problem, not a silent choice of one value), with comments and trailing commas allowed.
  // UTF-8 is checked where it matters, in the text dispatchd sends (a fixed reply), so that
  // the problem names that value.
  auto parsed = json::parse_strict(text, {.input_utf8_checked = true, .allow_comments = true}, true);
  if (!parsed) {
    r.problem("offset " + std::to_string(parsed.error().offset), parsed.error().message);
    return std::unexpected(std::move(r.problems()));
  }
  const rapidjson::Document& doc = parsed->document;
  Config c;
  c.path = path;
  auto& llm = c.llm;
  auto& wa = c.whatsapp;
  std::string listener_thread = "auto";  // http.listener_thread, read into c.http below
  auto& gm = c.gmail;
  r.object(
      doc, "",
      {r.string("database", c.database), r.string("database_password_env", c.database_password_env),
       r.integer("database_commit_interval_ms", c.database_commit_interval_ms, 0, 100), r.string("catalog", c.catalog),
       r.optional_string("system_prompt_file", c.system_prompt_file),
       r.nested("migrations",
                [&](const Value& v, const std::string& at) {
                  r.object(v, at, {r.string("dir", c.migrations_dir), r.boolean("apply_on_start", c.migrate_on_start)});
                }),
       r.nested("http",
                [&](const Value& v, const std::string& at) {
                  r.object(v, at,
                           {r.string("listen", c.http.listen), r.string("listener_thread", listener_thread),
                            r.integer("max_body_bytes", c.http.max_body_bytes, 1024, 64 * 1024 * 1024),
                            r.integer("max_connections_per_address", c.http.max_connections_per_address, 1, 512)});
                }),
       r.nested("llm",
                [&](const Value& v, const std::string& at) {
                  r.object(
                      v, at,
                      {r.string("provider", llm.provider), r.string("base_url", llm.base_url),
                       r.string("model", llm.model), r.string("api_key_env", llm.api_key_env),
                       r.integer("timeout_ms", llm.timeout_ms, 100, 600000),
                       r.integer("connect_timeout_ms", llm.connect_timeout_ms, 100, 60000),
                       r.integer("max_retries", llm.max_retries, 0, 5),
                       r.integer("max_concurrency", llm.max_concurrency, 1, 4096),
                       r.integer("max_tool_steps", llm.max_tool_steps, 0, 16),
                       r.integer("history_messages", llm.history_messages, 0, 100),
                       r.integer("provider_deadline_s", llm.provider_deadline_s, 1, 7 * 24 * 3600),
                       r.integer("max_output_tokens", llm.max_output_tokens, 16, 65536),
                       r.boolean("prompt_cache_key", llm.prompt_cache_key),
                       r.nested("prices",
                                [&](const Value& p, const std::string& pat) { read_prices(r, p, pat, llm.prices); }),
                       r.nested("budget",
                                [&](const Value& b, const std::string& bat) { read_budget(r, b, bat, llm.budget); }),
                       r.nested("fallbacks", [&](const Value& f,
                                                 const std::string& fat) { read_fallbacks(r, f, fat, llm.fallbacks); }),
                       r.nested("breaker", [&](const Value& b, const std::string& bat) {
                         r.object(b, bat,
                                  {r.integer("failures", llm.breaker.failures, 1, 1000),
                                   r.integer("probe_min_ms", llm.breaker.probe_min_ms, 100, 600'000),
                                   r.integer("probe_max_ms", llm.breaker.probe_max_ms, 100, 600'000)});
                       })});
                }),
       r.nested("agent",
                [&](const Value& v, const std::string& at) {
                  r.object(v, at,
                           {r.integer("burst_quiet_ms", c.agent.burst_quiet_ms, 0, 60'000),
                            r.integer("burst_max_ms", c.agent.burst_max_ms, 0, 600'000),
                            r.nested("limits", [&](const Value& l, const std::string& lat) {
                              auto& a = c.agent;
                              r.object(l, lat,
                                       {r.boolean("enabled", a.limits_enabled),
                                        r.integer("replies_per_10_minutes", a.replies_per_10_minutes, 0, 10'000),
                                        r.integer("replies_per_day", a.replies_per_day, 0, 100'000),
                                        r.integer("repeats", a.repeats, 0, 100),
                                        r.integer("bot_cadence_turns", a.bot_cadence_turns, 0, 100),
                                        r.integer("bot_cadence_ms", a.bot_cadence_ms, 100, 60'000)});
                            })});
                }),
       r.nested("connectors",
                [&](const Value& v, const std::string& at) {
                  r.object(
                      v, at,
                      {r.nested("whatsapp",
                                [&](const Value& w, const std::string& wat) {
                                  r.object(
                                      w, wat,
                                      {r.boolean("enabled", wa.enabled), r.string("graph_base_url", wa.graph_base_url),
                                       r.string("phone_number_id", wa.phone_number_id),
                                       r.string("access_token_env", wa.access_token_env),
                                       r.string("app_secret_env", wa.app_secret_env),
                                       r.string("verify_token_env", wa.verify_token_env),
                                       r.boolean("typing_indicator", wa.typing_indicator),
                                       r.string("waba_id", wa.waba_id),
                                       r.integer("template_refresh_minutes", wa.template_refresh_minutes, 1, 10'080),
                                       r.nested("prices",
                                                [&](const Value& p, const std::string& pat) {
                                                  read_message_prices(r, p, pat, wa.prices);
                                                }),
                                       r.nested("message_types", [&](const Value& t, const std::string& tat) {
                                         read_message_types(r, t, tat, wa.message_types);
                                       })});
                                }),
                       r.nested("gmail", [&](const Value& g, const std::string& gat) {
                         r.object(g, gat,
                                  {r.boolean("enabled", gm.enabled), r.string("api_base_url", gm.api_base_url),
                                   r.string("token_url", gm.token_url), r.string("client_id_env", gm.client_id_env),
                                   r.string("client_secret_env", gm.client_secret_env),
                                   r.string("refresh_token_env", gm.refresh_token_env),
                                   r.integer("poll_interval_s", gm.poll_interval_s, 1, 86400),
                                   r.string("label", gm.label), r.integer("backfill_days", gm.backfill_days, 0, 3650),
                                   r.string("handled_label", gm.handled_label),
                                   r.integer("unknown_recheck_s", gm.unknown_recheck_s, 1, 3600),
                                   r.nested("message_types", [&](const Value& t, const std::string& tat) {
                                     read_message_types(r, t, tat, gm.message_types);
                                   })});
                       })});
                }),
       r.nested("retention",
                [&](const Value& v, const std::string& at) {
                  r.object(v, at, {r.integer("days", c.retention_days, 1, 36500)});
                }),
       r.nested("escalation",
                [&](const Value& v, const std::string& at) {
                  r.object(v, at,
                           {r.optional_string("holding_reply", c.holding_reply),
                            r.optional_string("notify_url", c.notify_url),
                            r.integer("notify_timeout_ms", c.notify_timeout_ms, 100, 60000)});
                }),
       r.nested("staff",
                [&](const Value& v, const std::string& at) {
                  r.object(v, at,
                           {r.string("token_env", c.staff_token_env), r.string("public_url", c.staff_public_url),
                            r.boolean("secure_cookies", c.staff.secure_cookies),
                            r.integer("session_idle_minutes", c.staff.session_idle_minutes, 1, 7 * 24 * 60),
                            r.integer("session_max_hours", c.staff.session_max_hours, 1, 30 * 24),
                            r.integer("claim_idle_minutes", c.staff.claim_idle_minutes, 1, 7 * 24 * 60),
                            r.nested("response_target_minutes", [&](const Value& t, const std::string& tat) {
                              read_response_targets(r, t, tat, c.staff);
                            })});
                }),
       r.nested("instance",
                [&](const Value& v, const std::string& at) { r.object(v, at, {r.string("id", c.instance.id)}); }),
       r.nested("mcp",
                [&](const Value& v, const std::string& at) {
                  r.object(v, at, {r.nested("servers", [&](const Value& s, const std::string& sat) {
                             read_mcp_servers(r, s, sat, c.mcp_servers);
                           })});
                }),
       r.nested("cluster", [&](const Value& v, const std::string& at) {
         r.object(v, at, {r.integer("dead_after_s", c.cluster.dead_after_s, 3, 3600)});
       })});
  if (listener_thread == "own") {
    c.http.listener_thread = ListenerThread::own;
  } else if (listener_thread == "loop") {
    c.http.listener_thread = ListenerThread::loop;
  } else if (listener_thread != "auto") {
    r.problem("/http/listener_thread", "must be \"auto\", \"own\" or \"loop\"");
  }
  check(c, r);
  if (!r.problems().empty()) return std::unexpected(std::move(r.problems()));
  const std::string base = fs::path(path).parent_path().string();
  if (database_kind(c.database) == DatabaseKind::sqlite) c.database = resolve(base, c.database);
  c.catalog = resolve(base, c.catalog);
  if (c.system_prompt_file) c.system_prompt_file = resolve(base, *c.system_prompt_file);
  c.migrations_dir = c.migrations_dir.empty() ? default_migrations_dir() : resolve(base, c.migrations_dir);
  for (auto& [_, server] : c.mcp_servers) server.cwd = resolve(base, server.cwd);
  if (c.staff_public_url.empty()) c.staff_public_url = "http://" + c.http.listen;
  while (c.staff_public_url.ends_with('/')) c.staff_public_url.pop_back();
  return c;
}

std::expected<Config, std::vector<std::string>> load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected(std::vector<std::string>{path + ": cannot open the file"});
  std::string text(k_max_file_bytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > k_max_file_bytes) return std::unexpected(std::vector<std::string>{path + ": larger than 1 MiB"});
  return parse(text, path);
}

}  // namespace dispatchd::config
