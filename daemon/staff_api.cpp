#include "daemon/staff_api.h"

#include <charconv>

#include "common/json_access.h"
#include "common/json_out.h"
#include "common/strict_json.h"
#include "common/text.h"
#include "staff/decisions.h"
#include "staff/json.h"
#include "store/views.h"
#include "validator/validator.h"

namespace dispatchd::daemon {
namespace {

constexpr const char* k_json = "application/json";

// A request body is untrusted input: parsed strictly (iterative, no duplicate keys), and
// one level deeper than the validator reads an edited action, so that an edit nested too
// deep gets the validator's own verdict. The listener already bounds its size.
constexpr json::ParseLimits k_body_limits{.max_depth = validator::Limits{}.max_depth + 1};

Response json(int status, std::string body) { return Response{status, std::move(body), k_json, {}}; }

Response refusal(int status, const std::string& message, const std::optional<validator::Verdict>& verdict = {}) {
  JsonOut out;
  out.begin_object().field("ok", false).field("error", message);
  out.raw_or_null("verdict", verdict ? std::optional<std::string>(validator::to_json(*verdict)) : std::nullopt);
  out.end_object();
  return json(status, out.str());
}

// ARCHITECTURE.md's staff API: 404 no such item, 409 refused by state or by the validator.
int status_of(staff::RefusalKind kind) {
  switch (kind) {
    case staff::RefusalKind::invalid:
    case staff::RefusalKind::state: return 409;
    case staff::RefusalKind::not_found: return 404;
    case staff::RefusalKind::unavailable: return 503;
    case staff::RefusalKind::internal: return 500;
  }
  return 500;
}

std::optional<std::int64_t> parse_id(std::string_view text) {
  std::int64_t id = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size() || id <= 0) return std::nullopt;
  return id;
}

constexpr const char* k_page = R"HTML(<!doctype html>
<html lang="en"><meta charset="utf-8"><title>dispatchd: escalations</title>
<style>body{font:14px system-ui;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}pre{white-space:pre-wrap;background:#f6f6f6;padding:8px}</style>
<h1>Escalations</h1>
<p><label>Staff token <input id=token type=password></label> <label>Your name <input id=who></label>
<button onclick="load()">Load</button></p>
<table id=queue></table><div id=case></div>
<script>
const api=(path,opts={})=>fetch(path,{...opts,headers:{'Authorization':'Bearer '+token.value,'Content-Type':'application/json'}}).then(r=>r.json());
const esc=s=>String(s??'').replace(/[&<>"]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));
async function load(){const rows=await api('/api/escalations?status=open');
 queue.innerHTML='<tr><th>id<th>reason<th>status<th>from<th>text'+rows.map(r=>`<tr><td><a href=# onclick="show(${r.escalation_id})">${r.escalation_id}</a><td>${esc(r.reason)}<td>${esc(r.status)} ${esc(r.assignee)}<td>${esc(r.sender)}<td>${esc(r.text)}`).join('');}
async function show(id){const c=await api('/api/escalations/'+id);
 document.getElementById('case').innerHTML=`<h2>#${id} ${esc(c.reason)}</h2><pre>${esc(JSON.stringify(c,null,2))}</pre>
 <button onclick="act(${id},'claim')">claim</button> <button onclick="act(${id},'approve')">approve</button>
 <input id=reply placeholder="reply text"> <button onclick="act(${id},'reply',{text:reply.value})">reply</button>
 <input id=note placeholder="note"> <button onclick="act(${id},'dismiss',{note:note.value})">dismiss</button>`;}
async function act(id,verb,extra={}){const r=await api(`/api/escalations/${id}/${verb}`,{method:'POST',body:JSON.stringify({as:who.value,...extra})});
 alert(r.ok?'done':r.error);load();show(id);}
</script></html>
)HTML";

}  // namespace

StaffApi::StaffApi(store::Database& db, std::string token,
                   std::function<std::shared_ptr<const catalog::Catalog>()> catalog, std::function<store::Time()> now,
                   std::function<void()> on_decision)
    : m_db(db),
      m_token(std::move(token)),
      m_catalog(std::move(catalog)),
      m_now(std::move(now)),
      m_on_decision(std::move(on_decision)) {}

bool StaffApi::owns(const Request& request) {
  return request.path.starts_with("/api/") || request.path == "/staff" || request.path.starts_with("/staff/");
}

Response StaffApi::handle(const Request& request) {
  if (m_token.empty()) return Response{404, "not found\n"};
  if (request.path == "/staff" || request.path == "/staff/")
    return Response{200, k_page, "text/html; charset=utf-8", {}};
  const auto authorization = request.header("authorization").value_or("");
  if (!authorization.starts_with("Bearer ") ||
      !text::constant_time_equal(std::string_view(authorization).substr(7), m_token)) {
    const std::string body =
        JsonOut().begin_object().field("ok", false).field("error", "bad or missing staff token").end_object().str();
    return Response{401, body, k_json, {{"WWW-Authenticate", "Bearer"}}};
  }
  constexpr std::string_view k_prefix = "/api/escalations";
  if (!request.path.starts_with(k_prefix)) return refusal(404, "no such endpoint");
  std::string_view rest = std::string_view(request.path).substr(k_prefix.size());
  if (rest.empty()) {
    if (request.method != "GET") return refusal(405, "use GET");
    std::optional<store::EscalationStatus> status;
    if (request.query.starts_with("status=")) {
      status = store::from_sql<store::EscalationStatus>(std::string_view(request.query).substr(7));
      if (!status) return refusal(400, "status is open, claimed, resolved or dismissed");
    }
    auto rows = store::list_escalations(m_db, status);
    if (!rows) return refusal(rows.error().retryable() ? 503 : 500, rows.error().message);
    return json(200, staff::escalations_json(*rows));
  }
  if (rest.front() != '/') return refusal(404, "no such endpoint");
  rest.remove_prefix(1);
  const auto slash = rest.find('/');
  const auto id = parse_id(rest.substr(0, slash));
  if (!id) return refusal(404, "no such escalation");
  if (slash == std::string_view::npos) {
    if (request.method != "GET") return refusal(405, "use GET");
    auto item = store::show_escalation(m_db, *id);
    if (!item) {
      const store::Error& e = item.error();
      return refusal(e.kind == store::ErrorKind::not_found ? 404 : e.retryable() ? 503 : 500, e.message);
    }
    return json(200, staff::case_json(*item));
  }
  if (request.method != "POST") return refusal(405, "use POST");
  return decide(*id, std::string(rest.substr(slash + 1)), request.body);
}

Response StaffApi::decide(std::int64_t id, const std::string& verb, const std::string& body) {
  auto parsed = json::parse_strict(body, k_body_limits);
  if (!parsed) return refusal(400, "the body is not valid JSON: " + parsed.error().message);
  const rapidjson::Document& doc = parsed->document;
  if (!doc.IsObject()) return refusal(400, "the body must be a JSON object");
  const auto who = json::string_member(doc, "as");
  if (!who || who->empty()) return refusal(400, "\"as\" (who decides) is required");
  const store::Time now = m_now();
  std::expected<std::int64_t, staff::Refusal> action =
      std::unexpected(staff::Refusal{staff::RefusalKind::invalid, "unknown decision " + verb, {}});
  if (verb == "claim" || verb == "dismiss") {
    auto done = verb == "claim" ? staff::claim(m_db, id, *who, now)
                                : staff::dismiss(m_db, id, *who, json::string_member(doc, "note").value_or(""), now);
    if (!done) return refusal(status_of(done.error().kind), done.error().message);
    return json(200, JsonOut().begin_object().field("ok", true).end_object().str());
  }
  if (verb == "reply") {
    action = staff::reply(m_db, id, *who, json::string_member(doc, "text").value_or(""), now);
  } else if (verb == "approve" || verb == "edit") {
    const auto catalog = m_catalog();
    if (verb == "approve") {
      action = staff::approve(m_db, *catalog, id, *who, now);
    } else {
      const rapidjson::Value* edited = json::member(doc, "action");
      if (edited == nullptr) return refusal(400, "\"action\" is required");
      // The edited action as a string of JSON, or as the JSON object itself.
      const std::string text = edited->IsString() ? std::string(json::string_of(edited)) : json::to_string(*edited);
      action = staff::edit(m_db, *catalog, id, *who, text, now);
    }
  } else {
    return refusal(404, "unknown decision " + verb);
  }
  if (!action) return refusal(status_of(action.error().kind), action.error().message, action.error().verdict);
  if (m_on_decision) m_on_decision();
  return json(200, JsonOut().begin_object().field("ok", true).field("action_id", *action).end_object().str());
}

}  // namespace dispatchd::daemon
