#include "daemon/staff_api.h"

#include "daemon/staff_answers.h"
#include "daemon/staff_bodies.h"
#include "daemon/staff_search.h"

#include <charconv>

#include "common/json_out.h"
#include "common/text.h"
#include "connectors/registry.h"
#include "connectors/window_rules.h"
#include "daemon/budget_report.h"
#include "daemon/provider_report.h"
#include "staff/decisions.h"
#include "staff/json.h"
#include "staff/media_download.h"
#include "staff/saved_replies.h"
#include "staff/trail_render.h"
#include "store/staff.h"
#include "store/trail.h"
#include "store/views.h"
#include "validator/validator.h"
#include "web/assets.h"

namespace dispatchd::daemon {
namespace {

constexpr std::string_view k_cookie_name = "dispatchd_session";
// The staff page's policy, as docs/staff.md states it ("The staff page"): its own scripts,
// styles, images (and data: URLs), audio (a customer's voice note, GET /api/media/{id}) and
// API calls, nothing inline, no frames, forms only to itself.
constexpr std::string_view k_page_csp =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src 'self'; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
// Escalation listings come in pages (a Link header names the next one).
constexpr std::int64_t k_page_default = 100;
constexpr std::int64_t k_page_max = 500;

Response ok() { return json(200, JsonOut().begin_object().field("ok", true).end_object().str()); }

// The staff API (docs/staff.md): 404 no such item, 409 refused by state or by the validator.
int status_of(staff::RefusalKind kind) {
  switch (kind) {
    case staff::RefusalKind::invalid:
    case staff::RefusalKind::state: return 409;
    case staff::RefusalKind::not_found: return 404;
    case staff::RefusalKind::forbidden: return 403;
    case staff::RefusalKind::unavailable: return 503;
    case staff::RefusalKind::internal: return 500;
  }
  return 500;
}

Response refused(const staff::Refusal& r) { return refusal(status_of(r.kind), r.message, r.verdict); }

Response unauthenticated(const staff::AuthFailure& failure) {
  switch (failure.kind) {
    case staff::AuthFailureKind::missing:
    case staff::AuthFailureKind::bad:
    case staff::AuthFailureKind::expired: {
      Response r = refusal(401, failure.message);
      r.headers.emplace_back("WWW-Authenticate", "Bearer");
      return r;
    }
    case staff::AuthFailureKind::unavailable: return refusal(503, failure.message);
    case staff::AuthFailureKind::internal: return refusal(500, failure.message);
  }
  return refusal(500, failure.message);
}

// The value of cookie `name` in a Cookie header ("a=1; dispatchd_session=..."), or "".
std::string cookie_value(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    const auto semicolon = header.find(';');
    std::string_view pair = header.substr(0, semicolon);
    header = semicolon == std::string_view::npos ? std::string_view() : header.substr(semicolon + 1);
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    if (pair.size() > name.size() && pair.starts_with(name) && pair[name.size()] == '=')
      return std::string(pair.substr(name.size() + 1));
  }
  return "";
}

// The listing's next page: the same filters (values already checked, so nothing unchecked
// is echoed into a header) and `after` moved past `last`.
std::string next_page(std::string_view query, std::int64_t last) {
  std::string out = "/api/escalations?";
  for (const std::string_view key : {"status", "reason", "channel", "limit"}) {
    if (const auto value = query_value(query, key); value && !value->empty())
      out.append(key).append("=").append(*value).append("&");
  }
  return out + "after=" + std::to_string(last);
}

std::optional<std::string> bearer(const Request& request) {
  const auto authorization = request.header("authorization");
  if (!authorization || !authorization->starts_with("Bearer ")) return std::nullopt;
  return std::string(authorization->substr(7));
}

bool changes_state(const Request& request) { return request.method != "GET" && request.method != "HEAD"; }

Response bad_body(const BodyError& error) { return refusal(400, error.message); }

}  // namespace

