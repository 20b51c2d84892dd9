#pragma once
// The business's message templates, without the I/O: the Graph request that lists them, the
// reading of each page, and the reading of the two template webhooks. Pure functions; safe
// from any thread. Shapes (Meta's WhatsApp Business Management API reference, "WhatsApp
// Business Account Message Templates", and the webhook references
// "message_template_status_update" and "template_category_update"):
//
//   GET {graph_base_url}/{waba-id}/message_templates
//       ?fields=name,language,status,category,parameter_format,components,id&limit=N[&after=CURSOR]
//   Authorization: Bearer <access token>
//   -> {"data":[{"name","language","status":"APPROVED","category":"UTILITY",
//                "parameter_format":"POSITIONAL"|"NAMED","components":[{"type":"HEADER"|"BODY"|
//                "FOOTER"|"BUTTONS","format","text","buttons":[{"type","text","url"}]}],"id"}],
//       "paging":{"cursors":{"before","after"},"next":"<url>"}}   (no "next" on the last page)
//
//   webhook change {"field":"message_template_status_update","value":{"event":"PAUSED",
//     "message_template_id":N,"message_template_name","message_template_language","reason",
//     "message_template_category",...}}
//   webhook change {"field":"template_category_update","value":{"message_template_id":N,
//     "message_template_name","message_template_language","previous_category","new_category"}}
//     (an impending change carries "correct_category" and "category_update_timestamp"
//     instead of "previous_category"; its new_category is the current one)
//
// The next page is asked for with our own URL and paging.cursors.after, never by following
// paging.next: the access token then never goes to a host other than graph_base_url's.

#include <chrono>
#include <cstddef>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "connectors/whatsapp/errors.h"
#include "connectors/whatsapp/graph.h"
#include "net/http.h"
#include "store/templates.h"

namespace dispatchd::whatsapp {

constexpr int k_template_page_limit = 100;  // templates asked for per page

// The request for one page of the account's templates; `after` is the previous page's
// cursor ("" for the first page). Refuses (one phrase) a base URL that is not http(s), a
// waba_id that is not digits, an empty token or one with spaces or control characters.
[[nodiscard]] std::expected<net::HttpRequest, std::string> build_template_list(const GraphAccount& account,
                                                                               std::string_view waba_id,
                                                                               std::string_view after = {});

// One element of data[] left out (missing name, language, status or id), with where and why.
struct SkippedTemplate {
  std::string pointer;  // e.g. "/data/3"
  std::string reason;
};

struct TemplatePage {
  std::vector<store::Template> templates;  // waba_id left empty: the caller's
  std::optional<std::string> after;        // the cursor of the next page; nullopt on the last
  std::vector<SkippedTemplate> skipped;
};

// Why a page could not be read. `kind` is errors.h's class: retry (429, 5xx, a rate-limit
// code) and the others alike are tried again at the next refresh, but only `retry` and a
// transport failure soon (the refresher's backoff); `auth` means the token is refused.
struct TemplateFetchError {
  ErrorClass kind = ErrorClass::permanent;
  std::string message;  // one line; quotes at most a short excerpt of the body
  bool retryable() const { return kind == ErrorClass::retry; }
};

// Reads the answer to build_template_list's request: the HTTP status and body. A 2xx whose
// body is not a JSON object with a data[] array, or whose paging has a next page but no
// cursors.after, is a `permanent` error; a non-2xx is classified by its Graph error.
[[nodiscard]] std::expected<TemplatePage, TemplateFetchError> read_template_page(int status, std::string_view body);

// The parameters of a template's components (a JSON array, compact): every {{1}} or
// {{name}} of the header's text, the body's text and each button's url and text, in order,
// as [{"component":"header"|"body"|"button","index":N (buttons only),"name":"1"}]. Text that
// is not a parameter ("{{ }}", "{{a b}}") is left alone.
std::string template_parameters(std::string_view components_json);

// Meta's spellings ("APPROVED", "MARKETING", "NAMED") to the store's enums; anything else
// is unknown (positional for the format, Graph's default).
store::TemplateStatus template_status_of(std::string_view graph_status);
store::TemplateCategory template_category_of(std::string_view graph_category);
store::ParameterFormat parameter_format_of(std::string_view graph_format);

// A template webhook's change, read by parse_webhook (webhook.h).
struct TemplateEvent {
  enum class Kind { status, category };
  Kind kind = Kind::status;
  std::string waba_id;  // the entry's id
  std::string template_id;
  std::string name;
  std::string language;
  std::string event;   // status: Graph's event as sent ("PAUSED", "FLAGGED", ...)
  std::string reason;  // status: Graph's reason when given
  // status: what the event makes the template's status; nullopt for events that change no
  // status (FLAGGED, LOCKED, UNLOCKED, and events this version does not know).
  std::optional<store::TemplateStatus> status;
  // category: the category it has now (new_category); impending: the change is announced
  // for later (correct_category), not made.
  std::optional<store::TemplateCategory> category;
  bool impending = false;
};

// The event of a message_template_status_update (APPROVED, PAUSED, REINSTATED, ...) as a
// status; nullopt when it changes none (see TemplateEvent::status).
std::optional<store::TemplateStatus> status_of_event(std::string_view graph_event);

}  // namespace dispatchd::whatsapp

namespace dispatchd::whatsapp {

// When the refresher asks Graph again after `failures` failed refreshes in a row (0: none
// failed): the period after a success; after a failure 5 s doubling, never later than the
// period itself. Pure.
std::chrono::milliseconds template_refresh_delay(int failures, std::chrono::milliseconds period);

}  // namespace dispatchd::whatsapp
