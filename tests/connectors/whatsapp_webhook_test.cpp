#include <catch2/catch.hpp>

#include "connectors/whatsapp/webhook.h"
#include "tests/test_util.h"

using namespace dispatchd::whatsapp;

namespace {

constexpr std::string_view k_phone = "109876543210001";
constexpr std::string_view k_customer = "5215512345678";
constexpr std::int64_t k_time = 1796040000;

std::string fixture(const std::string& name) {
  return dispatchd::test::read_file(dispatchd::test::source_path("tests/data/whatsapp/" + name + ".json"));
}

Webhook parse_fixture(const std::string& name) {
  auto parsed = parse_webhook(fixture(name), k_phone);
  if (!parsed) FAIL(name << ": " << parsed.error().message);
  CHECK(parsed->skipped.empty());
  return std::move(*parsed);
}

const InboundMessage& only_message(const Webhook& webhook) {
  REQUIRE(webhook.messages.size() == 1);
  REQUIRE(webhook.statuses.empty());
  return webhook.messages.front();
}

WebhookError error_of(std::string_view body, const WebhookLimits& limits = {}) {
  auto parsed = parse_webhook(body, k_phone, limits);
  REQUIRE_FALSE(parsed.has_value());
  return parsed.error();
}

// A well-formed envelope around `value_members` (the members of the change's value).
std::string envelope(const std::string& value_members) {
  return R"({"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{)"
         R"("messaging_product":"whatsapp","metadata":{"display_phone_number":"15550001234","phone_number_id":")" +
         std::string(k_phone) + "\"}" + (value_members.empty() ? "" : "," + value_members) + "}}]}]}";
}

}  // namespace

TEST_CASE("webhook: every message fixture normalizes to the expected values") {
  struct Row {
    const char* fixture;
    MessageKind kind;
    const char* text;
    bool answerable;
    const char* reply_id;
  };
  const Row rows[] = {
      {"text", MessageKind::text, "Hola, \xC2\xBFtienen env\xC3\xADo a Monterrey?", true, ""},
      {"image", MessageKind::image, "[image: \xC2\xBFLo tienen en azul?]", false, ""},
      {"audio", MessageKind::audio, "[voice message]", false, ""},
      {"video", MessageKind::video, "[video: As\xC3\xAD lleg\xC3\xB3 la caja]", false, ""},
      {"document", MessageKind::document, "[document: factura-2026-10.pdf: Factura de octubre]", false, ""},
      {"sticker", MessageKind::sticker, "[sticker]", false, ""},
      {"location", MessageKind::location,
       "[location: Oficina Centro, Av. Constituci\xC3\xB3n 100, Monterrey, N.L. (25.686614, -100.316113)]", false, ""},
      {"contacts", MessageKind::contacts, "[contacts: Ana Ruiz, Jos\xC3\xA9]", false, ""},
      {"interactive_button_reply", MessageKind::interactive, "S\xC3\xAD, confirmar [reply id: confirm_order_1042]",
       true, "confirm_order_1042"},
      {"interactive_list_reply", MessageKind::interactive, "Lunes 10:00 [reply id: slot_2026-12-01_10]", true,
       "slot_2026-12-01_10"},
      {"button", MessageKind::button, "Rastrear pedido", true, "TRACK_ORDER"},
      {"reaction", MessageKind::reaction, "[reaction: \xF0\x9F\x91\x8D]", false, ""},
      {"unsupported", MessageKind::unsupported, "[unsupported message: Message type is currently not supported.]",
       false, ""},
  };
  for (const Row& row : rows) {
    INFO("fixture " << row.fixture);
    const Webhook webhook = parse_fixture(row.fixture);
    const InboundMessage& m = only_message(webhook);
    CHECK(m.id.starts_with("wamid."));
    CHECK(m.from == k_customer);
    CHECK(m.contact_name ==
          "Mar\xC3\xAD"
          "a L\xC3\xB3pez");
    CHECK(m.phone_number_id == k_phone);
    CHECK(m.timestamp.time_since_epoch().count() == k_time);
    CHECK(m.kind == row.kind);
    CHECK(m.type == to_string(row.kind));
    CHECK(m.text == row.text);
    CHECK(m.answerable == row.answerable);
    CHECK(m.reply_id == row.reply_id);
    // The raw message object, compact, parses back and is the message with this id.
    const auto raw = dispatchd::test::parse_json(m.raw_json);
    CHECK(raw["id"].GetString() == m.id);
    CHECK(m.raw_json.find('\n') == std::string::npos);
  }
}

