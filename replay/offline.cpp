#include "replay/offline.h"

#include <algorithm>
#include <array>
#include <span>
#include <string_view>
#include <utility>

#include "common/json_access.h"
#include "common/json_reader.h"
#include "common/strict_json.h"
#include "validator/extract.h"

namespace dispatchd::replay {
namespace {

// Keys per page (each page seeks the received_at index); a key is a few dozen bytes.
constexpr std::int64_t k_page_keys = 10000;
// Messages whose attempts are read at once: a batch of 64 KiB replies stays small.
constexpr std::size_t k_batch = 250;

// Finish reasons with which the providers say the output limit cut the answer off (llm/:
// the agent records such an answer as the provider's `truncated`, whatever its text).
constexpr std::array<std::string_view, 3> k_cut_off = {"length", "MAX_TOKENS", "max_tokens"};
// Error classes only a provider's ending produces (llm::ErrorClass), never the validator.
constexpr std::array<std::string_view, 3> k_provider_endings = {"blocked", "refused", "no_text"};

bool judged_by_validator(const store::RecordedAttempt& attempt) {
  if (!attempt.raw_output || attempt.verdict == store::Verdict::error) return false;
  if (attempt.finish_reason && std::ranges::find(k_cut_off, *attempt.finish_reason) != k_cut_off.end()) return false;
  return !(attempt.error_class &&
           std::ranges::find(k_provider_endings, *attempt.error_class) != k_provider_endings.end());
}

// The action the output names, read even when the catalog refuses it (an action it no
// longer has): the string value of the catalog's action field, if one can be read.
std::string named_action(const catalog::Catalog& catalog, std::string_view raw) {
  json::Object object;
  const auto found = validator::extract(raw, {}, object);
  if (!found.ok()) return "";
  if (!found.object_read && !json::read_object(raw.substr(found.offset, found.length), 32, object)) return "";
  const json::Value* value = object.find(catalog.action_field());
  return value && value->is_string() ? std::string(value->text) : "";
}

// SplitMix64: a fixed, well-mixed hash, so the sample does not depend on the standard
// library's implementation.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::vector<validator::Finding> findings_of(const std::string& errors_json) {
  std::vector<validator::Finding> out;
  auto parsed = json::parse_strict(errors_json, {});
  if (!parsed || !parsed->document.IsArray()) return out;
  for (const auto& e : parsed->document.GetArray()) {
    out.push_back({json::string_member(e, "path").value_or(""), json::string_member(e, "code").value_or(""),
                   json::string_member(e, "message").value_or("")});
  }
  return out;
}

void count(Counts& counts, Flip flip) {
  ++counts.checked;
  switch (flip) {
    case Flip::unchanged: ++counts.unchanged; break;
    case Flip::valid_to_refused: ++counts.valid_to_refused; break;
    case Flip::refused_to_valid: ++counts.refused_to_valid; break;
  }
}

class Replayer {
 public:
  Replayer(const catalog::Catalog& catalog, Report& report) : m_catalog(catalog), m_report(report) {}

  void replay(const store::RecordedMessage& message) {
    ++m_report.summary.messages;
    for (const auto& attempt : message.attempts) {
      ++m_report.summary.attempts;
      Recheck r = recheck(m_catalog, message, attempt);
      if (!r.checked) {
        ++m_report.summary.not_checked;
        continue;
      }
      count(m_report.summary.total, r.flip);
      count(m_report.summary.per_action[r.action], r.flip);
      if (r.flip != Flip::unchanged) m_report.changes.push_back(change(message, attempt, std::move(r)));
    }
  }

 private:
  static Change change(const store::RecordedMessage& message, const store::RecordedAttempt& attempt, Recheck r) {
    Change c{message.id,
             message.provider_message_id,
             message.channel,
             message.received_at,
             attempt.attempt,
             std::move(r.action),
             r.flip,
             std::string(store::to_sql(attempt.verdict)),
             {},
             {},
             {}};
    if (r.flip == Flip::valid_to_refused) {
      c.errors = std::move(r.verdict.errors);
    } else {
      c.recorded_errors = findings_of(attempt.errors);
      c.review = std::move(r.verdict.review);
    }
    return c;
  }

