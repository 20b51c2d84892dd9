#pragma once
#ifndef DISPATCHD_INTERNAL_CONNECTORS
#error "connectors/email/internal/ is private to connectors/: include the module's public headers instead"
#endif
// Charsets for the mail decoder (internal): body text to UTF-8 with GMime's iconv filter, and
// a repair GMime does not make to encoded words. REQUIRES: GMime initialized (decode() does it).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dispatchd::email::detail {

// `bytes` of a text part declared in `declared` (nullptr or "" when undeclared) as valid UTF-8.
// Labels whose real-world use is a superset are read as that superset (GB2312 as GB18030,
// EUC-KR as CP949, Shift_JIS as CP932, ISO-8859-1 as windows-1252, as browsers do); undeclared
// or US-ASCII 8-bit text is UTF-8 when it is valid, else windows-1252. Problems are appended
// to `defects` ("unknown charset x-foo", "invalid UTF-8 in body"); invalid bytes become U+FFFD.
std::string text_to_utf8(std::string_view bytes, const char* declared, std::vector<std::string>& defects);

// Senders write B-encoded words without their '=' padding ("=?uft-8?B?dGVzdGluZw?="), and
// GMime drops the unpadded last bytes: `raw` (a header's raw value) with the padding restored
// and folding removed, or nullopt when no word lacked it.
std::optional<std::string> repadded_encoded_words(std::string_view raw);

}  // namespace dispatchd::email::detail
