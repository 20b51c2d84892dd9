#include "daemon/metrics.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "store/states.h"

namespace dispatchd::daemon {
namespace {

// A state as its metric label: its SQL text, as auditors read it in the views.
template <typename E>
std::string label_of(E value) {
  return std::string(store::to_sql(value));
}

std::string escape(const std::string& value) {
  std::string out;
  for (const char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

class Writer {
 public:
  void family(const std::string& name, const std::string& type, const std::string& help) {
    m_out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  }
  void sample(const std::string& name, const std::vector<std::pair<std::string, std::string>>& labels,
              const std::string& value) {
    m_out += name;
    if (!labels.empty()) {
      m_out += "{";
      for (std::size_t i = 0; i < labels.size(); ++i) {
        m_out += (i ? "," : "") + labels[i].first + "=\"" + escape(labels[i].second) + "\"";
      }
      m_out += "}";
    }
    m_out += " " + value + "\n";
  }
  void sample(const std::string& name, const std::vector<std::pair<std::string, std::string>>& labels,
              std::int64_t value) {
    sample(name, labels, std::to_string(value));
  }
  std::string take() { return std::move(m_out); }

 private:
  std::string m_out;
};

// A count of 10^-digits seconds (milliseconds: 3, microseconds: 6) as seconds, every digit kept.
std::string as_seconds(std::int64_t value, int digits = 3) {
  std::int64_t unit = 1;
  for (int i = 0; i < digits; ++i) unit *= 10;
  std::string frac = std::to_string(value % unit);
  frac.insert(0, static_cast<std::size_t>(digits) - frac.size(), '0');
  return std::to_string(value / unit) + "." + frac;
}

// A histogram of durations kept in microseconds, rendered in seconds.
template <const auto& Bounds>
void render_histogram(Writer& w, const std::string& name, const char* help, const common::Histogram<Bounds>& h) {
  w.family(name, "histogram", help);
  for (std::size_t i = 0; i < h.at_most.size(); ++i)
    w.sample(name + "_bucket", {{"le", as_seconds(Bounds[i], 6)}}, h.at_most[i]);
  w.sample(name + "_bucket", {{"le", "+Inf"}}, h.count);
  w.sample(name + "_sum", {}, as_seconds(h.sum_us, 6));
  w.sample(name + "_count", {}, h.count);
}

// The event loop's steps: everything the daemon does waits behind the step that runs.
void render_loop_handlers(Writer& w, const common::HandlerTimes::Snapshot& s) {
  render_histogram(w, "dispatchd_loop_handler_seconds",
                   "Time the event loop spent in each step it ran (a handler: a request's read, a posted "
                   "function, a timer), since start.",
                   s);
  w.family("dispatchd_loop_handler_max_seconds", "gauge", "The longest step the event loop ran since start.");
  w.sample("dispatchd_loop_handler_max_seconds", {}, as_seconds(s.max_us, 6));
}

// Seconds from a stored time to `now`; 0 for none (or a time in the future).
std::int64_t age_since(const std::optional<std::string>& since, store::Time now) {
  if (!since) return 0;
  const auto time = store::parse_time(*since);
  return time ? std::max<std::int64_t>(0, (now - *time).count()) : 0;
}

// The escalation notifier (escalation.notify_url): POSTs by result, and what waits.
void render_notifications(Writer& w, const ProcessGauges::Notifications& n) {
  w.family("dispatchd_notifications_total", "counter",
           "Escalation notifications since start, by result: sent (2xx), retried (408, 429, 5xx, no answer; "
           "sent again), failed (refused for good; skipped).");
  for (const auto& [result, count] :
       {std::pair{"sent", n.sent}, std::pair{"retried", n.retried}, std::pair{"failed", n.failed}})
    w.sample("dispatchd_notifications_total", {{"result", result}}, count);
  w.family("dispatchd_notifications_pending", "gauge", "Escalations not yet notified.");
  w.sample("dispatchd_notifications_pending", {}, n.pending);
}

void render_budget(Writer& w, const ProcessGauges::Budget& b);

// The media fetcher (media.enabled): downloads by what became of them, and bytes kept.
void render_media(Writer& w, const MediaCounters& m) {
  w.family("dispatchd_media_fetches_total", "counter",
           "Customers' files fetched since start, by result: stored (kept), refused (over_cap, expired, "
           "unfetchable or mismatch), retried (to be fetched again), store_error (the store refused a write; "
           "fetched again later).");
  for (const auto& [result, count] : {std::pair{"stored", m.stored}, std::pair{"refused", m.refused},
                                      std::pair{"retried", m.retried}, std::pair{"store_error", m.store_errors}})
    w.sample("dispatchd_media_fetches_total", {{"result", result}}, count);
  w.family("dispatchd_media_bytes_total", "counter", "Bytes of customers' files written to the store since start.");
  w.sample("dispatchd_media_bytes_total", {}, m.bytes);
  w.family("dispatchd_media_purged_total", "counter",
           "Kept files whose bytes were removed at the end of media.retention_days, since start.");
  w.sample("dispatchd_media_purged_total", {}, m.purged);
}

// The transcriber (media.transcription): transcriptions by what became of them.
void render_transcripts(Writer& w, const TranscriptCounters& t) {
  w.family("dispatchd_transcripts_total", "counter",
           "Audio files transcribed since start, by result: done (the transcript kept), failed (refused, or "
           "failed on every attempt), retried (to be sent again), store_error (the store refused a write; sent "
           "again later).");
  for (const auto& [result, count] : {std::pair{"done", t.done}, std::pair{"failed", t.failed},
                                      std::pair{"retried", t.retried}, std::pair{"store_error", t.store_errors}})
    w.sample("dispatchd_transcripts_total", {{"result", result}}, count);
}

// Catalog tool calls by kind, action, server, tool and outcome; their durations; the MCP
// servers and whether each mcp action may call its tool.
void render_tools(Writer& w, const ToolGauges& t) {
  w.family("dispatchd_tool_calls_total", "counter",
           "Catalog tool calls since start, by kind (http, mcp), action, server and tool (mcp) and outcome.");
  for (const auto& [key, count] : t.calls) {
    std::vector<std::pair<std::string, std::string>> labels{{"kind", key.kind}, {"action", key.action}};
    if (!key.server.empty()) labels.push_back({"server", key.server});
    if (!key.tool.empty()) labels.push_back({"tool", key.tool});
    labels.push_back({"outcome", key.outcome});
    w.sample("dispatchd_tool_calls_total", labels, count);
  }
  render_histogram(w, "dispatchd_tool_call_duration_seconds",
                   "How long catalog tool calls took (http and mcp), since start.", t.durations);
  if (t.servers.empty() && t.pins.empty()) return;
  w.family("dispatchd_mcp_server_up", "gauge", "1 while an MCP server has listed its tools (mcp.servers), by server.");
  for (const auto& server : t.servers)
    w.sample("dispatchd_mcp_server_up", {{"server", server.name}}, server.up ? 1 : 0);
  w.family("dispatchd_mcp_action_pinned", "gauge",
           "1 while a catalog mcp action may call its tool (listed, its schema compatible); 0 while it is disabled.");
  for (const auto& pin : t.pins)
    w.sample("dispatchd_mcp_action_pinned", {{"action", pin.action}, {"server", pin.server}, {"tool", pin.tool}},
             pin.pinned ? 1 : 0);
}

// The outbox pump's sends and the webhooks, by channel.
// Polling channels (Gmail): polls, what they stored, and how long since the last good one.
void render_polls(Writer& w, const std::vector<ChannelGauges>& channels, store::Time now) {
  if (std::ranges::none_of(channels, [](const ChannelGauges& c) { return c.polls.has_value(); })) return;
  w.family("dispatchd_polls_total", "counter", "Mailbox polls since start, by channel and result.");
  for (const auto& c : channels) {
    if (!c.polls) continue;
    w.sample("dispatchd_polls_total", {{"channel", c.name}, {"result", "ok"}}, c.polls->polls);
    w.sample("dispatchd_polls_total", {{"channel", c.name}, {"result", "failed"}}, c.polls->poll_failures);
  }
  w.family("dispatchd_polled_messages_total", "counter",
           "Messages polls found since start, by channel and what became of them.");
  for (const auto& c : channels) {
    if (!c.polls) continue;
    for (const auto& [kind, count] :
         {std::pair{"stored", c.polls->messages_stored}, std::pair{"duplicate", c.polls->duplicates},
          std::pair{"undecodable", c.polls->undecodable}})
      w.sample("dispatchd_polled_messages_total", {{"channel", c.name}, {"kind", kind}}, count);
  }
  w.family("dispatchd_poll_full_syncs_total", "counter",
           "Times the history cursor was too old and the mailbox was listed instead, by channel.");
  for (const auto& c : channels)
    if (c.polls) w.sample("dispatchd_poll_full_syncs_total", {{"channel", c.name}}, c.polls->full_syncs);
  w.family("dispatchd_poll_lag_seconds", "gauge",
           "Seconds since the last completed poll, by channel (-1: none completed since start).");
  for (const auto& c : channels) {
    if (!c.polls) continue;
    const auto lag = c.polls->last_success ? (now - *c.polls->last_success).count() : -1;
    w.sample("dispatchd_poll_lag_seconds", {{"channel", c.name}}, static_cast<std::int64_t>(lag));
  }
}

void render_channels(Writer& w, const std::vector<ChannelGauges>& channels, store::Time now) {
  if (channels.empty()) return;
  w.family("dispatchd_channel_paused", "gauge",
           "1 while a channel is paused (its credentials were refused; /readyz says why), by channel.");
  for (const auto& c : channels) w.sample("dispatchd_channel_paused", {{"channel", c.name}}, c.paused ? 1 : 0);
  render_polls(w, channels, now);
  w.family("dispatchd_sends_in_flight", "gauge",
           "Sends handed to a channel whose outcome is not back yet, by channel.");
  for (const auto& c : channels) w.sample("dispatchd_sends_in_flight", {{"channel", c.name}}, c.sends_in_flight);
  w.family("dispatchd_send_result_write_failures_total", "counter",
           "Send outcomes whose outbox write failed since start, by channel: retried (written again) or permanent.");
  for (const auto& c : channels) {
    w.sample("dispatchd_send_result_write_failures_total", {{"channel", c.name}, {"kind", "retried"}},
             c.writes_retried);
    w.sample("dispatchd_send_result_write_failures_total", {{"channel", c.name}, {"kind", "permanent"}},
             c.writes_failed);
  }
  if (std::ranges::none_of(channels, [](const ChannelGauges& c) { return c.webhooks.has_value(); })) return;
  w.family("dispatchd_webhooks_total", "counter", "Webhook POSTs since start, by channel and answer.");
  for (const auto& c : channels) {
    if (!c.webhooks) continue;
    for (const auto& [result, count] :
         {std::pair{"accepted", c.webhooks->accepted}, std::pair{"bad_signature", c.webhooks->bad_signatures},
          std::pair{"malformed", c.webhooks->malformed}, std::pair{"not_stored", c.webhooks->not_stored}})
      w.sample("dispatchd_webhooks_total", {{"channel", c.name}, {"result", result}}, count);
  }
  w.family("dispatchd_redeliveries_total", "counter", "Inbound messages delivered again since start, stored once.");
  for (const auto& c : channels) {
    if (c.webhooks) w.sample("dispatchd_redeliveries_total", {{"channel", c.name}}, c.webhooks->duplicates);
  }
  w.family("dispatchd_webhook_rounds_read_ahead_total", "counter",
           "Rounds of webhooks whose pages were read ahead off the loop before they were stored, since start.");
  for (const auto& c : channels)
    if (c.webhooks)
      w.sample("dispatchd_webhook_rounds_read_ahead_total", {{"channel", c.name}}, c.webhooks->rounds_read_ahead);
  w.family("dispatchd_read_receipts_dropped_total", "counter",
           "Read receipts dropped since start (a backlog of more than 10,000), by channel.");
  for (const auto& c : channels)
    if (c.webhooks)
      w.sample("dispatchd_read_receipts_dropped_total", {{"channel", c.name}}, c.webhooks->read_receipts_dropped);
}

// A cost in USD as Prometheus reads a float, whatever the locale: nine decimals, finer
// than any one token's price.
std::string usd(double value) {
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed, 9);
  return ec == std::errc() ? std::string(buffer, end) : "NaN";
}

// llm.budget.daily_usd and the UTC day's spend against it (agent/budget.h).
void render_budget(Writer& w, const ProcessGauges::Budget& b) {
  w.family("dispatchd_budget_daily_limit_usd", "gauge", "llm.budget.daily_usd: the model's spend allowed per UTC day.");
  w.sample("dispatchd_budget_daily_limit_usd", {}, usd(b.limit_usd));
  w.family("dispatchd_budget_daily_spent_usd", "gauge",
           "The cost of today's (UTC) model attempts with a known cost, every instance's.");
  w.sample("dispatchd_budget_daily_spent_usd", {}, usd(b.today.cost_usd));
  w.family("dispatchd_budget_daily_unpriced_attempts", "gauge",
           "Today's (UTC) model attempts whose cost is unknown: left out of dispatchd_budget_daily_spent_usd.");
  w.sample("dispatchd_budget_daily_unpriced_attempts", {}, b.today.unpriced);
  w.family("dispatchd_budget_daily_closed", "gauge",
           "1 while the daily budget is spent or its spend unknown (no model calls until the next UTC day), else 0.");
  w.sample("dispatchd_budget_daily_closed", {}, b.closed ? 1 : 0);
}

// The model providers' circuit breakers (llm/breaker_provider.h), since start: one series per
// provider and model, the primary's and each fallback's.
void render_breakers(Writer& w, const std::vector<ProcessGauges::Breaker>& breakers) {
  using Labels = std::vector<std::pair<std::string, std::string>>;
  const auto labels = [](const ProcessGauges::Breaker& b) {
    return Labels{{"provider", b.provider.provider}, {"model", b.provider.model}};
  };
  w.family("dispatchd_llm_breaker_open", "gauge",
           "1 while the provider's circuit breaker is open (no calls but one probe at a time), else 0.");
  for (const auto& b : breakers)
    w.sample("dispatchd_llm_breaker_open", labels(b), b.stats.state == llm::BreakerState::open ? 1 : 0);
  w.family("dispatchd_llm_breaker_opened_total", "counter", "Times the provider's breaker opened since start.");
  for (const auto& b : breakers) w.sample("dispatchd_llm_breaker_opened_total", labels(b), b.stats.opened);
  w.family("dispatchd_llm_breaker_probes_total", "counter",
           "Probes sent while the breaker was open since start, by result (ok: it closed; failed).");
  for (const auto& b : breakers) {
    auto ok = labels(b);
    ok.push_back({"result", "ok"});
    w.sample("dispatchd_llm_breaker_probes_total", ok, b.stats.probes - b.stats.failed_probes);
    auto failed = labels(b);
    failed.push_back({"result", "failed"});
    w.sample("dispatchd_llm_breaker_probes_total", failed, b.stats.failed_probes);
  }
  w.family("dispatchd_llm_breaker_open_seconds_total", "counter",
           "Seconds the provider's breaker has been open since start, the current opening included.");
  for (const auto& b : breakers)
    w.sample("dispatchd_llm_breaker_open_seconds_total", labels(b), as_seconds(b.stats.open_time.count(), 3));
  w.family("dispatchd_llm_breaker_waiting", "gauge", "Model calls waiting for the breaker to close now.");
  for (const auto& b : breakers)
    w.sample("dispatchd_llm_breaker_waiting", labels(b), static_cast<std::int64_t>(b.stats.waiting));
  w.family("dispatchd_llm_breaker_held_out_total", "counter",
           "Calls that waited for the breaker as long as they may and were not sent (their messages postponed).");
  for (const auto& b : breakers) w.sample("dispatchd_llm_breaker_held_out_total", labels(b), b.stats.held_out);
  w.family("dispatchd_llm_breaker_handed_back_total", "counter",
           "Calls that reached the open breaker while a fallback admitted them, and went to the fallback.");
  for (const auto& b : breakers) w.sample("dispatchd_llm_breaker_handed_back_total", labels(b), b.stats.handed_back);
}

// Billed tokens by kind and the cost of the priced attempts, by provider and model
// (store::UsageTotals): counters, since attempts are never deleted.
void render_usage(Writer& w, const std::vector<store::UsageTotals>& usage) {
  w.family("dispatchd_llm_tokens_total", "counter",
           "Model tokens billed, by provider, model and kind (input, cached_input, cache_write, output, reasoning).");
  for (const auto& u : usage) {
    for (const auto& [kind, count] :
         {std::pair{"input", u.input_tokens}, std::pair{"cached_input", u.cached_input_tokens},
          std::pair{"cache_write", u.cache_write_tokens}, std::pair{"output", u.output_tokens},
          std::pair{"reasoning", u.reasoning_tokens}})
      w.sample("dispatchd_llm_tokens_total", {{"provider", u.provider}, {"model", u.model}, {"kind", kind}}, count);
  }
  w.family("dispatchd_llm_cost_usd_total", "counter",
           "Cost in USD of the model attempts with a known cost (llm.prices), by provider and model.");
  for (const auto& u : usage)
    w.sample("dispatchd_llm_cost_usd_total", {{"provider", u.provider}, {"model", u.model}}, usd(u.cost_usd));
  w.family("dispatchd_llm_unpriced_attempts_total", "counter",
           "Model attempts whose cost is unknown (no price for the model or a kind of token), not in the cost total.");
  for (const auto& u : usage)
    w.sample("dispatchd_llm_unpriced_attempts_total", {{"provider", u.provider}, {"model", u.model}}, u.unpriced);
}

}  // namespace

std::string render_metrics(const store::MetricsSnapshot& m, const ProcessGauges& gauges, store::Time now) {
  Writer w;
  // Messages: received by channel (monotonic), finished by outcome (an outcome is final).
  std::map<std::string, std::int64_t> received;
  w.family("dispatchd_messages_finished_total", "counter", "Inbound messages with an outcome, by channel and outcome.");
  for (const auto& c : m.messages) {
    received[c.channel] += c.count;
    if (c.outcome != store::Outcome::pending)
      w.sample("dispatchd_messages_finished_total", {{"channel", c.channel}, {"outcome", label_of(c.outcome)}},
               c.count);
  }
  w.family("dispatchd_messages_received_total", "counter", "Inbound messages stored, by channel.");
  for (const auto& [channel, count] : received)
    w.sample("dispatchd_messages_received_total", {{"channel", channel}}, count);

  w.family("dispatchd_attempts_total", "counter", "Model attempts by verdict and error class.");
  for (const auto& c : m.attempts) {
    w.sample("dispatchd_attempts_total", {{"verdict", label_of(c.verdict)}, {"error_class", c.error_class}}, c.count);
  }
  w.family("dispatchd_reasks_total", "counter", "Model attempts after the first of their message.");
  w.sample("dispatchd_reasks_total", {}, m.reasks);

  std::map<std::string, std::int64_t> escalated;
  w.family("dispatchd_escalations_waiting", "gauge", "Escalations open or claimed, by reason.");
  for (const auto& c : m.escalations) {
    escalated[label_of(c.reason)] += c.count;
    if (store::waiting(c.status))
      w.sample("dispatchd_escalations_waiting", {{"reason", label_of(c.reason)}, {"status", label_of(c.status)}},
               c.count);
  }
  w.family("dispatchd_escalations_total", "counter", "Escalations opened, by reason.");
  for (const auto& [reason, count] : escalated) w.sample("dispatchd_escalations_total", {{"reason", reason}}, count);

  if (!gauges.breached.empty()) {
    w.family("dispatchd_escalations_breached", "gauge",
             "Open escalations past their response-time target (staff.response_target_minutes), by reason.");
    for (const auto& [reason, count] : gauges.breached)
      w.sample("dispatchd_escalations_breached", {{"reason", reason}}, count);
  }

  w.family("dispatchd_conversations_held", "gauge",
           "Conversations not answered until staff close the escalation that held them, by reason.");
  for (const auto& c : m.conversations_held)
    w.sample("dispatchd_conversations_held", {{"reason", label_of(c.reason)}}, c.count);

  w.family("dispatchd_sends_total", "counter", "Outbox sends by final result.");
  w.family("dispatchd_outbox", "gauge", "Outbox rows not yet final, by status.");
  for (const auto& c : m.actions) {
    const bool final = store::final_state(c.status);
    w.sample(final ? "dispatchd_sends_total" : "dispatchd_outbox", {{final ? "result" : "status", label_of(c.status)}},
             c.count);
  }

  w.family("dispatchd_model_latency_seconds", "histogram", "Model call latency by provider and model.");
  for (const auto& h : m.latency) {
    for (std::size_t i = 0; i < store::k_latency_buckets_ms.size(); ++i) {
      w.sample("dispatchd_model_latency_seconds_bucket",
               {{"provider", h.provider}, {"model", h.model}, {"le", as_seconds(store::k_latency_buckets_ms[i])}},
               h.cumulative[i]);
    }
    w.sample("dispatchd_model_latency_seconds_bucket", {{"provider", h.provider}, {"model", h.model}, {"le", "+Inf"}},
             h.count);
    w.sample("dispatchd_model_latency_seconds_sum", {{"provider", h.provider}, {"model", h.model}},
             as_seconds(h.sum_ms));
    w.sample("dispatchd_model_latency_seconds_count", {{"provider", h.provider}, {"model", h.model}}, h.count);
  }

  render_usage(w, m.usage);

  w.family("dispatchd_inbox_waiting", "gauge", "Inbound messages received or in processing.");
  w.sample("dispatchd_inbox_waiting", {}, m.inbox_waiting);
  w.family("dispatchd_oldest_waiting_age_seconds", "gauge", "Age of the oldest waiting inbound message (0 when none).");
  w.sample("dispatchd_oldest_waiting_age_seconds", {}, age_since(m.oldest_waiting_since, now));
  w.family("dispatchd_escalation_oldest_open_age_seconds", "gauge",
           "Age of the oldest open or claimed escalation (0 when none).");
  w.sample("dispatchd_escalation_oldest_open_age_seconds", {}, age_since(m.oldest_open_escalation_since, now));
  w.family("dispatchd_in_flight", "gauge", "Messages the agent is working on.");
  w.sample("dispatchd_in_flight", {}, gauges.in_flight);
  w.family("dispatchd_sending_paused", "gauge", "1 while sending is paused (e.g. a refused access token).");
  w.sample("dispatchd_sending_paused", {}, gauges.sending_paused ? 1 : 0);
  w.family("dispatchd_http_connections", "gauge", "Open HTTP connections.");
  w.sample("dispatchd_http_connections", {}, gauges.http_connections);
  if (const auto& failed = gauges.store_failures) {
    w.family("dispatchd_store_failures_total", "counter",
             "Group commits, WAL syncs and checkpoints that failed since start (e.g. a full disk): alert on a rise.");
    w.sample("dispatchd_store_failures_total", {{"step", "commit"}}, failed->commits);
    w.sample("dispatchd_store_failures_total", {{"step", "sync"}}, failed->syncs);
    w.sample("dispatchd_store_failures_total", {{"step", "checkpoint"}}, failed->checkpoints);
  }
  if (const auto& waits = gauges.durable_waits)
    render_histogram(w, "dispatchd_store_durable_wait_seconds",
                     "Time a step that acts outside the process (a webhook's 200, a send, a staff answer) "
                     "waited for its writes' group commit and sync, since start.",
                     *waits);
  if (const auto& syncs = gauges.sync_times)
    render_histogram(w, "dispatchd_store_sync_seconds",
                     "Time each fdatasync of the SQLite WAL took since start: the disk's own part of "
                     "dispatchd_store_durable_wait_seconds.",
                     *syncs);
  if (gauges.notifications) render_notifications(w, *gauges.notifications);
  if (gauges.media) render_media(w, *gauges.media);
  if (gauges.transcripts) render_transcripts(w, *gauges.transcripts);
  render_tools(w, gauges.tools);
  if (gauges.budget) render_budget(w, *gauges.budget);
  if (!gauges.breakers.empty()) render_breakers(w, gauges.breakers);
  if (gauges.loop_handlers) render_loop_handlers(w, *gauges.loop_handlers);
  render_channels(w, gauges.channels, now);
  return w.take();
}

}  // namespace dispatchd::daemon
