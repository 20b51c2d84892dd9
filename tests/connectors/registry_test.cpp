// The channel registry (connectors/registry.h): every channel reads its own section of the
// configuration with the file's JSON pointers, and the registry reports a section for a
// channel that does not exist. WhatsApp's and Gmail's sections are the examples.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "config/config.h"
#include "connectors/gmail/section.h"
#include "connectors/imap/section.h"
#include "connectors/registry.h"
#include "connectors/whatsapp/section.h"
#include "tests/test_util.h"

using namespace dispatchd;
using store::PricingCategory;

namespace {

using Channels = std::vector<connectors::Configured>;

constexpr const char* k_minimal = R"({
  "catalog": "catalog.json",
  "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9000/v1", "model": "m", "api_key_env": "K"}
})";

// The file's problems, else the channels'.
std::expected<Channels, std::vector<std::string>> channels_of(const std::string& text,
                                                              const std::string& path = "d.json") {
  auto c = config::parse(text, path);
  if (!c) return std::unexpected(c.error());
  return connectors::configure(*c);
}

const connectors::Section& section_of(const Channels& channels, std::string_view name) {
  const auto found = std::ranges::find_if(channels, [&](const auto& c) { return c.kind->name == name; });
  REQUIRE(found != channels.end());
  return *found->section;
}

const whatsapp::SectionSettings& whatsapp_of(const Channels& channels) {
  return dynamic_cast<const whatsapp::WhatsAppSection&>(section_of(channels, "whatsapp")).settings();
}

const gmail::SectionSettings& gmail_of(const Channels& channels) {
  return dynamic_cast<const gmail::GmailSection&>(section_of(channels, "gmail")).settings();
}

// k_minimal with connectors.whatsapp.message_types set to `types` (JSON text).
std::expected<Channels, std::vector<std::string>> with_message_types(const std::string& types) {
  std::string text = k_minimal;
  text.insert(text.rfind('}'), R"(, "connectors": {"whatsapp": {"message_types": )" + types + "}}");
  return channels_of(text);
}

bool any_contains(const std::vector<std::string>& problems, const std::string& needle) {
  return std::ranges::any_of(problems, [&](const std::string& p) { return p.find(needle) != std::string::npos; });
}

constexpr std::string_view k_wa_prices_base = R"({"catalog": "c.json", "llm": {"provider": "openai",
    "base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": "K"})";

std::expected<Channels, std::vector<std::string>> wa_prices(const std::string& prices) {
  return channels_of(std::string(k_wa_prices_base) + R"(, "connectors": {"whatsapp": {"prices": )" + prices + "}}}",
                     "/etc/d.json");
}

bool has_price_problem(const std::vector<std::string>& problems, const std::string& expected) {
  return std::ranges::find(problems, expected) != problems.end();
}

}  // namespace

TEST_CASE("channels: every kind is registered once, by a name the store can hold", "[connectors][registry]") {
  const auto names = connectors::kind_names();
  REQUIRE_FALSE(names.empty());
  for (const auto* kind : connectors::kinds()) {
    CAPTURE(kind->name);
    CHECK(std::ranges::count(names, std::string(kind->name)) == 1);
    CHECK(connectors::find_kind(kind->name) == kind);
    CHECK_FALSE(kind->label.empty());
    CHECK(kind->read != nullptr);
    CHECK(std::ranges::all_of(kind->name, [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; }));
  }
  CHECK(connectors::find_kind("sms") == nullptr);
}

TEST_CASE("channels: without a section every kind has its defaults and is off", "[connectors][registry]") {
  auto c = channels_of(k_minimal);
  if (!c) FAIL(c.error().front());
  REQUIRE(c->size() == connectors::kinds().size());
  for (const auto& [kind, section] : *c) {
    CAPTURE(kind->name);
    CHECK_FALSE(section->enabled());
    CHECK_FALSE(section->message_types().empty());
  }
}

