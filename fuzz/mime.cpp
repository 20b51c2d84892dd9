// Fuzz target: the Gmail connector's MIME decoder as `dispatchctl inspect email` runs it:
// raw RFC 5322 bytes, or (input starting with '{') a messages.get?format=raw response whose
// base64url `raw` is decoded first; then the decoded Email as JSON.
// Invariants (connectors/email/email.h): text and full_text are valid UTF-8, text within
// max_text_bytes, the JSON is one strict object, the counterpart lower-case.

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include "common/strict_json.h"
#include "common/utf8.h"
#include "connectors/email/email.h"
#include "connectors/gmail/raw_message.h"
#include "fuzz/fuzz.h"

namespace {

using namespace dispatchd;

constexpr const char* k_target = "mime";

void check(std::string_view raw) {
  static const std::array<std::string, 1> own{"support@example.com"};
  // A small text cut so that the cutting at a UTF-8 boundary is exercised often.
  const email::DecodeLimits limits{.max_text_bytes = 2048};
  const auto email = email::decode(raw, own, limits);
  if (!email) return;
  fuzz::require(utf8::is_valid(email->text), k_target, "text is not valid UTF-8");
  fuzz::require(utf8::is_valid(email->full_text), k_target, "full_text is not valid UTF-8");
  fuzz::require(utf8::is_valid(email->subject), k_target, "the subject is not valid UTF-8");
  fuzz::require(email->text.size() <= limits.max_text_bytes, k_target, "text longer than max_text_bytes");
  const std::string json = email::to_json(*email);
  const auto parsed = json::parse_strict(json, json::ParseLimits{});
  fuzz::require(parsed.has_value() && parsed->document.IsObject(), k_target, "to_json is not one strict JSON object");
  const std::string counterpart = email::counterpart(*email);
  fuzz::require(
      std::none_of(counterpart.begin(), counterpart.end(), [](unsigned char c) { return std::isupper(c) != 0; }),
      k_target, "the counterpart is not lower-case");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input = fuzz::text(data, size);
  if (input.starts_with('{')) {
    const auto raw = gmail::parse_raw_response(input);
    if (raw) check(raw->bytes);
    return 0;
  }
  check(input);
  return 0;
}
