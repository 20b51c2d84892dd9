#pragma once
// The Graph API's answer to `GET {graph_base_url}/{media-id}` (the Cloud API's "Retrieve
// Media URL"), the step before a customer's photo, voice note or document is downloaded:
//
//   {"messaging_product":"whatsapp","url":"<URL>","mime_type":"<MIME_TYPE>",
//    "sha256":"<HASH>","file_size":"<FILE_SIZE>","id":"<MEDIA_ID>"}
//
// The URL is short-lived and is fetched with the same bearer token as the Graph API, so
// where it points decides whether the token may go there (may_send_token_to). Untrusted
// input, bounded like every Graph answer: at most 64 KiB, nesting depth 32, strict JSON
// (common/strict_json.h). Pure; safe from any thread.

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

namespace dispatchd::whatsapp {

struct MediaInfo {
  std::string url;        // where to download the file; may_send_token_to holds for it
  std::string mime_type;  // as Meta declares it, e.g. "audio/ogg; codecs=opus"
  std::string sha256;     // of the file's bytes: 64 lower-case hex digits
  // The file's size in bytes. Documented as a string of digits; a JSON integer is read too.
  // nullopt when the answer leaves it out.
  std::optional<std::int64_t> file_size;
  std::string id;  // the media id
};

enum class MediaInfoErrorCode {
  too_large,    // over the 64 KiB a Graph answer may have
  not_json,     // not one strict JSON value
  wrong_shape,  // not the object above: a member missing, of another type or malformed
  bad_url,      // a url the token may not be sent to (may_send_token_to)
};

struct MediaInfoError {
  MediaInfoErrorCode code = MediaInfoErrorCode::not_json;
  std::string message;  // one line; quotes at most a short excerpt of the answer
};

// Reads a 2xx answer's body. `graph_base_url` is the account's (GraphAccount), for the
// url's check. Requires url, mime_type, sha256 and id as non-empty strings; sha256 as 64 hex
// digits (either case, returned lower-case); file_size, when present and not null, as a
// string of 1 to 18 ASCII digits or a non-negative JSON integer; messaging_product, when
// present, "whatsapp". Other members are ignored.
std::expected<MediaInfo, MediaInfoError> parse_media_info(std::string_view body, std::string_view graph_base_url);

// Whether the bearer token may go with a request to `url`: when `url` is https://, or when
// its scheme://host[:port] is exactly that of `graph_base_url` (letters in either case; a
// Graph API on http://127.0.0.1:PORT in tests). Refused whatever the scheme: a URL with a
// byte that is not printable ASCII or with a space or backslash, userinfo (`@`) in the
// authority, no host, a host with a byte outside letters, digits, `-`, `.` and `_` (or
// a bracketed IPv6 address), a port that is not 1 to 65535 in decimal without a leading
// zero; any scheme but http and https.
bool may_send_token_to(std::string_view url, std::string_view graph_base_url);

}  // namespace dispatchd::whatsapp
