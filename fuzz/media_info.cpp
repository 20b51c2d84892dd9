// Fuzz target: the Graph API's "Retrieve Media URL" answer (connectors/whatsapp/media_info.h),
// raw body bytes in, read for a Graph API on https and for one on http://127.0.0.1; and the
// input's first line as a URL for may_send_token_to.
// Invariants: an accepted answer has a url, mime_type and id, a sha256 of 64 lower-case hex
// digits, no negative file_size, and a url the token may go to; a refusal says why in one
// line; a URL the token may go to is printable ASCII without spaces or backslashes, has no
// userinfo, and is https:// or on the Graph API's own origin.

#include <string>

#include "connectors/whatsapp/media_info.h"
#include "fuzz/fuzz.h"

namespace {

using namespace dispatchd;

constexpr std::string_view k_graph = "https://graph.facebook.com/v21.0";
constexpr std::string_view k_fake_graph = "http://127.0.0.1:8089/v21.0";
constexpr std::string_view k_fake_origin = "http://127.0.0.1:8089";
constexpr const char* k_target = "media_info";

std::string lower_ascii(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

void check_url(std::string_view url) {
  for (const std::string_view base : {k_graph, k_fake_graph}) {
    if (!whatsapp::may_send_token_to(url, base)) continue;
    for (const char c : url) {
      const auto byte = static_cast<unsigned char>(c);
      fuzz::require(byte > ' ' && byte <= '~' && c != '\\', k_target,
                    "the token may go to a URL with a space, a control byte, a backslash or non-ASCII");
    }
    const std::string lower = lower_ascii(url);
    const bool https = lower.starts_with("https://");
    const std::size_t after_origin = k_fake_origin.size();
    const bool own_origin =
        base == k_fake_graph && lower.starts_with(k_fake_origin) &&
        (lower.size() == after_origin || std::string_view("/?#").find(lower[after_origin]) != std::string_view::npos);
    fuzz::require(https || own_origin, k_target, "the token may go over plain http to another origin");
    const std::string_view rest = url.substr(url.find("://") + 3);
    fuzz::require(rest.substr(0, rest.find_first_of("/?#")).find('@') == std::string_view::npos, k_target,
                  "the token may go to a URL with userinfo");
  }
}

void check_answer(std::string_view body) {
  for (const std::string_view base : {k_graph, k_fake_graph}) {
    const auto info = whatsapp::parse_media_info(body, base);
    if (!info) {
      fuzz::require(!info.error().message.empty() && info.error().message.find('\n') == std::string::npos, k_target,
                    "a refusal without a one-line message");
      continue;
    }
    fuzz::require(!info->url.empty() && !info->mime_type.empty() && !info->id.empty(), k_target,
                  "an answer accepted without url, mime_type or id");
    fuzz::require(info->sha256.size() == 64, k_target, "a sha256 that is not 64 digits");
    for (const char c : info->sha256) {
      fuzz::require((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'), k_target, "a sha256 not in lower-case hex");
    }
    fuzz::require(!info->file_size || *info->file_size >= 0, k_target, "a negative file_size");
    fuzz::require(whatsapp::may_send_token_to(info->url, base), k_target, "an accepted url the token may not go to");
    check_url(info->url);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input = fuzz::text(data, size);
  check_answer(input);
  check_url(input.substr(0, input.find('\n')));
  return 0;
}