StaffApi::StaffApi(store::Database& db, StaffApiSettings settings,
                   std::function<std::shared_ptr<const catalog::Catalog>()> catalog, std::function<store::Time()> now,
                   std::function<void()> on_decision, EscalationEvents& events)
    : m_db(db),
      m_settings(std::move(settings)),
      m_catalog(std::move(catalog)),
      m_now(std::move(now)),
      m_on_decision(std::move(on_decision)),
      m_events(events) {}

bool StaffApi::owns(const Request& request) {
  return request.path.starts_with("/api/") || request.path == "/staff" || request.path.starts_with("/staff/");
}

std::string StaffApi::cookie(const std::string& value, std::optional<int> max_age_s) const {
  std::string out = std::string(k_cookie_name) + "=" + value + "; HttpOnly; SameSite=Strict; Path=/";
  if (max_age_s) out += "; Max-Age=" + std::to_string(*max_age_s);
  if (m_settings.secure_cookies) out += "; Secure";
  return out;
}

Response StaffApi::handle(const Request& request) {
  auto routed = prepare(request);
  if (auto* read = std::get_if<Read>(&routed)) return (*read)(m_db);
  return std::move(std::get<Response>(routed));
}

StaffApi::Routed StaffApi::prepare(const Request& request) {
  if (request.path == "/staff") return Response{301, "", "text/plain; charset=utf-8", {{"Location", "/staff/"}}, {}};
  if (request.path.starts_with("/staff/")) {
    const auto asset = web::staff_asset(request.path);
    if (!asset) return Response{404, "not found\n"};
    return Response{200,
                    std::string(asset->body),
                    std::string(asset->content_type),
                    {{"Content-Security-Policy", std::string(k_page_csp)},
                     {"X-Content-Type-Options", "nosniff"},
                     {"Cache-Control", "no-cache"}},
                    {}};
  }
  const store::Time now = m_now();
  if (request.path == "/api/session") return session(request, now);

  // The admin token, then a personal token, then the session cookie.
  std::optional<staff::Staffer> who;
  if (const auto token = bearer(request)) {
    if (!m_settings.admin_token.empty() && text::constant_time_equal(*token, m_settings.admin_token)) {
      if (request.path == "/api/staff" || request.path.starts_with("/api/staff/")) return accounts(request, now);
      if (request.path.starts_with("/api/escalations/") && request.path.ends_with("/reassign"))
        return admin_reassign(request, now);
      if (request.path == "/api/replies" || request.path.starts_with("/api/replies/"))
        return replies(request, "admin", true, now);
      return refusal(403,
                     "the admin token manages staff accounts (POST /api/staff, DELETE /api/staff/NAME), reassigns "
                     "claims (POST /api/escalations/ID/reassign) and manages saved replies (/api/replies) only; log "
                     "in with a staff account");
    }
    auto staffer = staff::token_staffer(m_db, *token);
    if (!staffer) return unauthenticated(staffer.error());
    who = std::move(*staffer);
  } else {
    auto staffer = staff::session_staffer(m_db, cookie_value(request.header("cookie").value_or(""), k_cookie_name), now,
                                          m_settings.sessions);
    if (!staffer) return unauthenticated(staffer.error());
    who = std::move(*staffer);
    if (changes_state(request) &&
        !text::constant_time_equal(request.header("x-csrf-token").value_or(""), who->csrf.value_or("")))
      return refusal(403, "missing or wrong X-CSRF-Token (the one POST /api/session returned)");
  }
  if (request.path == "/api/staff" || request.path.starts_with("/api/staff/"))
    return refusal(403, "staff accounts are managed with the admin token or dispatchctl staff");
  if (request.path == "/api/catalog") {
    if (request.method != "GET") return refusal(405, "use GET");
    return json(200, staff::catalog_json(*m_catalog()));
  }
  if (request.path == "/api/events") {
    if (request.method != "GET") return refusal(405, "use GET");
    return events(request);
  }
  if (request.path == "/api/budget") {
    if (request.method != "GET") return refusal(405, "use GET");
    auto daily = daily_budget(m_db, m_settings.budget, now);
    if (!daily) return refusal(500, "cannot read today's spend: " + daily.error().message);
    return json(200, budget_json(m_settings.budget, *daily));
  }
  if (request.path == "/api/channels") {
    if (request.method != "GET") return refusal(405, "use GET");
    JsonOut out;
    out.begin_array();
    for (const auto& c : m_settings.channels)
      out.begin_object().field("name", c.name).field("label", c.label).field("enabled", c.enabled).end_object();
    return json(200, out.end_array().str());
  }
  if (request.path == "/api/provider") {
    if (request.method != "GET") return refusal(405, "use GET");
    return json(200, provider_json(m_settings.providers ? m_settings.providers() : ProviderStates{}));
  }
  if (request.path.starts_with("/api/messages/")) return trail(request);
  if (request.path.starts_with("/api/media/")) return media(request);
  if (request.path == "/api/search") {
    if (request.method != "GET") return refusal(405, "use GET");
    return search_request(request.query, staff::TargetClock{now, m_settings.targets});
  }
  if (request.path == "/api/replies" || request.path.starts_with("/api/replies/"))
    return replies(request, who->name, false, now);
  return escalations(request, *who, now);
}

