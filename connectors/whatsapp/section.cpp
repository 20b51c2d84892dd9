#include "connectors/whatsapp/section.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "common/settings_reader.h"
#include "common/text.h"
#include "config/secrets.h"
#include "connectors/whatsapp/channel.h"
#include "connectors/whatsapp/template_message.h"
#include "store/send_pricing.h"
#include "store/templates.h"

namespace dispatchd::whatsapp {
namespace {

using Value = rapidjson::Value;

// No WhatsApp message costs this much: a larger price is a typo (cents for dollars).
constexpr double k_max_message_price = 100;

// One category -> price object of connectors.whatsapp.prices (its "default" or a market).
void read_category_prices(json::SettingsReader& r, const Value& v, const std::string& at,
                          std::map<store::PricingCategory, double>& out) {
  if (!v.IsObject()) return r.problem(at, "must be an object: category -> price of one message");
  for (const auto& member : v.GetObject()) {
    const std::string name(member.name.GetString(), member.name.GetStringLength());
    if (name == "$comment") continue;
    const std::string here = at + "/" + text::pointer_token(name);
    const auto category = store::from_sql<store::PricingCategory>(name);
    if (!category) {
      std::string names;
      for (const auto& [_, known] : store::SqlNames<store::PricingCategory>::table)
        names += (names.empty() ? "" : ", ") + std::string(known);
      r.problem(here, "unknown pricing category; known: " + names);
      continue;
    }
    const Value& price = member.value;
    if (!price.IsNumber() || !std::isfinite(price.GetDouble()) || price.GetDouble() < 0 ||
        price.GetDouble() > k_max_message_price) {
      r.problem(here, "must be a number from 0 to 100 (the price of one message)");
      continue;
    }
    out[*category] = price.GetDouble();
  }
}

// connectors.whatsapp.prices: {"currency": "USD", "default": {category: price},
// "markets": {"<calling code>": {category: price}}}.
void read_message_prices(json::SettingsReader& r, const Value& v, const std::string& at, store::PriceTable& prices) {
  bool has_currency = false;
  r.object(v, at,
           {{"currency",
             [&](const Value& c, const std::string& cat) {
               has_currency = true;
               const std::string_view code = c.IsString() ? std::string_view(c.GetString(), c.GetStringLength()) : "";
               if (code.size() != 3 || !std::ranges::all_of(code, [](char ch) { return ch >= 'A' && ch <= 'Z'; }))
                 return r.problem(cat, "must be a currency code of three capital letters, e.g. \"USD\"");
               prices.currency = code;
             }},
            r.nested("default",
                     [&](const Value& d, const std::string& dat) { read_category_prices(r, d, dat, prices.base); }),
            r.nested("markets", [&](const Value& m, const std::string& mat) {
              if (!m.IsObject()) return r.problem(mat, "must be an object: country calling code -> prices");
              for (const auto& market : m.GetObject()) {
                const std::string code(market.name.GetString(), market.name.GetStringLength());
                if (code == "$comment") continue;
                const std::string here = mat + "/" + text::pointer_token(code);
                if (code.empty() || code.size() > 6 ||
                    !std::ranges::all_of(code, [](char ch) { return ch >= '0' && ch <= '9'; })) {
                  r.problem(here, "must be a country calling code: 1 to 6 digits, without \"+\"");
                  continue;
                }
                read_category_prices(r, market.value, here, prices.markets[code]);
              }
            })});
  if (v.IsObject() && !has_currency) r.problem(at + "/currency", "is required with prices (e.g. \"USD\")");
}

std::unique_ptr<connectors::Section> read(const config::ChannelSection& section, json::SettingsReader& r,
                                          const config::Config& config) {
  const auto document = r.document(section.json, section.at);
  if (!document) return nullptr;
  const Value& v = *document;
  const std::string& at = section.at;
  SectionSettings wa;
  wa.max_body_bytes = config.http.max_body_bytes;
  const std::size_t before = r.problems().size();
  r.object(
      v, at,
      {r.boolean("enabled", wa.enabled), r.string("graph_base_url", wa.graph_base_url),
       r.string("phone_number_id", wa.phone_number_id), r.string("access_token_env", wa.access_token_env),
       r.string("app_secret_env", wa.app_secret_env), r.string("verify_token_env", wa.verify_token_env),
       r.boolean("typing_indicator", wa.typing_indicator), r.string("waba_id", wa.waba_id),
       r.integer("template_refresh_minutes", wa.template_refresh_minutes, 1, 10'080),
       r.nested("prices", [&](const Value& p, const std::string& pat) { read_message_prices(r, p, pat, wa.prices); }),
       r.message_types(wa.message_types)});
  if (wa.enabled) {
    if (!json::SettingsReader::is_url(wa.graph_base_url)) r.problem(at + "/graph_base_url", "must be an http(s) URL");
    r.require(at,
              {{"phone_number_id", &wa.phone_number_id},
               {"access_token_env", &wa.access_token_env},
               {"app_secret_env", &wa.app_secret_env},
               {"verify_token_env", &wa.verify_token_env}},
              "when whatsapp is enabled");
    if (!std::ranges::all_of(wa.waba_id, [](char ch) { return ch >= '0' && ch <= '9'; }) || wa.waba_id.size() > 32)
      r.problem(at + "/waba_id", "must be the business account's id: digits");
  }
  if (r.problems().size() != before) return nullptr;
  return std::make_unique<WhatsAppSection>(std::move(wa));
}

}  // namespace

std::vector<connectors::SecretKey> WhatsAppSection::secrets() const {
  return {{"connectors.whatsapp.access_token_env", m_settings.access_token_env},
          {"connectors.whatsapp.app_secret_env", m_settings.app_secret_env},
          {"connectors.whatsapp.verify_token_env", m_settings.verify_token_env}};
}

std::expected<std::unique_ptr<connectors::Channel>, std::string> WhatsAppSection::make(
    const connectors::ChannelDeps& deps) const {
  const SectionSettings& wa = m_settings;
  ChannelSettings settings{{wa.graph_base_url, wa.phone_number_id, {}}, {}, {}, wa.max_body_bytes};
  settings.typing_indicator = wa.typing_indicator;
  settings.waba_id = wa.waba_id;
  settings.prices = wa.prices;
  settings.template_refresh = std::chrono::minutes(wa.template_refresh_minutes);
  for (auto [name, target] :
       {std::pair{wa.access_token_env, &settings.account.access_token},
        std::pair{wa.app_secret_env, &settings.app_secret}, std::pair{wa.verify_token_env, &settings.verify_token}}) {
    auto value = config::read_secret(name);
    if (!value) return std::unexpected("connectors.whatsapp: " + value.error());
    *target = std::move(*value);
  }
  return std::make_unique<WhatsAppChannel>(deps, std::move(settings));
}

// Template actions need the templates listed from the business account (waba_id), whether
// or not the channel is enabled yet: the catalog names them either way.
connectors::CatalogCheck WhatsAppSection::check_catalog(const catalog::Catalog& catalog,
                                                        const connectors::OpenDatabase& open) const {
  connectors::CatalogCheck out;
  if (std::ranges::none_of(catalog.actions(), [](const auto& a) { return a.template_message.has_value(); })) return out;
  if (m_settings.waba_id.empty()) {
    out.problems.push_back(
        "the catalog has template actions, but connectors.whatsapp.waba_id is not set: "
        "no templates are listed to send them with");
    return out;
  }
  auto db = open();
  auto stored = db ? store::list_templates(*db) : std::unexpected(store::Error::internal(db.error()));
  if (!stored) {
    out.notes.push_back("template actions not checked: the database cannot be read (" + stored.error().message + ")");
  } else if (stored->empty()) {
    out.notes.push_back("template actions not checked: no templates are listed yet (dispatchd lists them at start)");
  } else {
    out.problems = check_template_actions(catalog, *stored);
  }
  return out;
}

const common::MessageTypes& default_types() {
  // The names of MessageKind (webhook.h); a test keeps the two lists equal.
  static const common::MessageTypes types = [] {
    common::MessageTypes out;
    using common::TypeAction;
    for (const char* type : {"text", "interactive", "button", "location"}) out[type] = {TypeAction::model, ""};
    for (const char* type : {"image", "video", "audio", "document", "contacts", "order", "unsupported", "unknown"})
      out[type] = {TypeAction::escalate, ""};
    for (const char* type : {"sticker", "reaction", "system"}) out[type] = {TypeAction::ignore, ""};
    return out;
  }();
  return types;
}

const connectors::Kind& kind() {
  static const connectors::Kind k{.name = k_channel_name,
                                  .label = "WhatsApp",
                                  .webhook_path = k_webhook_path,
                                  .resolves_unknown = false,
                                  .provider_ids_name_counterpart = true,
                                  .read = read};
  return k;
}

}  // namespace dispatchd::whatsapp
