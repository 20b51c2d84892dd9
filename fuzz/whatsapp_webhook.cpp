// Fuzz target: a WhatsApp webhook POST as the channel takes it, raw body bytes in: the
// X-Hub-Signature-256 check over those bytes, then parse_webhook for our number. Also the
// verification handshake, with the same bytes as a query string.
// Invariants: a body verifies under its own signature and never under another secret's; a
// header taken from the input verifies only when it is the true signature; every parsed
// event has what the inbox needs (id, sender, timestamp) and the event cap holds.

#include <algorithm>
#include <cctype>
#include <string>

#include "connectors/whatsapp/handshake.h"
#include "connectors/whatsapp/signature.h"
#include "connectors/whatsapp/webhook.h"
#include "fuzz/fuzz.h"

namespace {

using namespace dispatchd;

constexpr std::string_view k_secret = "fuzz-app-secret";
constexpr std::string_view k_phone_number_id = "109876543210001";
constexpr std::string_view k_verify_token = "fuzz-verify-token";
constexpr const char* k_target = "whatsapp_webhook";

std::string normalized(std::string_view header) {
  while (!header.empty() && std::isspace(static_cast<unsigned char>(header.front()))) header.remove_prefix(1);
  while (!header.empty() && std::isspace(static_cast<unsigned char>(header.back()))) header.remove_suffix(1);
  std::string out(header);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

void check_signatures(std::string_view body) {
  const std::string signature = whatsapp::sign_body(body, k_secret);
  fuzz::require(whatsapp::verify_signature(body, signature, k_secret).has_value(), k_target,
                "a body does not verify under its own signature");
  const auto forged = whatsapp::verify_signature(body, whatsapp::sign_body(body, "another secret"), k_secret);
  fuzz::require(!forged && forged.error() == whatsapp::SignatureError::mismatch, k_target,
                "a body verifies under another secret");
  // The input's first line as the header an attacker sends with the rest as the body.
  const auto newline = body.find('\n');
  if (newline == std::string_view::npos) return;
  const std::string_view header = body.substr(0, newline);
  const std::string_view rest = body.substr(newline + 1);
  if (whatsapp::verify_signature(rest, header, k_secret))
    fuzz::require(normalized(header) == whatsapp::sign_body(rest, k_secret), k_target, "a wrong signature verifies");
}

void check_webhook(std::string_view body) {
  const whatsapp::WebhookLimits limits{.max_bytes = 256 * 1024, .max_depth = 20, .max_events = 50};
  const auto webhook = whatsapp::parse_webhook(body, k_phone_number_id, limits);
  if (!webhook) {
    fuzz::require(webhook.error().http_status() == 400 || webhook.error().http_status() == 413, k_target,
                  "a refusal that is neither 400 nor 413");
    return;
  }
  fuzz::require(webhook->messages.size() + webhook->statuses.size() <= limits.max_events, k_target,
                "more events than the cap");
  for (const auto& message : webhook->messages) {
    fuzz::require(!message.id.empty() && !message.from.empty(), k_target, "a message without id or sender");
    fuzz::require(message.phone_number_id == k_phone_number_id, k_target, "a message for another number");
    const bool readable = message.kind == whatsapp::MessageKind::text ||
                          message.kind == whatsapp::MessageKind::interactive ||
                          message.kind == whatsapp::MessageKind::button;
    fuzz::require(!message.answerable || readable, k_target, "an answerable message of a type the model cannot read");
  }
  for (const auto& status : webhook->statuses) fuzz::require(!status.id.empty(), k_target, "a status without id");
}

void check_handshake(std::string_view query) {
  const auto answer = whatsapp::answer_handshake(query, k_verify_token);
  if (!answer) return;
  fuzz::require(!answer->empty() && answer->size() <= 256, k_target, "a challenge out of bounds");
  for (const char c : *answer)
    fuzz::require(c > ' ' && c < 0x7f, k_target, "a challenge echoed with a byte that is not printable ASCII");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body = fuzz::text(data, size);
  check_signatures(body);
  check_webhook(body);
  check_handshake(body);
  return 0;
}