// /api/replies: the list for any staff member; the changes for admins (an admin account or
// the admin token). A refused text or name is the body's fault: 400.
StaffApi::Routed StaffApi::replies(const Request& request, const std::string& who, bool admin, store::Time now) {
  constexpr std::string_view k_prefix = "/api/replies";
  const std::string_view rest = std::string_view(request.path).substr(k_prefix.size());
  std::optional<std::int64_t> id;
  if (!rest.empty()) {
    id = rest.front() == '/' ? parse_id(rest.substr(1)) : std::nullopt;
    if (!id) return refusal(404, "no such saved reply");
  }
  if (!id && request.method == "GET") {
    return Read([](store::Database& db) {
      auto rows = store::list_saved_replies(db);
      if (!rows) return store_failure(rows.error());
      return json(200, staff::saved_replies_json(*rows));
    });
  }
  const bool allowed =
      id ? request.method == "PUT" || request.method == "POST" || request.method == "DELETE" : request.method == "POST";
  if (!allowed) return refusal(405, id ? "use PUT, POST or DELETE" : "use GET or POST");
  if (!admin) {
    auto marked = store::staff_admin(m_db, who);
    if (!marked) return store_failure(marked.error());
    if (!*marked) return refusal(403, "saved replies are managed by admin accounts, the admin token or dispatchctl");
  }
  const auto answer = [](const staff::Refusal& r) {
    return r.kind == staff::RefusalKind::invalid ? refusal(400, r.message) : refused(r);
  };
  if (id && request.method == "DELETE") {
    if (auto removed = staff::remove_saved_reply(m_db, *id, who, now); !removed) return answer(removed.error());
    return ok();
  }
  const auto body = read_saved_reply(request.body, !id);
  if (!body) return bad_body(body.error());
  if (id) {
    if (auto changed = staff::change_saved_reply(m_db, *id, body->text, who, now); !changed)
      return answer(changed.error());
    return ok();
  }
  auto added = staff::add_saved_reply(m_db, body->name, body->text, who, now);
  if (!added) return answer(added.error());
  return json(200, JsonOut().begin_object().field("ok", true).field("id", *added).end_object().str());
}