TEST_CASE("webhook: media, context and errors details are kept") {
  SECTION("image") {
    const InboundMessage m = only_message(parse_fixture("image"));
    REQUIRE(m.media.has_value());
    CHECK(m.media->id == "1284637719384921");
    CHECK(m.media->mime_type == "image/jpeg");
    CHECK(m.media->caption == "\xC2\xBFLo tienen en azul?");
  }
  SECTION("voice note") {
    const InboundMessage m = only_message(parse_fixture("audio"));
    REQUIRE(m.media.has_value());
    CHECK(m.media->voice);
    CHECK(m.media->mime_type == "audio/ogg; codecs=opus");
  }
  SECTION("forwarded video") { CHECK(only_message(parse_fixture("video")).forwarded); }
  SECTION("document filename") {
    const InboundMessage m = only_message(parse_fixture("document"));
    REQUIRE(m.media.has_value());
    CHECK(m.media->filename == "factura-2026-10.pdf");
  }
  SECTION("a reply names the message it answers") {
    CHECK(only_message(parse_fixture("button")).context_id.starts_with("wamid.HBgN"));
  }
  SECTION("a reaction names the message it reacts to") {
    CHECK(only_message(parse_fixture("reaction")).context_id.starts_with("wamid.HBgN"));
  }
  SECTION("unsupported carries Meta's error") {
    const InboundMessage m = only_message(parse_fixture("unsupported"));
    REQUIRE(m.errors.size() == 1);
    CHECK(m.errors[0].code == 131051);
    CHECK(m.errors[0].title == "Message type unknown");
    CHECK_FALSE(m.media.has_value());
  }
}

TEST_CASE("webhook: status fixtures give the status of our message") {
  struct Row {
    const char* fixture;
    DeliveryStatus status;
    std::int64_t after;
    const char* tracker;
  };
  const Row rows[] = {
      {"status_sent", DeliveryStatus::sent, 60, "dispatchd-42-1"},
      {"status_delivered", DeliveryStatus::delivered, 62, ""},
      {"status_read", DeliveryStatus::read, 300, ""},
      {"status_failed_131047", DeliveryStatus::failed, 90061, "dispatchd-42-1"},
  };
  for (const Row& row : rows) {
    INFO("fixture " << row.fixture);
    const Webhook webhook = parse_fixture(row.fixture);
    REQUIRE(webhook.messages.empty());
    REQUIRE(webhook.statuses.size() == 1);
    const StatusEvent& s = webhook.statuses.front();
    CHECK(s.id == "wamid.HBgNNTIxNTUxMjM0NTY3OBUCABEYEjc3QUJDREVGMDEyMzQ1Njc4OQA=");
    CHECK(s.status == row.status);
    CHECK(s.recipient_id == k_customer);
    CHECK(s.timestamp.time_since_epoch().count() == k_time + row.after);
    CHECK(s.tracker == row.tracker);
    CHECK(s.errors.empty() == (row.status != DeliveryStatus::failed));
  }
}

TEST_CASE("webhook: a status's pricing object is read as Meta sends it") {
  const Webhook sent = parse_fixture("status_sent");
  REQUIRE(sent.statuses.at(0).pricing.has_value());
  CHECK(sent.statuses[0].pricing->category == "service");
  CHECK(sent.statuses[0].pricing->pricing_model == "PMP");
  CHECK(sent.statuses[0].pricing->type == "free_customer_service");
  CHECK_FALSE(sent.statuses[0].pricing->billable);
  CHECK(sent.statuses[0].conversation_origin == "service");
  CHECK_FALSE(parse_fixture("status_read").statuses.at(0).pricing.has_value());

  struct Row {
    const char* pricing;  // the status's pricing member, JSON
    bool present;
    bool billable;
    const char* model;
    const char* category;
    const char* type;
  };
  const Row rows[] = {
      {R"({"billable":true,"pricing_model":"PMP","category":"marketing","type":"regular"})", true, true, "PMP",
       "marketing", "regular"},
      {R"({"billable":true,"pricing_model":"CBP","category":"authentication_international"})", true, true, "CBP",
       "authentication_international", ""},
      {R"({"billable":"yes","pricing_model":"PMP","category":"utility"})", true, false, "PMP", "utility", ""},
      {R"({"category":"marketing_lite"})", true, false, "", "marketing_lite", ""},
      {R"({"billable":true,"pricing_model":"PMP"})", false, false, "", "", ""},
      {R"({"billable":true,"category":7})", false, false, "", "", ""},
      {R"("marketing")", false, false, "", "", ""},
  };
  for (const Row& row : rows) {
    INFO(row.pricing);
    const std::string body =
        R"({"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{)"
        R"("metadata":{"phone_number_id":"109876543210001"},"statuses":[{"id":"wamid.P","status":"sent",)"
        R"("timestamp":"1796040000","recipient_id":"5215512345678","pricing":)" +
        std::string(row.pricing) + "}]}}]}]}";
    auto parsed = parse_webhook(body, k_phone);
    REQUIRE(parsed);
    REQUIRE(parsed->statuses.size() == 1);
    const auto& pricing = parsed->statuses[0].pricing;
    REQUIRE(pricing.has_value() == row.present);
    if (!pricing) continue;
    CHECK(pricing->billable == row.billable);
    CHECK(pricing->pricing_model == row.model);
    CHECK(pricing->category == row.category);
    CHECK(pricing->type == row.type);
  }
}

