#pragma once
#ifndef DISPATCHD_INTERNAL_CONNECTORS
#error "connectors/whatsapp/internal/ is private to connectors/: include the module's public headers instead"
#endif
// The WhatsApp channel's template refresher (internal to the connector): lists the business
// account's templates from Graph page by page (templates.h) and, once every page is read,
// replaces the store's set (store/templates.h). Runs at start, then every period; a failed
// refresh (a Graph error, 429/5xx, no connection, a store error) is logged and tried again
// after template_refresh_delay(), and never touches the stored set. Nothing here blocks the
// loop: each page is one transport request with a deadline.
//
// Threading: the loop's thread only, like the channel.

#include <chrono>
#include <memory>
#include <string>

#include "connectors/channel.h"
#include "connectors/whatsapp/graph.h"

namespace dispatchd::whatsapp::detail {

struct TemplateRefreshSettings {
  GraphAccount account;
  std::string waba_id;  // REQUIRES: not empty
  std::chrono::milliseconds period{std::chrono::minutes(60)};
};

class TemplateRefresher {
 public:
  // REQUIRES: deps.after is set. Keeps a reference to deps' db and transport.
  TemplateRefresher(const connectors::ChannelDeps& deps, TemplateRefreshSettings settings);
  ~TemplateRefresher();
  TemplateRefresher(const TemplateRefresher&) = delete;
  TemplateRefresher& operator=(const TemplateRefresher&) = delete;

  // Refreshes after `delay`, instead of when it was due (the latest call decides); while a
  // refresh is running it finishes first and the next is then due after the period.
  void refresh_after(std::chrono::milliseconds delay);
  // Starts nothing new; a request in flight ends without effect.
  void stop();

  struct State;

 private:
  std::shared_ptr<State> m_state;
};

}  // namespace dispatchd::whatsapp::detail