  const catalog::Catalog& m_catalog;
  Report& m_report;
};

// The `sample` messages with the smallest seeded hash, kept in a max-heap on the hash.
class Sampler {
 public:
  Sampler(std::int64_t size, std::uint64_t seed) : m_size(size), m_seed(seed) {}

  void offer(store::RecordedMessage message) {
    const std::uint64_t key = mix(static_cast<std::uint64_t>(message.id) ^ m_seed);
    if (static_cast<std::int64_t>(m_heap.size()) < m_size) {
      m_heap.push_back({key, std::move(message)});
      std::ranges::push_heap(m_heap, {}, &Entry::first);
    } else if (m_size > 0 && key < m_heap.front().first) {
      std::ranges::pop_heap(m_heap, {}, &Entry::first);
      m_heap.back() = {key, std::move(message)};
      std::ranges::push_heap(m_heap, {}, &Entry::first);
    }
  }

  // The sample in received_at order, then id.
  std::vector<store::RecordedMessage> take() {
    std::vector<store::RecordedMessage> out;
    for (auto& entry : m_heap) out.push_back(std::move(entry.second));
    std::ranges::sort(out, [](const auto& a, const auto& b) {
      return std::tie(a.received_at, a.id) < std::tie(b.received_at, b.id);
    });
    return out;
  }

 private:
  using Entry = std::pair<std::uint64_t, store::RecordedMessage>;
  std::int64_t m_size;
  std::uint64_t m_seed;
  std::vector<Entry> m_heap;
};

}  // namespace

const char* to_string(Flip flip) {
  switch (flip) {
    case Flip::unchanged: return "unchanged";
    case Flip::valid_to_refused: return "valid_to_refused";
    case Flip::refused_to_valid: return "refused_to_valid";
  }
  return "unchanged";
}

Recheck recheck(const catalog::Catalog& catalog, const store::RecordedMessage& message,
                const store::RecordedAttempt& attempt) {
  Recheck r;
  if (!judged_by_validator(attempt)) return r;
  r.checked = true;
  r.was_valid = attempt.verdict == store::Verdict::valid || attempt.verdict == store::Verdict::review;
  // The agent's call (agent/agent.cpp): the sender as the only recipient, the text as the
  // grounding source, default limits.
  r.verdict = validator::validate(catalog, *attempt.raw_output, {message.sender, message.text});
  r.action = r.verdict.ok ? r.verdict.action : named_action(catalog, *attempt.raw_output);
  if (r.was_valid != r.verdict.ok) r.flip = r.was_valid ? Flip::valid_to_refused : Flip::refused_to_valid;
  return r;
}

std::expected<void, store::Error> for_each_selected(store::Database& db, const Selection& selection,
                                                    const std::function<void(const store::RecordedMessage&)>& visit) {
  std::optional<Sampler> sampler;
  if (selection.sample) sampler.emplace(*selection.sample, selection.seed);
  store::ReplayPage page{.since = selection.since, .messages = k_page_keys};
  std::int64_t seen = 0;
  const auto take = [&](store::RecordedMessage& message) {
    if (selection.limit && seen == *selection.limit) return false;
    ++seen;
    if (sampler)
      sampler->offer(std::move(message));
    else
      visit(message);
    return true;
  };
  for (bool more = true; more;) {
    auto keys = store::replay_keys(db, page);
    if (!keys) return std::unexpected(std::move(keys.error()));
    if (keys->empty()) break;
    page.after = keys->back();
    for (std::size_t from = 0; more && from < keys->size(); from += k_batch) {
      const std::span<const store::ReplayKey> batch(keys->data() + from, std::min(k_batch, keys->size() - from));
      auto messages = store::recorded_attempts(db, batch);
      if (!messages) return std::unexpected(std::move(messages.error()));
      for (auto& message : *messages) {
        if (!take(message)) {
          more = false;
          break;
        }
      }
    }
  }
  if (sampler) {
    for (const auto& message : sampler->take()) visit(message);
  }
  return {};
}

std::expected<Report, store::Error> run_offline(store::Database& db, const catalog::Catalog& catalog,
                                                const Selection& selection) {
  Report report;
  report.selection = selection;
  Replayer replayer(catalog, report);
  auto walked = for_each_selected(db, selection, [&](const store::RecordedMessage& m) { replayer.replay(m); });
  if (!walked) return std::unexpected(std::move(walked.error()));
  return report;
}

}  // namespace dispatchd::replay