TEST_CASE("webhook: a failed status's error classifies like a send error") {
  const Webhook webhook = parse_fixture("status_failed_131047");
  const StatusEvent& s = webhook.statuses.at(0);
  REQUIRE(s.errors.size() == 1);
  const GraphError& e = s.errors[0];
  CHECK(e.code == 131047);
  CHECK(e.http_status == 0);
  CHECK(e.title == "Re-engagement message");
  CHECK(e.details.starts_with("Message failed to send because more than 24 hours"));
  CHECK(classify(e) == ErrorClass::window_closed);
}

TEST_CASE("webhook: several messages in one payload keep their order and senders") {
  const Webhook webhook = parse_fixture("multiple_messages");
  REQUIRE(webhook.messages.size() == 3);
  CHECK(webhook.messages[0].text == "Buenas tardes");
  CHECK(webhook.messages[1].text == "Mi pedido es el 1042");
  CHECK(webhook.messages[2].text ==
        "\xC2\xBF"
        "A qu\xC3\xA9 hora abren?");
  CHECK(webhook.messages[0].from == k_customer);
  CHECK(webhook.messages[2].from == "5215598765432");
  CHECK(webhook.messages[2].contact_name == "Luis P\xC3\xA9rez");
  CHECK(webhook.messages[1].timestamp.time_since_epoch().count() == k_time + 5);
}

TEST_CASE("webhook: a payload for another phone number is reported, not returned") {
  const Webhook webhook = parse_fixture("other_phone_number");
  CHECK(webhook.messages.empty());
  CHECK(webhook.statuses.empty());
  REQUIRE(webhook.foreign.size() == 1);
  CHECK(webhook.foreign[0].phone_number_id == "109876543219999");
  CHECK(webhook.foreign[0].messages == 1);
  CHECK(webhook.foreign[0].statuses == 1);

  SECTION("an unconfigured phone number matches nothing") {
    const auto parsed = parse_webhook(fixture("text"), "");
    REQUIRE(parsed.has_value());
    CHECK(parsed->messages.empty());
    CHECK(parsed->foreign.size() == 1);
  }
}

TEST_CASE("webhook: other fields, Meta's own errors and unknown types are reported") {
  const std::string body =
      R"({"object":"whatsapp_business_account","entry":[{"id":"1","changes":[)"
      R"({"field":"account_update","value":{"event":"VERIFIED_ACCOUNT"}},)"
      R"({"field":"messages","value":{"messaging_product":"whatsapp","metadata":{"phone_number_id":"109876543210001"},)"
      R"("errors":[{"code":131000,"title":"Something went wrong","message":"Something went wrong",)"
      R"("error_data":{"details":"Unsupported webhook payload"}}],)"
      R"("messages":[{"from":"5215512345678","id":"wamid.X1","timestamp":"1796040000","type":"poll_vote","poll_vote":{}},)"
      R"({"from":"5215512345678","id":"wamid.X2","timestamp":"1796040001","type":"interactive",)"
      R"("interactive":{"type":"nfm_reply","nfm_reply":{"response_json":"{}","body":"Sent","name":"flow"}}},)"
      R"({"from":"5215512345678","id":"wamid.X3","timestamp":1796040002,"type":"text","text":{"body":" \n "}},)"
      R"({"from":"5215512345678","id":"wamid.X4","timestamp":"1796040003","type":"reaction","reaction":{"message_id":"wamid.A"}},)"
      R"({"from":"5215512345678","id":"wamid.X5","timestamp":"1796040004","type":"system","system":{"body":"User changed number"}},)"
      R"({"from":"5215512345678","id":"wamid.X6","timestamp":"1796040005","type":"order","order":{"catalog_id":"1",)"
      R"("product_items":[{"product_retailer_id":"A","quantity":1},{"product_retailer_id":"B","quantity":2}]}}]}}]}]})";
  const auto parsed = parse_webhook(body, k_phone);
  REQUIRE(parsed.has_value());
  CHECK(parsed->other_fields == std::vector<std::string>{"account_update"});
  REQUIRE(parsed->errors.size() == 1);
  CHECK(parsed->errors[0].code == 131000);
  REQUIRE(parsed->messages.size() == 6);
  const auto& m = parsed->messages;
  CHECK(m[0].kind == MessageKind::unknown);
  CHECK(m[0].type == "poll_vote");
  CHECK(m[0].text == "[poll_vote message]");
  CHECK(m[1].kind == MessageKind::interactive);
  CHECK(m[1].text == "[interactive: nfm_reply]");
  CHECK(m[2].text == " \n ");                                      // a blank text body is nothing to answer
  CHECK(m[2].timestamp.time_since_epoch().count() == 1796040002);  // integer timestamps accepted too
  CHECK(m[3].text == "[reaction removed]");
  CHECK(m[4].text == "[system: User changed number]");
  CHECK(m[5].text == "[order: 2 items]");
  for (const auto& message : m) CHECK_FALSE(message.answerable);
}

