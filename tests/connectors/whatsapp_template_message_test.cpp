#include <catch2/catch.hpp>
#include <string>

#include "catalog/catalog.h"
#include "connectors/whatsapp/template_message.h"
#include "connectors/whatsapp/templates.h"
#include "tests/test_util.h"

using namespace dispatchd;
using template_send::Part;

namespace {

// A template as Graph lists it (components in Meta's shape), with its parameters read the
// way the refresh reads them.
store::Template stored(std::string name, std::string components,
                       store::ParameterFormat format = store::ParameterFormat::positional,
                       store::TemplateStatus status = store::TemplateStatus::approved) {
  store::Template t;
  t.name = std::move(name);
  t.language = "en_US";
  t.status = status;
  t.parameter_format = format;
  t.components = std::move(components);
  t.parameters = whatsapp::template_parameters(t.components);
  return t;
}

const char* const k_shipped_components =
    R"([{"type":"HEADER","format":"IMAGE","example":{"header_handle":["4::aW1h"]}},)"
    R"({"type":"BODY","text":"Your order {{1}} ships on {{2}}."},{"type":"FOOTER","text":"Thanks"},)"
    R"({"type":"BUTTONS","buttons":[{"type":"QUICK_REPLY","text":"Stop"},)"
    R"({"type":"URL","text":"Track","url":"https://shop.example/track/{{1}}"},{"type":"COPY_CODE","example":"X"}]}])";

}  // namespace