TEST_CASE("channels: the shipped example's channels", "[connectors][registry]") {
  auto c = channels_of(test::read_file(test::source_path("config/examples/dispatchd.json")),
                       test::source_path("config/examples/dispatchd.json"));
  if (!c) FAIL(c.error().front());
  using common::TypeAction;
  CHECK(section_of(*c, "whatsapp").enabled());
  CHECK(whatsapp_of(*c).message_types.at("location").action == TypeAction::reply);
  CHECK(whatsapp_of(*c).message_types.at("sticker").action == TypeAction::ignore);  // a default
  // Gmail's loop prevention: ignored by default, each type configurable.
  CHECK(gmail_of(*c).message_types.at("email").action == TypeAction::model);
  for (const char* type : {"own", "auto_reply", "list", "bounce", "no_reply"})
    CHECK(gmail_of(*c).message_types.at(type).action == TypeAction::ignore);
  CHECK(gmail_of(*c).message_types.at("undecodable").action == TypeAction::escalate);
  CHECK(gmail_of(*c).unknown_recheck_s == 60);
}

TEST_CASE("channels: every problem of every section is reported with its pointer", "[connectors][registry]") {
  std::string text = k_minimal;
  text.insert(text.rfind('}'), R"(, "connectors": {"whatsapp": {"enabled": true, "phone_numbr_id": "1"},
    "gmail": {"enabled": true, "poll_interval_s": 0}, "sms": {"enabled": true}})");
  auto c = channels_of(text);
  REQUIRE_FALSE(c);
  const auto& p = c.error();
  CAPTURE(p);
  CHECK(any_contains(p, "d.json: /connectors/whatsapp/app_secret_env: is required when whatsapp is enabled"));
  CHECK(any_contains(p, "d.json: /connectors/whatsapp/phone_numbr_id: unknown key (known here: enabled,"));
  CHECK(any_contains(p, "d.json: /connectors/gmail/poll_interval_s: must be an integer from 1 to 86400"));
  CHECK(any_contains(p, "d.json: /connectors/gmail/client_id_env: is required when gmail is enabled"));
  CHECK(any_contains(p, "d.json: /connectors/sms: unknown key (known here: whatsapp, gmail, imap): no such channel"));
  const auto not_object =
      channels_of(std::string(k_minimal).insert(std::string(k_minimal).rfind('}'), R"(, "connectors": {"gmail": 3})"));
  REQUIRE_FALSE(not_object);
  CHECK(any_contains(not_object.error(), "d.json: /connectors/gmail: must be an object"));
}

TEST_CASE("channels: the file's problems and the sections' come in one list", "[connectors][registry]") {
  const std::string text = R"({"catalog": "c.json", "llm": {"provider": "openai", "base_url": "x", "model": "m",
    "api_key_env": "K"}, "connectors": {"gmail": {"enabled": true}}})";
  auto c = config::parse(text, "d.json", connectors::section_problems);
  REQUIRE_FALSE(c);
  CAPTURE(c.error());
  CHECK(any_contains(c.error(), "d.json: /llm/base_url: must be an http:// or https:// URL"));
  CHECK(any_contains(c.error(), "d.json: /connectors/gmail/client_id_env: is required when gmail is enabled"));
  CHECK(config::parse(k_minimal, "d.json", connectors::section_problems).has_value());
}

TEST_CASE("channels: an enabled channel's secrets are its own, named by their keys", "[connectors][registry]") {
  std::string text = k_minimal;
  text.insert(text.rfind('}'), R"(, "connectors": {"gmail": {"enabled": true, "client_id_env": "A",
    "client_secret_env": "B", "refresh_token_env": "C"}})");
  auto c = channels_of(text);
  if (!c) FAIL(c.error().front());
  const auto secrets = section_of(*c, "gmail").secrets();
  REQUIRE(secrets.size() == 3);
  CHECK(secrets[0].key == "connectors.gmail.client_id_env");
  CHECK(secrets[0].name == "A");
  CHECK(secrets[2].name == "C");
  CHECK(section_of(*c, "gmail").enabled());
  CHECK_FALSE(section_of(*c, "whatsapp").enabled());
}

