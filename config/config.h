#pragma once
// dispatchd's configuration: one JSON file (comments allowed), read once at start and
// immutable afterwards. Secrets are never in the file: each `*_env` key names an
// environment variable, or a file of the same name under $CREDENTIALS_DIRECTORY
// (systemd LoadCredential=); see secrets.h.
//
// Loading reports every problem at once ("file: /pointer: message"): unknown keys (a typo
// never silently drops a setting), wrong types, out-of-range numbers, missing required
// keys. Relative paths are resolved against the config file's folder.

#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dispatchd::config {

// http.listener_thread: where the HTTP listener runs (daemon/http_front.h). automatic: a
// thread of its own on PostgreSQL (the loop waits on the network for every store call),
// the loop itself on SQLite (no hand-off per request). The other two force one, to measure.
enum class ListenerThread { automatic, own, loop };

struct Http {
  std::string listen = "127.0.0.1:8080";
  ListenerThread listener_thread = ListenerThread::automatic;
  std::string host = "127.0.0.1";  // split from listen
  std::uint16_t port = 8080;
  std::size_t max_body_bytes = 1024 * 1024;
  // Open connections one client address may hold (of the listener's 512). Behind a reverse
  // proxy every connection comes from the proxy's address: raise it to 512 there.
  std::size_t max_connections_per_address = 64;
};

// llm.prices: one model's price, in USD per million tokens. input and output are required;
// a rate left out means calls that use it have no known cost (llm/cost.h), never a free one.
struct ModelPrice {
  double input = 0;
  double output = 0;
  std::optional<double> cached_input;
  std::optional<double> cache_write;

  bool operator==(const ModelPrice&) const = default;
};

// llm.budget: the model's spend per UTC day (docs/agent.md, "The spend budget"), from the
// attempts' costs at llm.prices. What a turn does when its budget is closed:
enum class WhenSpent {
  wait,      // it waits until the next UTC day
  escalate,  // it is escalated budget_exhausted
};
// What attempts of unknown cost (no rate for a kind of token used, no usage) do:
enum class UnknownCost {
  stop,   // the budget is closed until the next UTC day: it cannot be held
  allow,  // only the priced cost is compared; the unknown attempts are reported
};
struct Budget {
  std::optional<double> daily_usd;               // none: no daily limit
  std::optional<double> conversation_daily_usd;  // none: no limit per conversation
  WhenSpent when_spent = WhenSpent::wait;
  UnknownCost unknown_cost = UnknownCost::stop;

  bool any() const { return daily_usd || conversation_daily_usd; }
};

// The model provider's circuit breaker (llm/breaker.h).
struct Breaker {
  int failures = 5;         // transport failures, 429s and 5xx in a row that open it
  int probe_min_ms = 1000;  // the first probe after it opened
  int probe_max_ms = 5000;  // the longest pause between probes (>= probe_min_ms)
};

// A further provider (llm.fallbacks), asked while the ones before it fail (llm/router.h).
struct Fallback {
  std::string provider;  // "openai" | "gemini" | "anthropic"
  std::string base_url;
  std::string model;
  std::string api_key_env;
  int timeout_ms = 0;       // 0: llm.timeout_ms
  int max_concurrency = 0;  // 0: llm.max_concurrency
};

struct Llm {
  std::string provider;  // "openai" | "gemini" | "anthropic"
  std::string base_url;
  std::string model;
  std::string api_key_env;
  int timeout_ms = 30000;
  int connect_timeout_ms = 5000;
  int max_retries = 2;            // contract re-asks after the first attempt
  int max_concurrency = 8;        // in-flight model calls across conversations
  int max_tool_steps = 4;         // read-only tool calls per message
  int history_messages = 10;      // earlier messages of the conversation in the context
  int provider_deadline_s = 900;  // a message waits this long for a provider, then escalates
  int max_output_tokens = 1024;
  // provider openai: send OpenAI's prompt_cache_key, one per system prompt and catalog. Off by
  // default: OpenAI-compatible servers that refuse unknown fields would refuse every call.
  bool prompt_cache_key = false;
  // Model name (as in llm.model) -> price: what each attempt costs (v_attempts.cost_usd).
  // Empty: no attempt has a known cost.
  std::map<std::string, ModelPrice> prices;
  Budget budget;  // requires a price for llm.model
  Breaker breaker;
  std::vector<Fallback> fallbacks;  // in order, after the primary
};

