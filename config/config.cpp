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

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "common/database_kind.h"
#include "common/settings_reader.h"
#include "common/strict_json.h"
#include "common/text.h"
#include "common/utf8.h"
#include "config/database_password.h"
#include "store/states.h"

namespace dispatchd::config {
namespace {

namespace fs = std::filesystem;
using Value = rapidjson::Value;
using Reader = json::SettingsReader;
using Key = Reader::Key;

constexpr std::size_t k_max_file_bytes = 1024 * 1024;

// connectors: channel name -> its section, kept as written for the channel to read
// (connectors/registry.h): config/ knows no channel.
void read_connectors(Reader& r, const Value& v, const std::string& at, std::map<std::string, ChannelSection>& out) {
  if (!v.IsObject()) return r.problem(at, "must be an object: channel name -> its settings");
  for (const auto& member : v.GetObject()) {
    const std::string name(member.name.GetString(), member.name.GetStringLength());
    if (name == "$comment") continue;
    const std::string here = at + "/" + text::pointer_token(name);
    // Any value: the registry names a channel that does not exist, the channel a section
    // that is not an object.
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    member.value.Accept(writer);
    out[name] = ChannelSection{std::string(buffer.GetString(), buffer.GetSize()), here};
  }
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

// An http(s) URL with a host, and nothing a request line or a log line would mangle.
bool is_full_url(const std::string& url) {
  if (!Reader::is_url(url)) return false;
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
    if (!Reader::is_url(f.base_url)) r.problem(here + "/base_url", "must be an http:// or https:// URL");
    if (f.model.empty()) r.problem(here + "/model", "is required");
    if (f.api_key_env.empty()) r.problem(here + "/api_key_env", "is required (the name of the key's variable)");
    fallbacks.push_back(std::move(f));
  }
}

// media.transcription: {base_url, model, api_key_env, timeout_ms?, attempts?}.
void read_transcription(Reader& r, const Value& v, const std::string& at, Transcription& t) {
  const std::size_t before = r.problems().size();
  r.object(v, at,
           {r.string("base_url", t.base_url), r.string("model", t.model), r.string("api_key_env", t.api_key_env),
            r.integer("timeout_ms", t.timeout_ms, 1000, 600'000), r.integer("attempts", t.attempts, 1, 20)});
  if (r.problems().size() != before || !v.IsObject()) return;
  if (!is_full_url(t.base_url))
    r.problem(at + "/base_url", "must be an http:// or https:// URL with a host, without spaces");
  if (t.model.empty()) r.problem(at + "/model", "is required (e.g. \"whisper-1\")");
  if (t.api_key_env.empty()) r.problem(at + "/api_key_env", "is required (the name of the key's variable)");
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
  if (!Reader::is_url(c.llm.base_url)) r.problem("/llm/base_url", "must be an http:// or https:// URL");
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
  if (c.holding_reply && c.holding_reply->empty()) r.problem("/escalation/holding_reply", "must not be empty");
  if (c.notify_url && !is_full_url(*c.notify_url))
    r.problem("/escalation/notify_url", "must be an http:// or https:// URL with a host, without spaces");
  if (!c.staff_public_url.empty() && !is_full_url(c.staff_public_url))
    r.problem("/staff/public_url", "must be an http:// or https:// URL with a host, without spaces");
}

}  // namespace

std::string default_migrations_dir() {
  if (fs::is_directory(DISPATCHD_INSTALLED_MIGRATIONS)) return DISPATCHD_INSTALLED_MIGRATIONS;
  return DISPATCHD_SOURCE_MIGRATIONS;
}

std::expected<Config, std::vector<std::string>> parse(const std::string& text, const std::string& path,
                                                      const SectionCheck& sections) {
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
  std::string listener_thread = "auto";  // http.listener_thread, read into c.http below
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
       r.nested("connectors", [&](const Value& v, const std::string& at) { read_connectors(r, v, at, c.connectors); }),
       r.nested("media",
                [&](const Value& v, const std::string& at) {
                  auto& m = c.media;
                  constexpr long long k_kib = 1024;
                  constexpr long long k_gib = 1024 * 1024 * 1024;
                  r.object(v, at,
                           {r.boolean("enabled", m.enabled),
                            r.nested("max_bytes",
                                     [&](const Value& b, const std::string& bat) {
                                       r.object(b, bat,
                                                {r.integer("image", m.max_image_bytes, k_kib, k_gib),
                                                 r.integer("audio", m.max_audio_bytes, k_kib, k_gib),
                                                 r.integer("video", m.max_video_bytes, k_kib, k_gib),
                                                 r.integer("document", m.max_document_bytes, k_kib, k_gib),
                                                 r.integer("sticker", m.max_sticker_bytes, k_kib, k_gib)});
                                     }),
                            r.integer("max_total_mib", m.max_total_mib, 1, 1024 * 1024),
                            r.integer("retention_days", m.retention_days, 1, 36500),
                            r.integer("fetch_attempts", m.fetch_attempts, 1, 20),
                            r.integer("fetch_timeout_ms", m.fetch_timeout_ms, 1000, 3'600'000),
                            r.integer("wait_s", m.wait_s, 0, 3600),
                            r.nested("transcription", [&](const Value& t, const std::string& tat) {
                              read_transcription(r, t, tat, m.transcription.emplace());
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
  if (sections) {
    for (auto& problem : sections(c)) r.problems().push_back(std::move(problem));
  }
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

std::expected<Config, std::vector<std::string>> load(const std::string& path, const SectionCheck& sections) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected(std::vector<std::string>{path + ": cannot open the file"});
  std::string text(k_max_file_bytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > k_max_file_bytes) return std::unexpected(std::vector<std::string>{path + ": larger than 1 MiB"});
  return parse(text, path, sections);
}

}  // namespace dispatchd::config
