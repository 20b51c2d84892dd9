#pragma once
// How a kept file is handed to staff (GET /api/media/{id} and dispatchctl media get): its
// content type and Content-Disposition, from media/policy.h's serving(). An image or audio
// file whose declared and sniffed types are both on the safe list is shown inline with its
// declared type; anything else, SVG and HTML whatever they claim to be included, is a
// download. Every answer also carries the headers of k_media_headers: nothing served here is
// sniffed, scripted or framed by a browser.
//
// The file name a customer gave goes only into an RFC 5987 `filename*` (percent-encoded
// UTF-8): the plain `filename` is ours, "media-<id>", so no byte of theirs reaches a header
// unencoded. Pure.

#include <array>
#include <string>
#include <string_view>
#include <utility>

#include "store/media.h"

namespace dispatchd::staff {

struct MediaServing {
  std::string content_type;  // "image/jpeg", ...; application/octet-stream when none is readable
  std::string disposition;   // inline; filename="media-7" | attachment; filename="media-7"; filename*=UTF-8''...
  bool inline_shown = false;
};

MediaServing media_serving(const store::MediaRow& file);

inline constexpr std::array<std::pair<std::string_view, std::string_view>, 4> k_media_headers{{
    {"X-Content-Type-Options", "nosniff"},
    {"Content-Security-Policy", "default-src 'none'; sandbox"},
    {"Cache-Control", "private, no-store"},
    {"Cross-Origin-Resource-Policy", "same-origin"},
}};

}  // namespace dispatchd::staff
