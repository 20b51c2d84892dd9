// Fuzz target: the staff API's JSON bodies (daemon/staff_bodies.h), for each endpoint that
// reads one: log-in, account creation, and the decisions; an edited action then goes
// through the validator and the outbound policy as staff::edit sends it (against the
// example catalog, with a WhatsApp counterpart), so an edit can be steered no more than a
// model reply. Invariants: the outbound recipient is the counterpart; a refusal has text.

#include <utility>

#include "catalog/catalog.h"
#include "daemon/staff_bodies.h"
#include "fuzz/fuzz.h"
#include "validator/outbound.h"
#include "validator/validator.h"

namespace {

using namespace dispatchd;

constexpr const char* k_target = "staff_api_body";
constexpr std::string_view k_counterpart = "5215512345678";

catalog::Catalog load() {
  auto loaded = catalog::Catalog::load_file(fuzz::source_path("catalog/examples/support.es.json"));
  if (!loaded) fuzz::fail(k_target, "cannot load the example catalog");
  return std::move(*loaded);
}

template <typename T>
void require_reason(const std::expected<T, daemon::BodyError>& body) {
  if (!body) fuzz::require(!body.error().message.empty(), k_target, "a 400 without a reason");
}

void check_edit(const catalog::Catalog& catalog, const std::string& action) {
  const validator::Verdict verdict =
      validator::validate(catalog, action, {std::string(k_counterpart), "¿Dónde está mi pedido 12345?"});
  const auto outbound = validator::outbound_of(catalog, verdict, std::string(k_counterpart));
  if (outbound) fuzz::require(outbound->recipient == k_counterpart, k_target, "an edit sends to someone else");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const catalog::Catalog catalog = load();
  const std::string_view body = fuzz::text(data, size);
  require_reason(daemon::read_login(body));
  require_reason(daemon::read_account(body));
  require_reason(daemon::read_decision(body, false));
  const auto edit = daemon::read_decision(body, true);
  require_reason(edit);
  if (edit) {
    fuzz::require(edit->action.has_value(), k_target, "an edit accepted without an action");
    check_edit(catalog, *edit->action);
  }
  return 0;
}