TEST_CASE("webhook: elements without what they need are skipped, the rest kept") {
  const std::string body = envelope(
      R"("messages":[)"
      R"({"from":"5215512345678","timestamp":"1796040000","type":"text","text":{"body":"no id"}},)"
      R"({"id":"wamid.B","timestamp":"1796040000","type":"text","text":{"body":"no sender"}},)"
      R"({"id":"wamid.C","from":"5215512345678","timestamp":"yesterday","type":"text","text":{"body":"bad time"}},)"
      R"({"id":"wamid.D","from":"5215512345678","timestamp":"1796040000","text":{"body":"no type"}},)"
      R"("not an object",)"
      R"({"id":"wamid.OK","from":"5215512345678","timestamp":"1796040000","type":"text","text":{"body":"fine"}}],)"
      R"("statuses":[{"status":"sent","timestamp":"1796040000"},{"id":"wamid.S","status":"read","timestamp":"-1"},)"
      R"({"id":"wamid.S2","status":"deleted","timestamp":"1796040000","recipient_id":"1"}])");
  const auto parsed = parse_webhook(body, k_phone);
  REQUIRE(parsed.has_value());
  REQUIRE(parsed->messages.size() == 1);
  CHECK(parsed->messages[0].id == "wamid.OK");
  REQUIRE(parsed->statuses.size() == 1);
  CHECK(parsed->statuses[0].status == DeliveryStatus::other);
  CHECK(parsed->statuses[0].status_text == "deleted");
  REQUIRE(parsed->skipped.size() == 7);
  CHECK(parsed->skipped[0].pointer == "/entry/0/changes/0/value/messages/0");
  CHECK(parsed->skipped[0].reason == "no \"id\"");
  CHECK(parsed->skipped[1].reason == "no \"from\"");
  CHECK(parsed->skipped[2].reason == "\"timestamp\" is not unix seconds");
  CHECK(parsed->skipped[3].reason == "no \"type\"");
  CHECK(parsed->skipped[4].reason == "message is not an object");
  CHECK(parsed->skipped[5].pointer == "/entry/0/changes/0/value/statuses/0");
  CHECK(parsed->skipped[6].reason == "\"timestamp\" is not unix seconds");
}

