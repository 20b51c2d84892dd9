#pragma once
// The staff API and page (docs/staff.md). Who is acting is always an account:
//   - POST /api/session {"name","token"} logs in: a `dispatchd_session` cookie (HttpOnly,
//     SameSite=Strict, Path=/, Secure when configured) and a CSRF token in the answer;
//     GET /api/session gives a live session's name and CSRF token back (a reloaded page);
//     DELETE /api/session logs out. Every other POST/DELETE with the cookie must carry
//     X-CSRF-Token: 403 without it or with a wrong one.
//   - Authorization: Bearer <personal token> authenticates scripts (no CSRF: a browser never
//     sends it by itself).
//   - Bearer <admin token> (staff.token_env) manages accounts: POST /api/staff {"name"},
//     DELETE /api/staff/{name}; and reassigns claims: POST /api/escalations/{id}/reassign
//     {"to","note"?} (actor "admin"); and manages saved replies (/api/replies, actor
//     "admin"); anything else with it is 403.
// The actor of a decision is the authenticated account; an "as" in the body is ignored.
//
//   GET  /api/escalations?status=&reason=&channel=   the queue, oldest first
//   GET  /api/escalations/{id}                       one case (staff/json.h)
//   POST /api/escalations/{id}/claim|approve|edit|reply|dismiss
//        the decisions of staff/decisions.h: 200 {"ok":true,...}, 409 with the refusal and,
//        for a refused edit, the validator's verdict
//   POST /api/escalations/{id}/release|takeover {"note"?}   hand-overs (staff/handover.h):
//        200 {"ok":true,"rule"}, 409 refused by state; reassign {"to","note"?} is for the admin
//        token and admin accounts (403 for another staff credential, 404 for a name that is
//        no active account)
//   POST /api/escalations/{id}/notes {"text"}        an internal note: 200 {"ok":true,"note_id"}
//   POST /api/escalations/{id}/reply {"saved_reply":ID}  a saved reply filled from the case,
//        sent as a reply {"text"} is (staff/saved_replies.h)
//   GET  /api/escalations/{id}/replies               the saved replies filled for this case
//   GET  /api/search?customer=&text=&...             search, newest first (staff_search.h)
//   GET  /api/escalations/{id}/history?before=       the customer's other cases and messages
//   GET  /api/replies                                the saved replies
//   POST /api/replies {"name","text"}, PUT /api/replies/{id} {"text"}, DELETE /api/replies/{id}
//        for admin accounts and the admin token (403 for another staff credential; 400 for an
//        unknown placeholder, 409 for a name in use)
//   GET  /api/messages/{message_id}/trail            one message's trail (staff/trail_render.h JSON)
//   GET  /api/catalog                                the catalog, for the page's action form
//   GET  /api/budget                                 the daily spend budget today (daemon/budget_report.h)
//   GET  /api/provider                               whether the model provider answers (its breaker)
//   GET  /api/events                                 Server-Sent Events (escalation_events.h)
//   GET  /staff/...                                  the page's files (web/assets.h)
// Bodies are parsed strictly (common/strict_json.h); anything but one such object is 400.
// The daemon runs the listings, cases and trails on its read thread (prepare(),
// daemon/read_thread.h): a big history's cold pages never hold the event loop. Who asks is
// checked first, on the loop.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "agent/budget.h"
#include "catalog/catalog.h"
#include "daemon/escalation_events.h"
#include "daemon/http_server.h"
#include "daemon/provider_report.h"
#include "daemon/read_thread.h"
#include "daemon/staff_bodies.h"
#include "staff/accounts.h"
#include "staff/handover.h"
#include "staff/targets.h"
#include "store/database.h"
#include "store/inbox.h"

namespace dispatchd::daemon {

struct StaffApiSettings {
  std::string admin_token;  // empty: accounts are managed with dispatchctl only
  staff::SessionPolicy sessions;
  bool secure_cookies = false;
  std::size_t history_messages = 10;                              // llm.history_messages: the history a trail shows
  agent::Budget budget;                                           // llm.budget: GET /api/budget reports the daily one
  std::chrono::minutes claim_idle = staff::k_default_claim_idle;  // staff.claim_idle_minutes
  staff::ResponseTargets targets;                                 // staff.response_target_minutes
  // The model providers and their breakers' stats now, the primary first, for
  // GET /api/provider; unset: reported as answering.
  std::function<ProviderStates()> providers;
  // Every channel kind (connectors/registry.h) and whether this configuration enables it,
  // for GET /api/channels: the page's channel names and filter.
  struct Channel {
    std::string name, label;
    bool enabled = false;
  };
  std::vector<Channel> channels;
};

class StaffApi {
 public:
  // `catalog` returns the current catalog (it changes on reload); `on_decision` runs after
  // a decision put something in the outbox. `events` serves /api/events.
  StaffApi(store::Database& db, StaffApiSettings settings,
           std::function<std::shared_ptr<const catalog::Catalog>()> catalog, std::function<store::Time()> now,
           std::function<void()> on_decision, EscalationEvents& events);

  // True when `request` is for the API or the page (the router's test).
  static bool owns(const Request& request);
  // The answer, with any read on this API's own connection.
  Response handle(const Request& request);
  // The answer, or for an authenticated GET of a listing, a case or a trail the read that
  // makes it: it holds copies of what it needs and may run on any connection to the same
  // database, on any thread (daemon/read_thread.h), after this call and this object.
  using Routed = std::variant<Response, Read>;
  Routed prepare(const Request& request);

 private:
  Response session(const Request& request, store::Time now);
  Response accounts(const Request& request, store::Time now);
  Routed replies(const Request& request, const std::string& who, bool admin, store::Time now);
  Routed escalations(const Request& request, const staff::Staffer& who, store::Time now);
  Response decide(std::int64_t id, const std::string& verb, const std::string& body, const std::string& who,
                  store::Time now);
  // release, takeover, reassign and notes: the desk around a claim.
  Response desk(std::int64_t id, const std::string& verb, const DecisionBody& body, const std::string& who, bool admin,
                store::Time now);
  Response admin_reassign(const Request& request, store::Time now);
  Response events(const Request& request);
  Routed trail(const Request& request);
  Routed media(const Request& request);
  std::string cookie(const std::string& value, std::optional<int> max_age_s) const;

  store::Database& m_db;
  StaffApiSettings m_settings;
  std::function<std::shared_ptr<const catalog::Catalog>()> m_catalog;
  std::function<store::Time()> m_now;
  std::function<void()> m_on_decision;
  EscalationEvents& m_events;
};

}  // namespace dispatchd::daemon