// The expected objects are Meta's documented shapes ("Template messages": header media by
// link, body text parameters in order, a button by sub_type and index as a string), which
// public SDKs send the same way (e.g. whatsapp-api-js's URLComponent/PayloadComponent/
// CopyComponent; captured requests such as {"type":"button","sub_type":"url","index":"0",
// "parameters":[{"type":"text","text":"123456"}]} for an authentication code).
TEST_CASE("template messages: the Graph object for a decided template", "[whatsapp]") {
  const auto shipped = stored("order_shipped", k_shipped_components);
  const template_send::TemplateSend send{"order_shipped",
                                         "en_US",
                                         {{Part::header, 0, "image", "https://cdn.example/box.png"},
                                          {Part::body, 0, "2", "Friday"},
                                          {Part::body, 0, "1", "A-1234"},
                                          {Part::button, 1, "1", "A-1234"}}};
  const auto object = whatsapp::template_object(send, shipped);
  REQUIRE(object.has_value());
  CHECK(*object ==
        R"({"name":"order_shipped","language":{"code":"en_US"},"components":[)"
        R"({"type":"header","parameters":[{"type":"image","image":{"link":"https://cdn.example/box.png"}}]},)"
        R"({"type":"body","parameters":[{"type":"text","text":"A-1234"},{"type":"text","text":"Friday"}]},)"
        R"({"type":"button","sub_type":"url","index":"1","parameters":[{"type":"text","text":"A-1234"}]}]})");

  SECTION("a named template names each parameter; quick replies carry a payload, copy codes a coupon") {
    const auto named = stored("welcome",
                              R"([{"type":"BODY","text":"Hi {{first_name}}, code {{code}}"},)"
                              R"({"type":"BUTTONS","buttons":[{"type":"QUICK_REPLY","text":"{{ack}}"},)"
                              R"({"type":"COPY_CODE","text":"{{coupon}}"}]}])",
                              store::ParameterFormat::named);
    const template_send::TemplateSend values{"welcome",
                                             "en_US",
                                             {{Part::body, 0, "first_name", "Ana"},
                                              {Part::body, 0, "code", "77"},
                                              {Part::button, 0, "ack", "STOP_PROMOS"},
                                              {Part::button, 1, "coupon", "SAVE10"}}};
    CHECK(whatsapp::template_object(values, named).value() ==
          R"({"name":"welcome","language":{"code":"en_US"},"components":[{"type":"body","parameters":[)"
          R"({"type":"text","parameter_name":"code","text":"77"},)"
          R"({"type":"text","parameter_name":"first_name","text":"Ana"}]},)"
          R"({"type":"button","sub_type":"quick_reply","index":"0","parameters":[{"type":"payload",)"
          R"("payload":"STOP_PROMOS"}]},{"type":"button","sub_type":"copy_code","index":"1","parameters":[)"
          R"({"type":"coupon_code","coupon_code":"SAVE10"}]}]})");
  }
  SECTION("a value written to look like more components stays one text parameter") {
    const std::string smuggled = R"(1"}]},{"type":"header","parameters":[{"type":"image","image":{"link":"x)";
    const template_send::TemplateSend values{
        "order_shipped",
        "en_US",
        {send.parameters[0], {Part::body, 0, "2", smuggled}, send.parameters[2], send.parameters[3]}};
    const auto escaped = whatsapp::template_object(values, shipped);
    REQUIRE(escaped.has_value());
    const auto doc = dispatchd::test::parse_json(*escaped);
    const auto& components = doc["components"];
    REQUIRE(components.Size() == 3);  // header, body, one button: no component more
    CHECK(std::string(components[1]["parameters"][1]["text"].GetString()) == smuggled);
  }
  SECTION("the request carries it as type template, with the tracker") {
    const whatsapp::GraphAccount account{"https://graph.facebook.com/v21.0", "109876543210001", "token"};
    const auto request = whatsapp::build_template_message(account, "5215512345678", *object, "dispatchd-9-1");
    REQUIRE(request.has_value());
    CHECK(request->url == "https://graph.facebook.com/v21.0/109876543210001/messages");
    CHECK(request->body == R"({"messaging_product":"whatsapp","recipient_type":"individual","to":"5215512345678",)"
                           R"("type":"template","template":)" +
                               *object + R"(,"biz_opaque_callback_data":"dispatchd-9-1"})");
  }
}

TEST_CASE("template messages: what does not fit the stored template is refused before any call", "[whatsapp]") {
  const auto shipped = stored("order_shipped", k_shipped_components);
  const auto with = [](std::vector<template_send::Parameter> parameters) {
    return template_send::TemplateSend{"order_shipped", "en_US", std::move(parameters)};
  };
  const template_send::Parameter image{Part::header, 0, "image", "https://cdn.example/box.png"};
  const template_send::Parameter one{Part::body, 0, "1", "A-1234"};
  const template_send::Parameter two{Part::body, 0, "2", "Friday"};
  const template_send::Parameter track{Part::button, 1, "1", "A-1234"};
  struct Row {
    template_send::TemplateSend send;
    const char* error;
  };
  const Row rows[] = {
      {with({image, one, track}),
       "the template order_shipped (en_US) does not fit: body parameter {{2}} is not filled"},
      {with({one, two, track}), "the template order_shipped (en_US) does not fit: the header's image has no link"},
      {with({{Part::header, 0, "video", "https://v"}, one, two, track}),
       "the template order_shipped (en_US) does not fit: the header's video does not fit: the template's header is "
       "image"},
      {with({image, one, two, track, {Part::body, 0, "3", "x"}}),
       "the template order_shipped (en_US) does not fit: the template has no body parameter {{3}}"},
      {with({image, one, {Part::body, 0, "2", std::string(1025, 'a')}, track}),
       "body parameter {{2}} must be 1 to 1024 characters of UTF-8"},
      {with({image, one, {Part::body, 0, "2", ""}, track}),
       "body parameter {{2}} must be 1 to 1024 characters of UTF-8"},
      {with({image, one, {Part::body, 0, "2", "Friday\n\nIgnore the above"}, track}),
       "body parameter {{2}} has a line break: WhatsApp refuses line breaks, tabs and more than 4 spaces in a row"},
      {with({image, {Part::body, 0, "1", "A-1234\tB"}, two, track}),
       "body parameter {{1}} has a tab: WhatsApp refuses line breaks, tabs and more than 4 spaces in a row"},
      {with({image, one, {Part::body, 0, "2", "Friday     later"}, track}),
       "body parameter {{2}} has more than 4 spaces in a row: WhatsApp refuses line breaks, tabs and more than 4 "
       "spaces in a row"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.error);
    const auto object = whatsapp::template_object(row.send, shipped);
    REQUIRE_FALSE(object.has_value());
    CHECK(object.error() == row.error);
  }
  SECTION("a text header's parameter is held to the same rule") {
    const auto titled = stored("titled", R"([{"type":"HEADER","format":"TEXT","text":"Order {{1}}"},)"
                                         R"({"type":"BODY","text":"On its way"}])");
    CHECK(
        whatsapp::template_object({"titled", "en_US", {{Part::header, 0, "1", "A-1\nFREE"}}}, titled).error() ==
        "header parameter {{1}} has a line break: WhatsApp refuses line breaks, tabs and more than 4 spaces in a row");
    CHECK(whatsapp::template_object({"titled", "en_US", {{Part::header, 0, "1", "A-1    B"}}}, titled).has_value());
  }
  SECTION("a body-only template's parameter may be far longer") {
    const auto plain = stored("note", R"([{"type":"BODY","text":"{{1}}"}])");
    CHECK(whatsapp::template_object({"note", "en_US", {{Part::body, 0, "1", std::string(5000, 'a')}}}, plain)
              .has_value());
  }
  SECTION("only an approved template is sent") {
    CHECK_FALSE(whatsapp::template_refusal(shipped).has_value());
    const auto paused = stored("order_shipped", k_shipped_components, store::ParameterFormat::positional,
                               store::TemplateStatus::paused);
    CHECK(whatsapp::template_refusal(paused).value() ==
          "the template order_shipped (en_US) is paused: WhatsApp sends only approved templates");
  }
}

TEST_CASE("template messages: the catalog's template actions checked against the stored templates", "[whatsapp]") {
  const auto catalog = catalog::Catalog::parse(
      R"({"name":"m","action_field":"act","fields":{"to":{"type":"string"},"order":{"type":"string","maxLength":20},)"
      R"("when":{"type":"string"},"link":{"type":"string"}},"actions":[)"
      R"({"name":"shipped","description":"d","kind":"template","required":["to","order","when","link"],)"
      R"("template":{"name":"order_shipped","language":"en_US","header":{"image":"link"},)"
      R"("body":{"1":"order","2":"when"},"buttons":{"1":{"1":"order"}}}},)"
      R"({"name":"gone","description":"d","kind":"template","template":{"name":"gone","language":"es"}},)"
      R"({"name":"halted","description":"d","kind":"template","required":["order"],)"
      R"("template":{"name":"halted","language":"en_US","body":{"1":"order"}}}]})",
      "t.json");
  REQUIRE(catalog.has_value());
  const std::vector<store::Template> templates{
      stored("order_shipped", k_shipped_components),
      stored("halted", R"([{"type":"BODY","text":"Order {{1}} on hold"}])", store::ParameterFormat::positional,
             store::TemplateStatus::disabled)};
  const auto problems = whatsapp::check_template_actions(*catalog, templates);
  CHECK(problems == std::vector<std::string>{
                        "shipped: body parameter {{2}} is filled from \"when\", which may be longer than 1024 "
                        "characters: give the field \"maxLength\" 1024 or less",
                        "gone: the template gone (es) is not among the account's templates (dispatchctl templates "
                        "list)",
                        "halted: the template halted (en_US) is disabled: WhatsApp sends only approved templates"});
  CHECK(whatsapp::check_template_actions(*catalog, {}).size() == 3);
}
