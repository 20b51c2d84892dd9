// dispatchctl cost: the model tokens billed and what they cost, per provider and model, with
// the share of the input read from the provider's prompt cache; then what the channels bill
// for the messages sent, per channel and category (WhatsApp's pricing, store/send_pricing.h).
// The model totals are the store's usage counters (store/metrics.h), the numbers /metrics
// exports. Exit 0 printed, 1 cannot read, 2 usage error.
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/target.h"
#include "common/json_out.h"
#include "store/metrics.h"
#include "store/send_pricing.h"

namespace dispatchd::cli {
namespace {

constexpr const char* k_cost_usage = "usage: dispatchctl [--config FILE | --db FILE] cost [--json]";

// The share of the input tokens read from the cache: cached / (input + cached + cache
// writes), each input token being in exactly one of the three (llm/provider.h's Usage).
// None without input tokens.
std::optional<double> cached_share(const store::UsageTotals& u) {
  const std::int64_t all_input = u.input_tokens + u.cached_input_tokens + u.cache_write_tokens;
  if (all_input <= 0) return std::nullopt;
  return static_cast<double>(u.cached_input_tokens) / static_cast<double>(all_input);
}

// The cost of the priced attempts; none when no attempt has a known cost.
std::optional<double> priced_cost(const store::UsageTotals& u) {
  if (u.priced == 0) return std::nullopt;
  return u.cost_usd;
}

void sends_json(JsonOut& out, const std::vector<store::SendCostTotals>& sends) {
  out.begin_array("sends");
  for (const auto& s : sends) {
    out.begin_object().field("channel", s.channel).field("category", store::to_sql(s.category));
    out.field("currency", s.currency).field("sends", s.sends).field("billable", s.billable);
    out.field("cost", s.cost).field("unpriced", s.unpriced).end_object();
  }
  out.end_array();
}

void sends_text(const std::vector<store::SendCostTotals>& sends) {
  std::printf("\n%-10s %-28s %9s %9s %12s %-8s %9s\n", "CHANNEL", "CATEGORY", "SENDS", "BILLABLE", "COST", "CURRENCY",
              "UNPRICED");
  std::map<std::string, double> totals;  // by currency
  for (const auto& s : sends) {
    std::printf("%-10s %-28s %9lld %9lld %12.4f %-8s %9lld\n", s.channel.c_str(),
                std::string(store::to_sql(s.category)).c_str(), static_cast<long long>(s.sends),
                static_cast<long long>(s.billable), s.cost, s.currency.empty() ? "-" : s.currency.c_str(),
                static_cast<long long>(s.unpriced));
    totals[s.currency] += s.cost;
  }
  for (const auto& [currency, total] : totals)
    std::printf("%-10s %-28s %9s %9s %12.4f %-8s\n", "total", "", "", "", total,
                currency.empty() ? "-" : currency.c_str());
  if (sends.empty()) std::printf("(no priced sends)\n");
}

void print_json(const std::vector<store::UsageTotals>& usage, const std::vector<store::SendCostTotals>& sends) {
  JsonOut out;
  out.begin_object().begin_array("models");
  for (const auto& u : usage) {
    out.begin_object().field("provider", u.provider).field("model", u.model).field("attempts", u.priced + u.unpriced);
    out.field("input_tokens", u.input_tokens).field("cached_input_tokens", u.cached_input_tokens);
    out.field("cache_write_tokens", u.cache_write_tokens).field("cached_share", cached_share(u));
    out.field("output_tokens", u.output_tokens).field("reasoning_tokens", u.reasoning_tokens);
    out.field("cost_usd", priced_cost(u)).field("priced", u.priced).field("unpriced", u.unpriced).end_object();
  }
  out.end_array();
  sends_json(out, sends);
  std::printf("%s\n", out.end_object().str().c_str());
}

void print_text(const std::vector<store::UsageTotals>& usage, const std::vector<store::SendCostTotals>& sends) {
  std::printf("%-10s %-28s %9s %12s %12s %7s %12s %12s %12s %12s %9s\n", "PROVIDER", "MODEL", "ATTEMPTS", "INPUT",
              "CACHED", "SHARE", "CACHE_WRITE", "OUTPUT", "REASONING", "COST_USD", "UNPRICED");
  for (const auto& u : usage) {
    char share[16] = "-";
    if (const auto s = cached_share(u)) std::snprintf(share, sizeof share, "%.1f%%", *s * 100);
    char cost[32] = "-";
    if (const auto c = priced_cost(u)) std::snprintf(cost, sizeof cost, "%.4f", *c);
    std::printf("%-10s %-28s %9lld %12lld %12lld %7s %12lld %12lld %12lld %12s %9lld\n", u.provider.c_str(),
                u.model.c_str(), static_cast<long long>(u.priced + u.unpriced), static_cast<long long>(u.input_tokens),
                static_cast<long long>(u.cached_input_tokens), share, static_cast<long long>(u.cache_write_tokens),
                static_cast<long long>(u.output_tokens), static_cast<long long>(u.reasoning_tokens), cost,
                static_cast<long long>(u.unpriced));
  }
  if (usage.empty()) std::printf("(no model attempts)\n");
  sends_text(sends);
}

}  // namespace

int cmd_cost(int argc, char** argv) {
  auto specs = target_options();
  specs.push_back({"json", false});
  auto args = parse_args(argc, argv, 2, specs);
  if (!args) return usage_error(args.error());
  if (!args->positional.empty()) return usage_error(k_cost_usage);
  auto target = open_target(*args);
  if (!target) return usage_error(target.error());
  auto totals = store::read_metrics(target->db);
  if (!totals) {
    std::fprintf(stderr, "dispatchctl: cost: cannot read the usage: %s\n", totals.error().message.c_str());
    return k_exit_rejected;
  }
  auto sends = store::read_send_costs(target->db);
  if (!sends) {
    std::fprintf(stderr, "dispatchctl: cost: cannot read the sends' costs: %s\n", sends.error().message.c_str());
    return k_exit_rejected;
  }
  if (args->has("json"))
    print_json(totals->usage, *sends);
  else
    print_text(totals->usage, *sends);
  return k_exit_ok;
}

}  // namespace dispatchd::cli