// connectors.<name>: one channel's section, kept as written (comments dropped) for the
// channel to read (connectors/registry.h: its keys, ranges and secrets are the channel's;
// config/ knows no channel).
struct ChannelSection {
  std::string json;  // the section's object
  std::string at;    // its JSON pointer in the file ("/connectors/<name>"), for problems
};

// Staff sessions on the page (docs/staff.md).
struct Staff {
  bool secure_cookies = false;  // the cookie carries Secure (dispatchd behind TLS)
  int session_idle_minutes = 60;
  int session_max_hours = 12;
  int claim_idle_minutes = 30;  // a claim idle this long may be taken over by anyone
  // staff.response_target_minutes: minutes from an escalation's opening to its due time,
  // by reason name ("contract_failed", ...; store/states.h); a reason not named takes
  // "default" (60 unless set). Every name is a known reason, every value 1 to 10080.
  int response_target_default_minutes = 60;
  std::map<std::string, int> response_target_minutes;
};

// Several instances on one PostgreSQL database (docs/architecture.md).
struct Instance {
  std::string id;  // instance.id: unique per instance; empty: host name + ":" + http port
};
struct Cluster {
  int dead_after_s = 30;  // an instance silent this long is dead: the others take its work
};

// mcp.servers.<name>: one MCP server whose tools catalog actions of kind mcp call
// (docs/configuration.md). Exactly one of `command` (a child process over stdio) and `url`
// (Streamable HTTP).
struct McpServer {
  std::vector<std::string> command;             // argv, no shell; argv[0] a path or found in PATH
  std::map<std::string, std::string> env;       // the child's whole environment: these literals...
  std::map<std::string, std::string> env_from;  // ...and these, read from dispatchd's secrets by name
  std::string cwd;                              // "" keeps dispatchd's; relative to the file's folder
  std::string url;                              // the server's MCP endpoint
  std::string token_env;                        // a bearer token's secret; "" sends none
  int startup_timeout_s = 30;                   // initialize and the tool listing
  int call_timeout_s = 30;                      // each tool call
  int max_result_bytes = 64 * 1024;             // a tool answer's text kept for the model
  int max_in_flight = 4;                        // calls at once; the rest wait their turn

  bool operator==(const McpServer&) const = default;
};

// agent.*: how the agent groups a conversation's messages (agent::Settings::burst_quiet).
struct Agent {
  int burst_quiet_ms = 1500;  // 0: one turn per message
  int burst_max_ms = 6000;    // from a turn's first message; at least burst_quiet_ms
  // agent.limits.*: runaway conversations (agent/runaway.h); each 0 turns its check off.
  bool limits_enabled = true;
  int replies_per_10_minutes = 10;
  int replies_per_day = 50;
  int repeats = 3;
  int bot_cadence_turns = 4;
  int bot_cadence_ms = 2000;
};

// media.transcription: audio files (voice notes) turned into text by an OpenAI-compatible
// POST {base_url}/audio/transcriptions before the model reads their message (docs/media.md).
struct Transcription {
  std::string base_url;     // as the openai provider's: https://api.openai.com/v1 (a trailing '/' ignored)
  std::string model;        // e.g. "whisper-1"
  std::string api_key_env;  // the key's secret (secrets.h); never in the file
  int timeout_ms = 60'000;  // one request, its upload included
  int attempts = 5;         // requests for one file, then its transcript is failed

  bool operator==(const Transcription&) const = default;
};

