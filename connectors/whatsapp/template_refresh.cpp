#include <spdlog/spdlog.h>

#include <set>
#include <utility>
#include <vector>

#include "common/handler_timing.h"
#include "connectors/whatsapp/internal/template_refresh.h"
#include "connectors/whatsapp/templates.h"
#include "store/templates.h"

namespace dispatchd::whatsapp::detail {
namespace {

constexpr std::chrono::milliseconds k_template_request_timeout{30'000};
// 100 templates a page: 10,000 templates, far above what one account may have, bound a
// refresh's memory and a paging loop a broken server could draw us into.
constexpr int k_max_template_pages = 100;

}  // namespace

struct TemplateRefresher::State : std::enable_shared_from_this<State> {
  connectors::ChannelDeps deps;
  TemplateRefreshSettings settings;
  bool stopped = false;
  bool running = false;
  std::uint64_t generation = 0;  // the timer of the latest refresh_after() call
  int failures = 0;              // refreshes failed in a row
  std::vector<store::Template> collected;
  std::set<std::pair<std::string, std::string>> seen;  // name, language: the first one is kept
  int pages = 0;

  State(const connectors::ChannelDeps& d, TemplateRefreshSettings s) : deps(d), settings(std::move(s)) {}

  void schedule(std::chrono::milliseconds delay) {
    if (stopped) return;
    const std::uint64_t mine = ++generation;
    deps.after(delay, common::named_step([weak = weak_from_this(), mine] {
                 auto self = weak.lock();
                 if (!self || self->stopped || mine != self->generation) return;
                 if (self->running) return;  // finish() schedules the next
                 self->start();
               }));
  }

  void start() {
    running = true;
    collected.clear();
    seen.clear();
    pages = 0;
    fetch({});
  }

  void fetch(const std::string& after) {
    auto request = build_template_list(settings.account, settings.waba_id, after);
    if (!request) return fail(ErrorClass::permanent, "cannot build the request: " + request.error());
    request->timeout = k_template_request_timeout;
    ++pages;
    deps.transport.send(std::move(*request), common::named_step([weak = weak_from_this()](net::HttpResult result) {
                          if (auto self = weak.lock(); self && !self->stopped) self->page(std::move(result));
                        }));
  }

  void page(net::HttpResult result) {
    if (!result)
      return fail(ErrorClass::retry, "no answer from graph (" + std::string(net::to_string(result.error().kind)) +
                                         "): " + result.error().message);
    auto read = read_template_page(result->status, result->body);
    if (!read) return fail(read.error().kind, read.error().message);
    for (const auto& skipped : read->skipped)
      spdlog::warn("whatsapp: templates: skipped {} of page {}: {}", skipped.pointer, pages, skipped.reason);
    for (auto& t : read->templates) {
      if (seen.insert({t.name, t.language}).second) collected.push_back(std::move(t));
    }
    if (!read->after) return finish();
    if (pages >= k_max_template_pages)
      return fail(ErrorClass::permanent, "more than " + std::to_string(k_max_template_pages) + " pages of templates");
    fetch(*read->after);
  }

  void finish() {
    auto replaced = store::replace_templates(deps.db, settings.waba_id, collected, store::whole_seconds(deps.now()));
    if (!replaced) return fail(ErrorClass::retry, "cannot store the templates: " + replaced.error().message);
    spdlog::info("whatsapp: templates refreshed: {} in {} page(s) ({} added, {} changed, {} removed)", collected.size(),
                 pages, replaced->added, replaced->changed, replaced->removed);
    failures = 0;
    done();
  }

  void fail(ErrorClass kind, const std::string& why) {
    ++failures;
    const auto delay = template_refresh_delay(failures, settings.period);
    spdlog::warn("whatsapp: templates refresh failed ({}): {}; the stored templates stay, next try in {} s",
                 to_string(kind), why, std::chrono::duration_cast<std::chrono::seconds>(delay).count());
    done();
  }

  void done() {
    running = false;
    collected.clear();
    seen.clear();
    schedule(template_refresh_delay(failures, settings.period));
  }
};

TemplateRefresher::TemplateRefresher(const connectors::ChannelDeps& deps, TemplateRefreshSettings settings)
    : m_state(std::make_shared<State>(deps, std::move(settings))) {}

TemplateRefresher::~TemplateRefresher() { stop(); }

void TemplateRefresher::refresh_after(std::chrono::milliseconds delay) { m_state->schedule(delay); }

void TemplateRefresher::stop() { m_state->stopped = true; }

}  // namespace dispatchd::whatsapp::detail