TEST_CASE("channels: message types default to the model for words, escalation for media, ignore for reactions",
          "[connectors][registry]") {
  auto c = channels_of(k_minimal);
  REQUIRE(c);
  using common::TypeAction;
  const auto& types = whatsapp_of(*c).message_types;
  const std::pair<const char*, TypeAction> expected[] = {
      {"text", TypeAction::model},     {"interactive", TypeAction::model},    {"button", TypeAction::model},
      {"location", TypeAction::model}, {"image", TypeAction::escalate},       {"video", TypeAction::escalate},
      {"audio", TypeAction::escalate}, {"document", TypeAction::escalate},    {"contacts", TypeAction::escalate},
      {"order", TypeAction::escalate}, {"unsupported", TypeAction::escalate}, {"unknown", TypeAction::escalate},
      {"sticker", TypeAction::ignore}, {"reaction", TypeAction::ignore},      {"system", TypeAction::ignore}};
  CHECK(types.size() == std::size(expected));
  for (const auto& [type, action] : expected) {
    CAPTURE(type);
    REQUIRE(types.contains(type));
    CHECK(types.at(type).action == action);
  }
}

TEST_CASE("channels: message types given replace their defaults, the others stay", "[connectors][registry]") {
  auto c = with_message_types(R"({
    "$comment": "per type",
    "image": "model", "sticker": "escalate", "text": "model", "unknown": "ignore",
    "location": {"reply": "Gracias, recibimos tu ubicación."}})");
  if (!c) FAIL(c.error().front());
  using common::TypeAction;
  const auto& types = whatsapp_of(*c).message_types;
  CHECK(types.at("image").action == TypeAction::model);
  CHECK(types.at("sticker").action == TypeAction::escalate);
  CHECK(types.at("unknown").action == TypeAction::ignore);
  CHECK(types.at("location") == common::TypeHandling{TypeAction::reply, "Gracias, recibimos tu ubicación."});
  CHECK(types.at("reaction").action == TypeAction::ignore);  // untouched default
  CHECK(types.at("video").action == TypeAction::escalate);
}

TEST_CASE("channels: every bad message type value is reported with its pointer", "[connectors][registry]") {
  auto c = with_message_types(R"({
    "imgae": "escalate",
    "sticker": "drop",
    "audio": "reply",
    "video": 3,
    "document": {},
    "location": {"reply": "   "},
    "contacts": {"reply": "ok", "text": "x"},
    "button": {"reply": 7}})");
  REQUIRE_FALSE(c);
  const auto& p = c.error();
  CAPTURE(p);
  const std::string at = "d.json: /connectors/whatsapp/message_types/";
  CHECK(any_contains(p, at + "imgae: unknown message type (did you mean \"image\"?); known: audio, button,"));
  CHECK(any_contains(
      p, at + R"(sticker: must be "model", "escalate", "ignore" or {"reply": "the text to send"}, not "drop")"));
  CHECK(any_contains(p, at + R"(audio: "reply" needs its text)"));
  CHECK(any_contains(p, at + R"(video: must be "model", "escalate", "ignore" or {"reply")"));
  CHECK(any_contains(p, at + R"(document: needs "reply": the text to send)"));
  CHECK(any_contains(p, at + "location/reply: must not be blank"));
  CHECK(any_contains(p, at + "contacts/text: unknown key (known here: reply)"));
  CHECK(any_contains(p, at + "button/reply: must be a string or null"));
  CHECK(p.size() == 8);

  auto not_object = with_message_types(R"("escalate")");
  REQUIRE_FALSE(not_object);
  CHECK(any_contains(not_object.error(), "/connectors/whatsapp/message_types: must be an object"));
}

TEST_CASE("channels: a fixed reply is valid UTF-8 of at most 4096 characters", "[connectors][registry]") {
  const auto reply = [](const std::string& text) {
    return with_message_types(R"({"order": {"reply": ")" + text + "\"}}");
  };
  auto bad = reply("caf\xC3");
  REQUIRE_FALSE(bad);
  CHECK(any_contains(bad.error(), "/message_types/order/reply: must be valid UTF-8"));
  std::string longest;
  for (int i = 0; i < 4096; ++i) longest += "ñ";
  auto ok = reply(longest);
  if (!ok) FAIL(ok.error().front());
  CHECK(whatsapp_of(*ok).message_types.at("order").reply_text == longest);
  auto too_long = reply(longest + "a");
  REQUIRE_FALSE(too_long);
  CHECK(any_contains(too_long.error(), "/message_types/order/reply: must be at most 4096 characters"));
}

