// Fuzz target: sniff() and the rules over its answer (media/sniff.h, media/policy.h): the
// input as a file's head, and again without its first line, which is the declared content
// type; its first 16 bytes as a size and a stored total for admit().
// Invariants: sniff reads the first k_sniff_bytes only; its answer is "" or its own essence;
// a head that starts with `<` (after a byte order mark and whitespace) never sniffs as a
// type serving() shows inline, whatever was declared; serving() is inline only for a
// declared and a sniffed type of the kind it shows; compare() of a type with itself is same,
// against "" unknown; essence() is lower-case and idempotent; SVG is never an image;
// admit() lets nothing through over a cap or the total.

#include <algorithm>
#include <cstring>
#include <string>

#include "fuzz/fuzz.h"
#include "media/policy.h"
#include "media/sniff.h"

namespace {

using namespace dispatchd;
using media::Disposition;

constexpr const char* k_target = "media_sniff";

// Every type serving() may show inline, and the active ones it must not.
constexpr std::string_view k_declared[] = {
    "image/jpeg",
    "image/png",
    "image/gif",
    "image/webp",
    "image/bmp",
    "audio/ogg; codecs=opus",
    "audio/mpeg",
    "audio/mp4",
    "audio/aac",
    "audio/amr",
    "audio/wav",
    "audio/webm",
    "text/html",
    "image/svg+xml",
    "application/xml",
    "application/octet-stream",
    "",
};

bool starts_markup(std::string_view head) {
  head = head.substr(0, media::k_sniff_bytes);
  if (head.starts_with("\xEF\xBB\xBF")) head.remove_prefix(3);
  while (!head.empty() && std::string_view("\t\n\f\r ").find(head.front()) != std::string_view::npos) {
    head.remove_prefix(1);
  }
  return head.starts_with('<');
}

void check_sniff(std::string_view head, std::string_view declared) {
  const std::string_view sniffed = media::sniff(head);
  fuzz::require(sniffed == media::sniff(head.substr(0, media::k_sniff_bytes)), k_target,
                "sniff read past its first k_sniff_bytes");
  fuzz::require(sniffed.empty() || media::essence(sniffed) == sniffed, k_target, "a sniffed type that is no essence");
  fuzz::require(
      media::compare(sniffed, sniffed) == (sniffed.empty() ? media::TypeMatch::unknown : media::TypeMatch::same),
      k_target, "a sniffed type that is not the same as itself");
  fuzz::require(media::compare(declared, "") == media::TypeMatch::unknown, k_target,
                "a comparison with nothing sniffed that is not unknown");
  const bool markup = starts_markup(head);
  for (const std::string_view type : k_declared) {
    const Disposition disposition = media::serving(type, sniffed);
    if (markup) fuzz::require(disposition == Disposition::attachment, k_target, "markup served inline");
  }
  const Disposition disposition = media::serving(declared, sniffed);
  if (markup) fuzz::require(disposition == Disposition::attachment, k_target, "markup served inline");
  if (disposition == Disposition::inline_image) {
    fuzz::require(
        media::kind_of(declared) == common::MediaKind::image && media::kind_of(sniffed) == common::MediaKind::image,
        k_target, "inline as an image what is not declared and sniffed as one");
  }
  if (disposition == Disposition::inline_audio) {
    fuzz::require(media::kind_of(declared) == common::MediaKind::audio && !sniffed.empty(), k_target,
                  "inline as audio what is not declared as audio or shows nothing");
  }
}

void check_essence(std::string_view declared) {
  const std::string essence = media::essence(declared);
  fuzz::require(media::essence(essence) == essence, k_target, "essence is not idempotent");
  for (const char c : essence) {
    fuzz::require(!(c >= 'A' && c <= 'Z') && c != ';' && c > ' ', k_target,
                  "an essence with upper case, a parameter or whitespace");
  }
  if (essence == "image/svg+xml") {
    fuzz::require(media::kind_of(declared) == common::MediaKind::document, k_target, "SVG classified as an image");
  }
}

void check_admit(const std::uint8_t* data, std::size_t size) {
  if (size < 16) return;
  std::int64_t file = 0;
  std::int64_t stored = 0;
  std::memcpy(&file, data, sizeof file);
  std::memcpy(&stored, data + 8, sizeof stored);
  const media::Limits limits;
  const auto kind = static_cast<common::MediaKind>(data[0] % 5);
  if (media::admit(limits, kind, file, stored) != media::SizeVerdict::fits) return;
  fuzz::require(file >= 0 && stored >= 0 && file <= media::cap(limits, kind), k_target, "a file over its cap fits");
  fuzz::require(stored <= limits.total && file <= limits.total - stored, k_target, "a file over the total fits");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input = fuzz::text(data, size);
  const std::string_view declared = input.substr(0, std::min(input.find('\n'), std::size_t{200}));
  check_sniff(input, declared);
  check_sniff(input.substr(std::min(declared.size() + 1, input.size())), declared);
  check_essence(declared);
  check_admit(data, size);
  return 0;
}
