#pragma once
// The staff API and page behind the staff bearer token (config staff.token_env):
//   GET  /api/escalations[?status=open]        the queue (the JSON of `queue list --json`)
//   GET  /api/escalations/{id}                 one case (the JSON of `queue show --json`)
//   POST /api/escalations/{id}/claim|approve|edit|reply|dismiss
//        body {"as": NAME, "action": {...}, "text": "...", "note": "..."}: the same decisions
//        as dispatchctl (staff/decisions.h), 200 {"ok":true,...} or 409 with the refusal and,
//        for a refused edit, the validator's verdict. The body is parsed strictly
//        (common/strict_json.h: no duplicate keys, at most 33 levels, no recursion);
//        anything but one such object is 400 {"ok":false,"error":...} and decides nothing
//   GET  /staff/                               a small page over the API
// Without a configured token the API answers 404: it is off.

#include <functional>
#include <memory>
#include <string>

#include "catalog/catalog.h"
#include "daemon/http_server.h"
#include "store/database.h"
#include "store/inbox.h"

namespace dispatchd::daemon {

class StaffApi {
 public:
  // `catalog` returns the current catalog (it changes on reload); `on_decision` runs after
  // a decision put something in the outbox.
  StaffApi(store::Database& db, std::string token, std::function<std::shared_ptr<const catalog::Catalog>()> catalog,
           std::function<store::Time()> now, std::function<void()> on_decision);

  // True when `request` is for the API or the page (the router's test).
  static bool owns(const Request& request);
  Response handle(const Request& request);

 private:
  Response decide(std::int64_t id, const std::string& verb, const std::string& body);
  store::Database& m_db;
  std::string m_token;
  std::function<std::shared_ptr<const catalog::Catalog>()> m_catalog;
  std::function<store::Time()> m_now;
  std::function<void()> m_on_decision;
};

}  // namespace dispatchd::daemon
