#pragma once
// Gmail's answer to users.messages.get?format=raw: the message's ids and labels and its RFC
// 5322 bytes, which connectors/email/ decodes.

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

namespace dispatchd::gmail {

// A messages.get?format=raw response: {"id","threadId","labelIds":[...],"historyId","internalDate",
// "sizeEstimate","raw"}. `internalDate` is a decimal string of milliseconds (Gmail's form) or a
// number. An error (one line) when the text is not such an object or `raw` is missing or not
// base64url. REQUIRES nothing of `json`: it is read strictly, at most 64 MiB, depth 8.
struct RawMessage {
  std::string id, thread_id;
  std::vector<std::string> label_ids;
  std::string history_id;
  std::int64_t internal_date_ms = 0;
  std::string bytes;  // raw, base64url-decoded
};
[[nodiscard]] std::expected<RawMessage, std::string> parse_raw_response(std::string_view json);

}  // namespace dispatchd::gmail