TEST_CASE("webhook: malformed bodies and wrong shapes are errors with a clear message") {
  struct Row {
    std::string body;
    WebhookErrorCode code;
    const char* says;
  };
  const Row rows[] = {
      {"", WebhookErrorCode::not_json, "not JSON"},
      {"{\"object\":", WebhookErrorCode::not_json, "not JSON"},
      {"{\"object\":\"whatsapp_business_account\",\"object\":\"x\",\"entry\":[]}", WebhookErrorCode::not_json,
       "duplicate key"},
      {"{\"a\":\"\xC3\x28\"}", WebhookErrorCode::not_json, "not JSON"},
      {"{\"a\":\"\\udc00\"}", WebhookErrorCode::not_json, "not JSON"},
      {"[]", WebhookErrorCode::wrong_shape, "/: not an object"},
      {R"({"object":"page","entry":[]})", WebhookErrorCode::wrong_shape, "/object"},
      {R"({"entry":[]})", WebhookErrorCode::wrong_shape, "/object"},
      {R"({"object":"whatsapp_business_account"})", WebhookErrorCode::wrong_shape, "/entry"},
      {R"({"object":"whatsapp_business_account","entry":{}})", WebhookErrorCode::wrong_shape, "/entry"},
      {R"({"object":"whatsapp_business_account","entry":[1]})", WebhookErrorCode::wrong_shape, "/entry/0"},
      {R"({"object":"whatsapp_business_account","entry":[{"id":"1"}]})", WebhookErrorCode::wrong_shape,
       "/entry/0/changes"},
      {R"({"object":"whatsapp_business_account","entry":[{"changes":[{"value":{}}]}]})", WebhookErrorCode::wrong_shape,
       "/entry/0/changes/0/field"},
      {R"({"object":"whatsapp_business_account","entry":[{"changes":[{"field":"messages","value":[]}]}]})",
       WebhookErrorCode::wrong_shape, "/entry/0/changes/0/value"},
      {R"({"object":"whatsapp_business_account","entry":[{"changes":[{"field":"messages","value":{}}]}]})",
       WebhookErrorCode::wrong_shape, "/entry/0/changes/0/value/metadata/phone_number_id"},
      {envelope(R"("messages":{})"), WebhookErrorCode::wrong_shape, "/entry/0/changes/0/value/messages: not an array"},
      {envelope(R"("statuses":"x")"), WebhookErrorCode::wrong_shape, "/entry/0/changes/0/value/statuses: not an array"},
  };
  for (const Row& row : rows) {
    INFO("body: " << row.body);
    const WebhookError error = error_of(row.body);
    CHECK(error.code == row.code);
    CHECK(error.http_status() == 400);
    CHECK_THAT(error.message, Catch::Contains(row.says));
  }
}

TEST_CASE("webhook: huge, deep or crowded bodies are refused before any work") {
  SECTION("over the byte limit: 413") {
    const std::string body = fixture("text");
    const WebhookError error = error_of(body, {.max_bytes = body.size() - 1});
    CHECK(error.code == WebhookErrorCode::too_large);
    CHECK(error.http_status() == 413);
    CHECK(parse_webhook(body, k_phone, {.max_bytes = body.size()}).has_value());
  }
  SECTION("deeper than the nesting limit, without recursion") {
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    const WebhookError error = error_of(deep, {.max_bytes = 1 << 20, .max_depth = 20});
    CHECK(error.code == WebhookErrorCode::not_json);
    CHECK_THAT(error.message, Catch::Contains("nesting"));
    // The fixtures are well within the default limit.
    CHECK(parse_webhook(fixture("contacts"), k_phone, {.max_depth = 12}).has_value());
  }
  SECTION("more events than allowed: 413") {
    std::string statuses;
    for (int i = 0; i < 5; ++i) {
      if (i > 0) statuses += ",";
      statuses += R"({"id":"wamid.)" + std::to_string(i) + R"(","status":"read","timestamp":"1796040000"})";
    }
    const std::string body = envelope("\"statuses\":[" + statuses + "]");
    CHECK(error_of(body, {.max_events = 4}).code == WebhookErrorCode::too_large);
    CHECK(parse_webhook(body, k_phone, {.max_events = 5})->statuses.size() == 5);
  }
  SECTION("over-long identifiers are skipped, not stored") {
    const std::string body = envelope(R"("messages":[{"id":"wamid.)" + std::string(600, 'x') +
                                      R"(","from":"1","timestamp":"1","type":"text","text":{"body":"x"}}])");
    const auto parsed = parse_webhook(body, k_phone);
    REQUIRE(parsed.has_value());
    CHECK(parsed->messages.empty());
    CHECK(parsed->skipped.size() == 1);
  }
}

TEST_CASE("webhook: every truncation and many byte changes of the fixtures end in a value, never a crash") {
  for (const char* name : {"text", "contacts", "interactive_list_reply", "status_failed_131047", "multiple_messages"}) {
    INFO("fixture " << name);
    const std::string body = fixture(name);
    const std::size_t last_brace = body.rfind('}');
    for (std::size_t length = 0; length <= last_brace; ++length) {
      const auto parsed = parse_webhook(std::string_view(body).substr(0, length), k_phone);
      // A JSON document cut anywhere before its closing brace is incomplete.
      CHECK_FALSE(parsed.has_value());
    }
    std::uint32_t seed = 12345;
    for (int round = 0; round < 2000; ++round) {
      seed = seed * 1103515245u + 12345u;
      std::string changed = body;
      changed[(seed >> 8) % changed.size()] = static_cast<char>(seed >> 24);
      const auto parsed = parse_webhook(changed, k_phone);
      if (parsed)
        CHECK(parsed->messages.size() + parsed->statuses.size() + parsed->skipped.size() + parsed->foreign.size() <= 3);
    }
  }
}