Response StaffApi::session(const Request& request, store::Time now) {
  const std::string id = cookie_value(request.header("cookie").value_or(""), k_cookie_name);
  if (request.method == "POST") {
    const auto body = read_login(request.body);
    if (!body) return bad_body(body.error());
    auto opened = staff::log_in(m_db, body->name, body->token, now);
    if (!opened) return unauthenticated(opened.error());
    const int max_age = static_cast<int>(std::chrono::seconds(m_settings.sessions.max).count());
    Response r = json(200, JsonOut()
                               .begin_object()
                               .field("ok", true)
                               .field("name", body->name)
                               .field("csrf", opened->csrf)
                               .end_object()
                               .str());
    r.headers.emplace_back("Set-Cookie", cookie(opened->id, max_age));
    return r;
  }
  if (request.method != "GET" && request.method != "DELETE") return refusal(405, "use POST, GET or DELETE");
  auto staffer = staff::session_staffer(m_db, id, now, m_settings.sessions);
  if (!staffer) return unauthenticated(staffer.error());
  if (request.method == "GET") {
    return json(200, JsonOut()
                         .begin_object()
                         .field("ok", true)
                         .field("name", staffer->name)
                         .field("csrf", staffer->csrf)
                         .end_object()
                         .str());
  }
  if (!text::constant_time_equal(request.header("x-csrf-token").value_or(""), staffer->csrf.value_or("")))
    return refusal(403, "missing or wrong X-CSRF-Token (the one POST /api/session returned)");
  if (auto closed = staff::log_out(m_db, id, now); !closed) return unauthenticated(closed.error());
  return Response{204, "", k_json, {{"Set-Cookie", cookie("", 0)}}, {}};
}

Response StaffApi::accounts(const Request& request, store::Time now) {
  constexpr std::string_view k_actor = "admin";
  if (request.path == "/api/staff") {
    if (request.method != "POST") return refusal(405, "use POST");
    const auto body = read_account(request.body);
    if (!body) return bad_body(body.error());
    auto token = staff::add_account(m_db, body->name, std::string(k_actor), now);
    if (!token) return refused(token.error());
    return json(
        200,
        JsonOut().begin_object().field("ok", true).field("name", body->name).field("token", *token).end_object().str());
  }
  if (request.method != "DELETE") return refusal(405, "use DELETE");
  const std::string name = request.path.substr(std::string_view("/api/staff/").size());
  if (auto revoked = staff::revoke_account(m_db, name, std::string(k_actor), now); !revoked)
    return refused(revoked.error());
  return ok();
}

Response StaffApi::events(const Request& request) {
  std::optional<std::int64_t> last;
  if (const auto header = request.header("last-event-id")) last = parse_id(*header);
  Response r{200, "", "text/event-stream; charset=utf-8", {{"Cache-Control", "no-cache"}}, {}};
  r.on_stream = [this, last](std::shared_ptr<Stream> stream) { m_events.subscribe(std::move(stream), last); };
  return r;
}

// GET /api/messages/{message_id}/trail: the same JSON as `dispatchctl trail --json`.
StaffApi::Routed StaffApi::trail(const Request& request) {
  constexpr std::string_view k_prefix = "/api/messages/";
  constexpr std::string_view k_suffix = "/trail";
  const std::string_view path = request.path;
  if (!path.ends_with(k_suffix) || path.size() <= k_prefix.size() + k_suffix.size())
    return refusal(404, "no such endpoint");
  const auto id = parse_id(path.substr(k_prefix.size(), path.size() - k_prefix.size() - k_suffix.size()));
  if (!id) return refusal(404, "no such message");
  if (request.method != "GET") return refusal(405, "use GET");
  return Read([id = *id, history = m_settings.history_messages](store::Database& db) {
    auto trail = store::load_trail(db, id, history);
    if (!trail) return store_failure(trail.error());
    return json(200, staff::trail_json(*trail));
  });
}

// GET /api/media/{media_id}: a kept file's bytes, as staff::media_serving says (inline for a
// safe image or audio file, a download otherwise), with k_media_headers. 404 names the state
// of a file that is not kept. The file is read whole into the answer: at most its kind's cap.
StaffApi::Routed StaffApi::media(const Request& request) {
  constexpr std::string_view k_prefix = "/api/media/";
  const auto id = parse_id(std::string_view(request.path).substr(k_prefix.size()));
  if (!id) return refusal(404, "no such file");
  if (request.method != "GET") return refusal(405, "use GET");
  return Read([id = *id](store::Database& db) {
    auto file = store::find_media(db, id);
    if (!file) {
      if (file.error().kind == store::ErrorKind::not_found) return refusal(404, "no file " + std::to_string(id));
      return store_failure(file.error());
    }
    if (file->state != store::MediaState::stored)
      return refusal(
          404, "file " + std::to_string(id) + " is " + std::string(store::to_sql(file->state)) + ": no bytes are kept");
    std::string body;
    body.reserve(static_cast<std::size_t>(file->size.value_or(0)));
    auto read = store::read_media(db, id, [&body](std::string_view chunk) {
      body.append(chunk);
      return true;
    });
    if (!read) return store_failure(read.error());
    const auto serving = staff::media_serving(*file);
    Response out{200, std::move(body), serving.content_type, {{"Content-Disposition", serving.disposition}}, {}};
    for (const auto& [name, value] : staff::k_media_headers) out.headers.emplace_back(name, value);
    return out;
  });
}

