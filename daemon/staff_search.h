#pragma once
// The staff API's search and customer history (docs/staff.md, "Search and history"):
//   GET /api/search?customer=&text=&reason=&status=&from=&to=&before=&limit=
//       escalations, newest first, as GET /api/escalations lists them (with their targets);
//       values form-encoded (URLSearchParams); a Link header names the next page
//   GET /api/escalations/{id}/history?before=&limit=
//       the case's customer: their other escalations and a page of their messages across
//       conversations, newest first (staff::history_json)
// Each checks its query on the caller's thread (400 with the reason) and returns the read
// that answers it, which holds copies of what it needs (daemon/read_thread.h).

#include <cstdint>
#include <string_view>
#include <variant>

#include "daemon/http_server.h"
#include "daemon/read_thread.h"
#include "staff/json.h"

namespace dispatchd::daemon {

std::variant<Response, Read> search_request(std::string_view query, staff::TargetClock clock);
std::variant<Response, Read> history_request(std::int64_t escalation_id, std::string_view query);

}  // namespace dispatchd::daemon