// media.*: customers' files (photos, voice notes, documents), fetched from the channel and
// kept in the store (docs/media.md).
struct Media {
  bool enabled = true;  // false: files are not fetched (the messages are stored as before)
  // media.max_bytes.<kind>: the largest file of each kind that is kept; a larger one is
  // recorded over_cap, and its download stops at the cap.
  std::int64_t max_image_bytes = 5 * 1024 * 1024;
  std::int64_t max_audio_bytes = 16 * 1024 * 1024;
  std::int64_t max_video_bytes = 16 * 1024 * 1024;
  std::int64_t max_document_bytes = 25 * 1024 * 1024;
  std::int64_t max_sticker_bytes = 512 * 1024;
  std::int64_t max_total_mib = 10 * 1024;  // every kept file's bytes together
  int retention_days = 90;                 // a kept file's bytes are purged after this many days
  int fetch_attempts = 5;                  // then the file is recorded unfetchable
  int fetch_timeout_ms = 120'000;          // one download, its connection included
  // The longest a message waits for its files after they were recorded before the model is
  // asked without them (told what is missing); 0: never waits.
  int wait_s = 60;
  std::optional<Transcription> transcription;  // absent: audio is not transcribed

  bool operator==(const Media&) const = default;
};

struct Config {
  std::string path;  // the file it was read from
  // A SQLite file's path (the default; relative to the file's folder) or a PostgreSQL
  // libpq URI (postgresql://user@host:port/db), which must not hold a password.
  std::string database = "/var/lib/dispatchd/dispatchd.db";
  // PostgreSQL: the environment variable holding the role's password; the credential
  // `database_password` wins over it (config/database_password.h). Empty: libpq's own.
  std::string database_password_env;
  // SQLite: the shortest time between two group commits' syncs under traffic
  // (store/round.h): fewer, larger commits, each waiter waiting at most this much more.
  // 0: commit as soon as the last sync is done. BENCHMARKS.md has the trade.
  int database_commit_interval_ms = 5;
  std::string catalog;
  std::optional<std::string> system_prompt_file;
  std::string migrations_dir;    // default: default_migrations_dir()
  bool migrate_on_start = true;  // dispatchd applies pending migrations at start
  Http http;
  Llm llm;
  Agent agent;
  Media media;
  std::map<std::string, ChannelSection> connectors;  // channel name -> section
  std::optional<std::string> holding_reply;          // escalation.holding_reply
  // retention.days: `dispatchctl archive` without --before moves finished messages older than
  // this many days (the nightly dispatchd-archive.timer). 0 (absent): no retention period.
  int retention_days = 0;
  // escalation.notify_url: an http(s) URL POSTed once per new escalation (daemon/escalation_notifier.h);
  // none: no notifications. escalation.notify_timeout_ms: each POST's limit.
  std::optional<std::string> notify_url;
  int notify_timeout_ms = 5000;
  std::string staff_token_env;  // the admin token: manages staff accounts only
  // staff.public_url: how staff reach the page, the base of the links in notifications
  // (no trailing '/'); default "http://" + http.listen.
  std::string staff_public_url;
  Staff staff;
  Instance instance;
  Cluster cluster;
  std::map<std::string, McpServer> mcp_servers;  // mcp.servers: name -> server
};

// The problems of the parts config/ keeps as written (the channels' sections: connectors::
// configure), asked with the configuration as read so far, even when it has problems of its
// own: every problem of the file is reported at once.
using SectionCheck = std::function<std::vector<std::string>(const Config&)>;

// Reads and checks `path` (at most 1 MiB), and its sections with `sections` when given.
[[nodiscard]] std::expected<Config, std::vector<std::string>> load(const std::string& path,
                                                                   const SectionCheck& sections = {});

// Parses `text` as if read from `path` (relative paths resolve against its folder).
[[nodiscard]] std::expected<Config, std::vector<std::string>> parse(const std::string& text, const std::string& path,
                                                                    const SectionCheck& sections = {});

// The migrations installed with the binaries (cmake --install) when present, else the
// source tree's, so that a build-tree binary works without installing. Either is the root
// holding one folder per engine (sqlite/, postgresql/; store::load_migrations).
std::string default_migrations_dir();

}  // namespace dispatchd::config