StaffApi::Routed StaffApi::escalations(const Request& request, const staff::Staffer& who, store::Time now) {
  constexpr std::string_view k_prefix = "/api/escalations";
  if (!request.path.starts_with(k_prefix)) return refusal(404, "no such endpoint");
  std::string_view rest = std::string_view(request.path).substr(k_prefix.size());
  if (rest.empty()) {
    if (request.method != "GET") return refusal(405, "use GET");
    store::EscalationFilter filter;
    if (const auto status = query_value(request.query, "status"); status && !status->empty()) {
      filter.status = store::from_sql<store::EscalationStatus>(*status);
      if (!filter.status) return refusal(400, "status is open, claimed, resolved or dismissed");
    }
    if (const auto reason = query_value(request.query, "reason"); reason && !reason->empty()) {
      filter.reason = store::from_sql<store::EscalationReason>(*reason);
      if (!filter.reason) return refusal(400, "unknown reason " + text::quote(*reason));
    }
    if (const auto channel = query_value(request.query, "channel"); channel && !channel->empty()) {
      if (!connectors::find_kind(*channel)) return refusal(400, "unknown channel " + text::quote(*channel));
      filter.channel = *channel;
    }
    std::int64_t limit = k_page_default;
    if (const auto text = query_value(request.query, "limit"); text && !text->empty()) {
      const auto n = parse_id(*text);
      if (!n || *n > k_page_max) return refusal(400, "limit is 1 to " + std::to_string(k_page_max));
      limit = *n;
    }
    if (const auto after = query_value(request.query, "after"); after && !after->empty()) {
      filter.after = parse_id(*after);
      if (!filter.after) return refusal(400, "after is an escalation id");
    }
    filter.limit = limit + 1;  // one more tells whether a next page exists
    return Read([filter, limit, query = request.query,
                 clock = staff::TargetClock{now, m_settings.targets}](store::Database& db) {
      auto rows = store::list_escalations(db, filter);
      if (!rows) return store_failure(rows.error());
      const bool more = static_cast<std::int64_t>(rows->size()) > limit;
      if (more) rows->pop_back();
      Response r = json(200, staff::escalations_json(*rows, clock));
      if (more) r.headers.emplace_back("Link", "<" + next_page(query, rows->back().id) + ">; rel=\"next\"");
      return r;
    });
  }
  if (rest.front() != '/') return refusal(404, "no such endpoint");
  rest.remove_prefix(1);
  const auto slash = rest.find('/');
  const auto id = parse_id(rest.substr(0, slash));
  if (!id) return refusal(404, "no such escalation");
  if (slash == std::string_view::npos) {
    if (request.method != "GET") return refusal(405, "use GET");
    return Read(
        [id = *id, clock = staff::DeskClock{now, m_settings.claim_idle}, catalog = m_catalog()](store::Database& db) {
          auto item = store::show_escalation(db, id);
          if (!item) return store_failure(item.error());
          const auto& message = item->message;
          auto reach = staff::case_window(db, catalog.get(), connectors::window_rule(message.channel), message.channel,
                                          message.sender, clock.now);
          if (!reach) return store_failure(reach.error());
          return json(200, staff::case_json(*item, clock, &*reach));
        });
  }
  if (rest.substr(slash + 1) == "history") {
    if (request.method != "GET") return refusal(405, "use GET");
    return history_request(*id, request.query);
  }
  if (rest.substr(slash + 1) == "replies") {
    if (request.method != "GET") return refusal(405, "use GET");
    return Read([id = *id, name = who.name](store::Database& db) {
      auto filled = staff::filled_replies(db, id, name);
      if (!filled) return refused(filled.error());
      JsonOut out;
      out.begin_array();
      for (const auto& f : *filled)
        out.begin_object().field("id", f.reply.id).field("name", f.reply.name).field("text", f.filled).end_object();
      return json(200, out.end_array().str());
    });
  }
  if (request.method != "POST") return refusal(405, "use POST");
  return decide(*id, std::string(rest.substr(slash + 1)), request.body, who.name, now);
}