TEST_CASE("channels: connectors.whatsapp.prices by default and per market", "[connectors][registry][cost]") {
  auto c = wa_prices(R"({"currency": "USD", "$comment": "Meta's rate card",
    "default": {"marketing": 0.025, "utility": 0.004, "authentication": 0.0035, "service": 0},
    "markets": {"52": {"marketing": 0.0436}, "1876": {"marketing": 0.08, "utility": 0.01}}})");
  if (!c) FAIL(c.error().front());
  const auto& p = whatsapp_of(*c).prices;
  CHECK(p.currency == "USD");
  CHECK(p.base.size() == 4);
  CHECK(p.base.at(PricingCategory::authentication) == 0.0035);
  CHECK(p.base.at(PricingCategory::service) == 0);
  REQUIRE(p.markets.size() == 2);
  CHECK(p.markets.at("52").at(PricingCategory::marketing) == 0.0436);
  CHECK(p.markets.at("1876").size() == 2);
}

TEST_CASE("channels: without connectors.whatsapp.prices nothing is priced", "[connectors][registry][cost]") {
  auto c = channels_of(std::string(k_wa_prices_base) + "}", "/etc/d.json");
  REQUIRE(c);
  CHECK(whatsapp_of(*c).prices.empty());
  CHECK(whatsapp_of(*c).prices.currency.empty());
}

TEST_CASE("channels: connectors.whatsapp.prices mistakes name their key", "[connectors][registry][cost]") {
  struct Row {
    const char* prices;
    const char* problem;
  };
  const Row rows[] = {
      {R"({"default": {"marketing": 0.025}})",
       "/etc/d.json: /connectors/whatsapp/prices/currency: is required with "
       "prices (e.g. \"USD\")"},
      {R"({"currency": "usd"})",
       "/etc/d.json: /connectors/whatsapp/prices/currency: must be a currency code of three "
       "capital letters, e.g. \"USD\""},
      {R"({"currency": "USD", "default": {"marketting": 0.025}})",
       "/etc/d.json: /connectors/whatsapp/prices/default/marketting: unknown pricing category; known: marketing, "
       "marketing_lite, utility, authentication, authentication_international, service, referral_conversion, "
       "unknown"},
      {R"({"currency": "USD", "default": {"marketing": -1}})",
       "/etc/d.json: /connectors/whatsapp/prices/default/marketing: must be a number from 0 to 100 (the price of one "
       "message)"},
      {R"({"currency": "USD", "default": {"marketing": "0.02"}})",
       "/etc/d.json: /connectors/whatsapp/prices/default/marketing: must be a number from 0 to 100 (the price of one "
       "message)"},
      {R"({"currency": "USD", "markets": {"+52": {"marketing": 0.04}}})",
       "/etc/d.json: /connectors/whatsapp/prices/markets/+52: must be a country calling code: 1 to 6 digits, without "
       "\"+\""},
      {R"({"currency": "USD", "markets": {"52": 0.04}})",
       "/etc/d.json: /connectors/whatsapp/prices/markets/52: must be an object: category -> price of one message"},
      {R"({"currency": "USD", "default": {}, "market": {}})",
       "/etc/d.json: /connectors/whatsapp/prices/market: unknown key (known here: currency, default, markets)"},
      {R"([0.025])", "/etc/d.json: /connectors/whatsapp/prices: must be an object"},
  };
  for (const Row& row : rows) {
    INFO(row.prices);
    auto c = wa_prices(row.prices);
    REQUIRE_FALSE(c);
    for (const auto& problem : c.error()) UNSCOPED_INFO(problem);
    CHECK(has_price_problem(c.error(), row.problem));
  }
}

