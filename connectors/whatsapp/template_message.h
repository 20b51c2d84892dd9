#pragma once
// Sending a template message, without the I/O: the decided template (common/template_send.h)
// against the template as the business's account lists it (store/templates.h), and the
// catalog's template actions against the stored templates. Pure functions; safe from any
// thread. Shapes (Meta's Cloud API reference, "Template messages", and the requests public
// SDKs send, e.g. whatsapp-api-js's ButtonComponent/HeaderParameter):
//
//   "type":"template","template":{"name":"order_shipped","language":{"code":"en_US"},
//     "components":[
//       {"type":"header","parameters":[{"type":"image","image":{"link":"https://..."}}]},
//       {"type":"body","parameters":[{"type":"text","text":"A-1234"}]},
//         (a NAMED template: {"type":"text","parameter_name":"order_id","text":"A-1234"})
//       {"type":"button","sub_type":"url","index":"0","parameters":[{"type":"text","text":"A-1234"}]}]}
//
//   a template button   sub_type        its parameter
//   URL                 url             {"type":"text","text"}         (the URL's variable end)
//   OTP                 url             {"type":"text","text"}         (authentication's code)
//   QUICK_REPLY         quick_reply     {"type":"payload","payload"}   (comes back on a tap)
//   COPY_CODE           copy_code       {"type":"coupon_code","coupon_code"}

#include <cstddef>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.h"
#include "common/template_send.h"
#include "store/templates.h"

namespace dispatchd::whatsapp {

// Meta's limits on a text parameter's value: a header's, and a body's (32,768 when the body
// is the template's only component).
inline constexpr std::size_t k_max_header_parameter = 60;
inline constexpr std::size_t k_max_body_parameter = 1024;
inline constexpr std::size_t k_max_body_only_parameter = 32768;

// Why `stored` may not be sent now ("the template order_shipped (en_US) is paused"); nullopt
// when it is approved.
std::optional<std::string> template_refusal(const store::Template& stored);

// The "template" object of the Graph request: `send`'s values in the components `stored`
// takes, in its parameter format; refuses (one phrase) a parameter `stored` does not have,
// one it has that `send` leaves out, a value past Meta's limits, a header or body text with
// what WhatsApp refuses in it (template_send::text_parameter_problem), or a button whose
// type takes no parameter.
[[nodiscard]] std::expected<std::string, std::string> template_object(const template_send::TemplateSend& send,
                                                                      const store::Template& stored);

// What is wrong with the catalog's template actions against the stored templates: each one
// names its action ("order_update: ..."). For each action: the template exists in its
// language, is approved, every parameter it has is filled and none that it lacks, a media
// header gets a link and a text one no media, and each text value's field holds at most
// Meta's limit (its maxLength). Empty: all is well.
std::vector<std::string> check_template_actions(const catalog::Catalog& catalog,
                                                const std::vector<store::Template>& stored);

}  // namespace dispatchd::whatsapp