Response StaffApi::admin_reassign(const Request& request, store::Time now) {
  constexpr std::string_view k_prefix = "/api/escalations/";
  constexpr std::string_view k_suffix = "/reassign";
  const std::string_view path = request.path;
  const auto id = parse_id(path.substr(k_prefix.size(), path.size() - k_prefix.size() - k_suffix.size()));
  if (!id) return refusal(404, "no such escalation");
  if (request.method != "POST") return refusal(405, "use POST");
  const auto parsed = read_decision(request.body, false);
  if (!parsed) return bad_body(parsed.error());
  return desk(*id, "reassign", *parsed, "admin", true, now);
}

Response StaffApi::desk(std::int64_t id, const std::string& verb, const DecisionBody& body, const std::string& who,
                        bool admin, store::Time now) {
  if (verb == "notes") {
    auto note = staff::add_note(m_db, id, who, body.text, now);
    if (!note) return refused(note.error());
    return json(200, JsonOut().begin_object().field("ok", true).field("note_id", *note).end_object().str());
  }
  if (verb == "reassign" && !body.to) return refusal(400, "\"to\" is required");
  if (verb == "reassign" && !admin) {
    // A staff account may be marked admin (dispatchctl staff admin NAME on).
    auto marked = store::staff_admin(m_db, who);
    if (!marked) return store_failure(marked.error());
    admin = *marked;
  }
  const auto kind = store::hand_over_kind(verb);
  if (!kind) return refusal(404, "unknown decision " + verb);
  auto rule = staff::hand_over(m_db, id, {*kind, who, admin, body.to, false}, body.note, now, m_settings.claim_idle);
  if (!rule) return refused(rule.error());
  return json(200, JsonOut().begin_object().field("ok", true).field("rule", store::to_text(*rule)).end_object().str());
}

Response StaffApi::decide(std::int64_t id, const std::string& verb, const std::string& body, const std::string& who,
                          store::Time now) {
  const auto parsed = read_decision(body, verb == "edit");
  if (!parsed) return bad_body(parsed.error());
  if (verb == "notes" || store::hand_over_kind(verb)) return desk(id, verb, *parsed, who, false, now);
  std::expected<std::int64_t, staff::Refusal> action =
      std::unexpected(staff::Refusal{staff::RefusalKind::invalid, "unknown decision " + verb, {}});
  if (verb == "claim" || verb == "dismiss") {
    auto done = verb == "claim" ? staff::claim(m_db, id, who, now) : staff::dismiss(m_db, id, who, parsed->note, now);
    if (!done) return refused(done.error());
    return ok();
  }
  if (verb == "reply") {
    action = parsed->saved_reply
                 ? staff::reply_saved(m_db, id, who, *parsed->saved_reply, now, &connectors::window_rule)
                 : staff::reply(m_db, id, who, parsed->text, now, &connectors::window_rule);
  } else if (verb == "approve" || verb == "edit") {
    const auto catalog = m_catalog();
    if (verb == "approve") {
      action = staff::approve(m_db, *catalog, id, who, now, &connectors::window_rule);
    } else {
      action = staff::edit(m_db, *catalog, id, who, *parsed->action, now, &connectors::window_rule);
    }
  } else {
    return refusal(404, "unknown decision " + verb);
  }
  if (!action) return refused(action.error());
  if (m_on_decision) m_on_decision();
  return json(200, JsonOut().begin_object().field("ok", true).field("action_id", *action).end_object().str());
}

}  // namespace dispatchd::daemon