TEST_CASE("channels: imap reads its mailboxes by name, each with its servers and one secret",
          "[connectors][registry]") {
  std::string text = k_minimal;
  text.insert(text.rfind('}'), R"(, "connectors": {"imap": {"enabled": true, "mailboxes": {
    "soporte": {"address": "soporte@tienda.example", "password_env": "SOPORTE_PW",
                "imap": {"host": "imap.tienda.example"}, "smtp": {"host": "smtp.tienda.example", "port": 465,
                "tls": "implicit"}, "sent_copy": "server", "poll_interval_s": 30},
    "ventas": {"address": "ventas@tienda.example", "user": "v", "oauth_token_env": "VENTAS_TOKEN",
               "imap": {"host": "h", "port": 143, "tls": "starttls"}, "smtp": {"host": "h"}}}}})");
  auto c = channels_of(text);
  if (!c) FAIL(c.error().front());
  const auto& section = dynamic_cast<const imap::ImapSection&>(section_of(*c, "imap"));
  CHECK(section.enabled());
  const auto& boxes = section.settings().mailboxes;
  REQUIRE(boxes.size() == 2);
  const imap::MailboxSettings& soporte = boxes[0].mailbox;
  CHECK(soporte.name == "soporte");
  CHECK(soporte.imap.host == "imap.tienda.example");
  CHECK(soporte.imap.port == 0);  // the TLS mode's port
  CHECK(soporte.imap.tls == imap::TlsMode::implicit);
  CHECK(soporte.smtp.port == 465);
  CHECK(soporte.smtp.tls == imap::TlsMode::implicit);
  CHECK(soporte.imap.user == "soporte@tienda.example");  // the address, by default
  CHECK(soporte.sent_copy == imap::SentCopy::server);
  CHECK(soporte.poll_interval == std::chrono::seconds(30));
  CHECK(soporte.folder == "INBOX");
  CHECK(soporte.handled_flag == "$Dispatchd");
  CHECK(boxes[1].mailbox.smtp.tls == imap::TlsMode::starttls);  // submission's default
  CHECK(boxes[1].mailbox.imap.tls == imap::TlsMode::starttls);
  CHECK(boxes[1].mailbox.smtp.user == "v");
  const auto secrets = section.secrets();
  REQUIRE(secrets.size() == 2);
  CHECK(secrets[0].key == "connectors.imap.mailboxes.soporte.password_env");
  CHECK(secrets[0].name == "SOPORTE_PW");
  CHECK(secrets[1].key == "connectors.imap.mailboxes.ventas.oauth_token_env");
  CHECK(section.message_types().at("bounce").action == common::TypeAction::ignore);
}

TEST_CASE("channels: imap's problems name the mailbox and the key", "[connectors][registry]") {
  std::string text = k_minimal;
  text.insert(text.rfind('}'), R"(, "connectors": {"imap": {"enabled": true, "mailboxes": {
    "Soporte": {},
    "a": {"address": "nope", "password_env": "P", "oauth_token_env": "T", "imap": {"port": 0, "tls": "ssl"},
          "sent_copy": "always", "poll_interval_s": 3600, "folder": "", "hots": 1}}}})");
  auto c = channels_of(text);
  REQUIRE_FALSE(c);
  const auto& p = c.error();
  CAPTURE(p);
  CHECK(any_contains(p, "d.json: /connectors/imap/mailboxes/Soporte: a mailbox's name is 1 to 64 of a-z"));
  CHECK(any_contains(p, "d.json: /connectors/imap/mailboxes/a/address: must be the mailbox's address"));
  CHECK(any_contains(p, "d.json: /connectors/imap/mailboxes/a: one of password_env and oauth_token_env must be set"));
  CHECK(any_contains(p, "d.json: /connectors/imap/mailboxes/a/imap/port: must be an integer from 1 to 65535"));
  CHECK(any_contains(p, "d.json: /connectors/imap/mailboxes/a/imap/tls: must be \"implicit\" or \"starttls\""));
  CHECK(any_contains(p, "d.json: /connectors/imap/mailboxes/a/imap/host: must be set"));
  CHECK(any_contains(p, "d.json: /connectors/imap/mailboxes/a/smtp: must be set"));
  CHECK(any_contains(p, "d.json: /connectors/imap/mailboxes/a/sent_copy: must be \"append\" or \"server\" or"));
  CHECK(any_contains(p, "d.json: /connectors/imap/mailboxes/a/poll_interval_s: must be an integer from 1 to 1500"));
  CHECK(any_contains(p, "d.json: /connectors/imap/mailboxes/a/folder: must not be empty"));
  CHECK(any_contains(p, "d.json: /connectors/imap/mailboxes/a/hots: unknown key (known here: address,"));
  std::string none = k_minimal;
  none.insert(none.rfind('}'), R"(, "connectors": {"imap": {"enabled": true}})");
  auto empty = channels_of(none);
  REQUIRE_FALSE(empty);
  CHECK(any_contains(empty.error(), "d.json: /connectors/imap/mailboxes: must name a mailbox when imap is enabled"));
}
